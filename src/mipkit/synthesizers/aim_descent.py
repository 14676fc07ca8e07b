"""AIM's refit in NumPy: ``mbi``'s ``MirrorDescent().estimate`` step for step, compiling nothing.

After each measurement AIM refits its graphical model: mirror descent on the log-potentials of the
measured cliques (Algorithm 1 of McKenna, Sheldon & Miklau, ICML 2019), with ``mbi``'s Armijo step rule
(start at ``2 / (L total)``, ``L`` the loss's Lipschitz constant; a step that decreases the squared loss
enough is taken and the step grows by 1%, otherwise it is refused and the step halves), warm-started from
the last model's potentials, ``iters`` steps rounded up to ``mbi``'s blocks of 50. The marginals come from
HUGIN belief propagation on the junction tree of the measured cliques (``mbi``'s oracle on a CPU: log-space
messages with belief subtraction, dense tables). ``mbi`` compiles the whole loop into one XLA program for
every model structure, and AIM's model gains a clique every round, so most of an AIM fit went into
compiling (``benchmarks/aim_round_iters.py --refit mbi``); here the same arithmetic runs in NumPy, on
tables laid out once per structure (:class:`_Plan`).

What differs from ``mbi`` is the order of the arithmetic, not the steps: a step's marginals and loss at the
current potentials are those the step before computed (the potentials are the ones it tried or the ones it
kept), so each step runs the oracle once, not twice; a node that has heard from all its neighbours sends its
messages from one exponential of its table, and HUGIN's belief subtraction is done on the separator; and
the arithmetic is float64, where ``mbi``'s is float32 unless JAX's 64-bit mode is on. With that mode on,
50 steps give ``mbi``'s potentials and marginals within a relative 1e-9, and 1,000 steps its estimate
within 1e-5 of the total in every cell (``tests/synthesize/test_aim_descent.py``).

The result is ``mbi``'s ``MarkovRandomField`` (its tables are NumPy arrays), which samples and projects as
one that ``mbi`` fitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["mirror_descent"]

Clique = tuple


def _spread(src: Clique, dst: Clique, sizes: dict) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """``(axes, shape)``: ``x.transpose(axes).reshape(shape)`` (no transpose when ``axes`` is None) is a
    table over ``src`` (a subset of ``dst``) as a view that broadcasts against tables over ``dst``."""
    axes = tuple(sorted(range(len(src)), key=lambda i: dst.index(src[i])))
    shape = tuple(sizes[a] if a in src else 1 for a in dst)
    return (None if axes == tuple(range(len(src))) else axes), shape


def _broadcast(x: np.ndarray, spec: tuple) -> np.ndarray:
    """``x`` laid out by a :func:`_spread` spec."""
    axes, shape = spec
    return (x if axes is None else x.transpose(axes)).reshape(shape)


def _summing(src: Clique, dst: Clique, sizes: dict) -> tuple | None:
    """How to sum a table over ``src`` onto ``dst`` (a subset), axes in ``dst``'s order; None when they are
    the same. The summed axes that lead or trail the table go by products with vectors of ones (no copy);
    those between, after them, by a product of the smaller table laid out with them first (``einsum`` and
    ``sum`` over inner axes of a large table take several times longer)."""
    if tuple(src) == tuple(dst):
        return None
    shape = [sizes[a] for a in src]
    summed = [a not in dst for a in src]
    lead = next((k for k, s in enumerate(summed) if not s), len(src))
    trail = next((k for k, s in enumerate(reversed(summed)) if not s), 0)
    inner = list(src[lead : len(src) - trail])
    cells = math.prod(shape)
    head, tail = math.prod(shape[:lead]), math.prod(shape[len(src) - trail :])
    ones_head = np.ones(head) if lead else None
    ones_tail = np.ones(tail) if trail else None
    middle = [k for k, a in enumerate(inner) if a not in dst]
    kept = [a for a in inner if a in dst]
    inner_shape = [sizes[a] for a in inner]
    if middle:
        axes = (*middle, *[k for k, a in enumerate(inner) if a in dst])
        rest = math.prod(inner_shape[k] for k in middle)
        mid = (axes, rest, np.ones(rest))
    else:
        mid = None
    turn = None if kept == list(dst) else [kept.index(a) for a in dst]
    out_shape = tuple(sizes[a] for a in kept)
    return ones_head, ones_tail, cells // max(head * tail, 1), inner_shape, mid, out_shape, turn


def _sum(x: np.ndarray, spec: tuple | None) -> np.ndarray:
    """``x`` summed by a :func:`_summing` spec."""
    if spec is None:
        return x
    ones_head, ones_tail, inner_cells, inner_shape, mid, out_shape, turn = spec
    x = x.reshape(-1)
    if ones_tail is not None:
        x = x.reshape(-1, ones_tail.size) @ ones_tail
    if ones_head is not None:
        x = ones_head @ x.reshape(ones_head.size, -1)
    if mid is not None:
        axes, rest, ones = mid
        x = ones @ np.ascontiguousarray(x.reshape(inner_shape).transpose(axes)).reshape(rest, -1)
    x = x.reshape(out_shape)
    return x if turn is None else x.transpose(turn)


def _logsumexp(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """``log(sum(exp(x)))`` over ``axis`` (kept axes in order), shifted by the maxima as JAX's is."""
    top = x.max(axis=axis, keepdims=True)
    out = np.log(np.exp(x - top).sum(axis=axis)) + top.reshape(
        [n for i, n in enumerate(x.shape) if i not in axis]
    )
    return out


#: A sum of exponentials below this falls back to a shift of its own (float64 underflows near 1e-308).
_TINY = 1e-250


def _exp(x: np.ndarray) -> tuple[np.ndarray, float]:
    """``(exp(x - max), max)``."""
    top = float(x.max())
    return np.exp(x - top), top


def _parent(cliques: Sequence[Clique], clique: Clique, size: Any) -> Clique:
    """``mbi``'s choice of the clique that holds ``clique``'s marginal: the smallest containing it, the
    first of the smallest."""
    return min((c for c in cliques if set(clique) <= set(c)), key=size)


class _Plan:
    """The layout of one model structure: the junction tree of the potentials' cliques, the order of its
    messages, and where each potential, measurement and marginal goes (computed once per refit)."""

    def __init__(self, domain: Any, cliques: Sequence[Clique]) -> None:
        from mbi.clique_utils import reverse_clique_mapping
        from mbi.junction_tree import make_junction_tree, maximal_cliques, message_passing_order

        self.cliques = tuple(cliques)
        self.sizes = {a: domain.size((a,)) for a in domain.attributes}
        tree = make_junction_tree(domain, self.cliques)[0]
        self.nodes = maximal_cliques(tree)
        # a node's table has its largest attributes last: NumPy's loops run along the last axis, and a
        # short one (Adult's two-valued columns) makes every pass over the table several times slower
        lay = {node: tuple(sorted(node, key=lambda a: self.sizes[a])) for node in self.nodes}
        self.shapes = {cl: tuple(self.sizes[a] for a in cl) for cl in self.cliques}
        # the cliques' tables side by side in one vector, each as a slice
        ends = np.cumsum([math.prod(self.shapes[cl]) for cl in self.cliques])
        self.slices = {
            cl: slice(int(e - math.prod(self.shapes[cl])), int(e))
            for cl, e in zip(self.cliques, ends, strict=True)
        }
        self.cells = int(ends[-1]) if len(ends) else 0
        self.tables = {node: tuple(self.sizes[a] for a in lay[node]) for node in self.nodes}
        mapping = reverse_clique_mapping(self.nodes, self.cliques, domain=domain)
        self.expand = {
            node: [(cl, _spread(cl, lay[node], self.sizes)) for cl in mapping[node]] for node in self.nodes
        }
        self.messages = []
        for i, j in message_passing_order(tree):
            shared = tuple(a for a in lay[i] if a in j)
            elim = tuple(k for k, a in enumerate(lay[i]) if a not in j)
            back = tuple(a for a in lay[j] if a in i)  # the message from j: the same attributes, j's order
            turn = None if back == shared else tuple(back.index(a) for a in shared)
            step = (elim, _summing(lay[i], shared, self.sizes), turn, _spread(shared, lay[j], self.sizes))
            self.messages.append((i, j, *step))
        holder = {cl: cl if cl in self.nodes else _parent(self.nodes, cl, domain.size) for cl in self.cliques}
        self.held = {
            node: [(cl, _summing(lay[node], cl, self.sizes)) for cl in self.cliques if holder[cl] == node]
            for node in self.nodes
        }

    def tables_of(self, flat: np.ndarray) -> dict[Clique, np.ndarray]:
        """The cliques' tables (views) in a vector laid out by :attr:`slices`."""
        return {cl: flat[sl].reshape(self.shapes[cl]) for cl, sl in self.slices.items()}

    def marginals(self, theta: np.ndarray, total: float) -> np.ndarray:
        """The model's marginals of the potentials' cliques, scaled to ``total`` (HUGIN, as ``mbi``), from
        and to vectors laid out by :attr:`slices`."""
        potentials = self.tables_of(theta)
        beliefs = {}
        for node, parts in self.expand.items():
            b = np.zeros(self.tables[node])
            for cl, spec in parts:
                b += _broadcast(potentials[cl], spec)
            beliefs[node] = b
        final: dict[Clique, tuple[np.ndarray, float]] = {}
        sent: dict[tuple, np.ndarray] = {}
        for i, j, elim, keep, turn, spec in self.messages:
            back = sent.get((j, i))
            if back is None:  # i has heard from every neighbour but j
                msg = _shifted_logsumexp(_exp(beliefs[i]), beliefs[i], elim, keep)
            else:  # i has heard from all: HUGIN's belief subtraction, on the separator
                msg = _from_final(final, beliefs, i, elim, keep) - (
                    back if turn is None else back.transpose(turn)
                )
            sent[(i, j)] = msg
            beliefs[j] += _broadcast(msg, spec)
        out = np.empty(self.cells)
        for node, held in self.held.items():
            if held:
                exp, _ = final[node] if node in final else _exp(beliefs[node])
                scale = total / exp.sum()
                for cl, spec in held:
                    np.multiply(_sum(exp, spec), scale, out=out[self.slices[cl]].reshape(self.shapes[cl]))
        return out


def _from_final(final: dict, beliefs: dict, node: Clique, elim: tuple[int, ...], keep: tuple) -> np.ndarray:
    """``logsumexp`` of ``node``'s final belief over ``elim``, from one exponential of the whole table
    shared by every message the node sends once it has heard from all."""
    if node not in final:
        final[node] = _exp(beliefs[node])
    return _shifted_logsumexp(final[node], beliefs[node], elim, keep)


def _shifted_logsumexp(exp: tuple, x: np.ndarray, elim: tuple[int, ...], keep: tuple) -> np.ndarray:
    """``logsumexp`` of ``x`` over ``elim`` from ``exp = (exp(x - max), max)``, the whole table shifted by
    its maximum; a slice too far below the maximum for that (its sum underflows) is shifted by its own."""
    sums = _sum(exp[0], keep)
    if sums.size and sums.min() > _TINY:
        return np.log(sums) + exp[1]
    return _logsumexp(x, elim)


class _Loss:
    """The squared loss ``sum_M ||(mu_M - y_M) / sigma_M||^2 / 2`` of the measurements and its gradient,
    over the cliques' marginals side by side in one vector (:attr:`_Plan.slices`): each measurement's
    marginal summed out of the smallest clique that holds it, as ``mbi``'s ``CliqueVector.project``, all of
    them by one sparse 0-1 matrix."""

    def __init__(self, domain: Any, plan: _Plan, measurements: Sequence[Any]) -> None:
        from scipy import sparse

        rows, cols, ys, invs, start = [], [], [], [], 0
        for m in measurements:
            cl = tuple(m.clique)
            holder = cl if cl in plan.cliques else _parent(plan.cliques, cl, domain.size)
            grid = np.indices(plan.shapes[holder]).reshape(len(holder), -1)
            shape = [plan.sizes[a] for a in cl]
            rows.append(start + np.ravel_multi_index([grid[holder.index(a)] for a in cl], shape))
            cols.append(np.arange(plan.slices[holder].start, plan.slices[holder].stop))
            ys.append(np.asarray(m.noisy_measurement, dtype=float).ravel())
            invs.append(np.full(ys[-1].size, 1.0 / max(float(m.stddev), 1e-12)))
            start += ys[-1].size
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        self.project = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(start, plan.cells))
        self.spread = self.project.T.tocsr()
        self.y, self.inv = np.concatenate(ys), np.concatenate(invs)

    def __call__(self, mu: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss at the marginals ``mu`` and the residuals ``(mu_M - y_M) / sigma_M``."""
        diff = (self.project @ mu - self.y) * self.inv
        return 0.5 * float(diff @ diff), diff

    def grad(self, diff: np.ndarray) -> np.ndarray:
        """The loss's gradient in the cliques' marginals from the residuals."""
        return self.spread @ (diff * self.inv)


def _warm_potentials(domain: Any, plan: _Plan, warm: Any) -> np.ndarray:
    """The warm model's potentials re-expressed on the plan's cliques (``mbi``'s ``CliqueVector.expand``):
    each old table added into the smallest new clique that contains it; zeros without a warm model."""
    out = np.zeros(plan.cells)
    if warm is None:
        return out
    from mbi.clique_utils import reverse_clique_mapping

    pots, tables = warm.potentials, plan.tables_of(out)
    mapping = reverse_clique_mapping(plan.cliques, pots.cliques, domain=domain)
    for cl in plan.cliques:
        for old in mapping[cl]:
            table = np.asarray(pots.tables[old].values, dtype=float)
            tables[cl] += _broadcast(table, _spread(old, cl, plan.sizes))
    return out


def _model(domain: Any, potentials: dict, marginals: dict, total: float) -> Any:
    """``mbi``'s ``MarkovRandomField`` of NumPy tables."""
    from mbi.clique_vector import CliqueVector
    from mbi.factor import Factor
    from mbi.markov_random_field import MarkovRandomField

    def vector(tables: dict) -> Any:
        return CliqueVector(
            domain, list(tables), {cl: Factor(domain.project(cl), v) for cl, v in tables.items()}
        )

    return MarkovRandomField(potentials=vector(potentials), marginals=vector(marginals), total=total)


def mirror_descent(domain: Any, measurements: Sequence[Any], iters: int, warm: Any = None) -> Any:
    """The model ``mbi``'s ``MirrorDescent().estimate(domain, measurements, iters=iters,
    warm_start=warm)`` fits (module docstring), in NumPy.

    Parameters
    ----------
    domain : mbi.Domain
        The attributes and their sizes.
    measurements : list of mbi.LinearMeasurement
        Noisy marginals (identity queries) with their noise's standard deviation.
    iters : int
        Mirror-descent steps, rounded up to a multiple of ``mbi``'s block of 50 as ``mbi`` runs them.
    warm : mbi.MarkovRandomField, optional
        The model whose potentials start the descent.

    Returns
    -------
    mbi.MarkovRandomField
    """
    from mbi.clique_utils import maximal_subset
    from mbi.estimation import CALLBACK_EVERY, minimum_variance_unbiased_total
    from mbi.marginal_loss import calculate_l2_lipschitz_from_metadata

    measurements = list(measurements)
    total = minimum_variance_unbiased_total(measurements)
    cliques = maximal_subset([tuple(m.clique) for m in measurements])
    plan = _Plan(domain, cliques)
    loss_fn = _Loss(domain, plan, measurements)
    alpha = 2.0 / (calculate_l2_lipschitz_from_metadata(domain, measurements) * total)
    theta = _warm_potentials(domain, plan, warm)
    mu = plan.marginals(theta, total)
    loss, diff = loss_fn(mu)
    for _ in range(math.ceil(iters / CALLBACK_EVERY) * CALLBACK_EVERY):
        grad = loss_fn.grad(diff)
        theta2 = theta - alpha * grad
        mu2 = plan.marginals(theta2, total)
        loss2, diff2 = loss_fn(mu2)
        if loss - loss2 >= 0.5 * alpha * float(
            grad @ (mu - mu2)
        ):  # taken: its marginals, loss are the next's
            theta, mu, loss, diff, alpha = theta2, mu2, loss2, diff2, 1.01 * alpha
        else:
            alpha = 0.5 * alpha
    return _model(domain, plan.tables_of(theta), plan.tables_of(mu), total)
