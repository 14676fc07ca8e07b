"""AIM's refit in NumPy: ``mbi``'s ``MirrorDescent().estimate`` step for step, compiling nothing.

After each measurement AIM refits its graphical model: mirror descent on the log-potentials of the
measured cliques (Algorithm 1 of McKenna, Sheldon & Miklau, ICML 2019), with ``mbi``'s Armijo step rule
(start at ``2 / (L total)``, ``L`` the loss's Lipschitz constant; a step that decreases the squared loss
enough is taken and the step grows by 1%, otherwise it is refused and the step halves), warm-started from
the last model's potentials, ``iters`` steps rounded up to ``mbi``'s blocks of 50. The marginals come from
HUGIN belief propagation on the junction tree of the measured cliques (``mbi``'s oracle on a CPU: log-space
messages with belief subtraction, dense tables). ``mbi`` compiles the whole loop into one XLA program for
every model structure, and AIM's model gains a clique every round, so most of an AIM fit went into
compiling (``benchmarks/aim_refit_profile.py``); here the same arithmetic runs in NumPy in float64 on
tables laid out once per structure (:class:`_Plan`).

Two things differ from ``mbi`` and change nothing in the result: a step's marginals at the current
potentials are those of the step before (the potentials are either the ones that step tried or the ones it
kept, whose marginals it computed), so each step runs the oracle once instead of twice; and ``mbi`` runs in
float32 unless JAX's 64-bit mode is on. With it on, the two give the same marginals within a relative
1e-9 (``tests/synthesize/test_aim_descent.py``).

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


def _broadcast(x: np.ndarray, src: Clique, dst: Clique) -> np.ndarray:
    """The table ``x`` over ``src`` as a view that broadcasts against tables over ``dst``."""
    axes = sorted(range(len(src)), key=lambda i: dst.index(src[i]))
    shape = [1] * len(dst)
    for i in axes:
        shape[dst.index(src[i])] = x.shape[i]
    return x.transpose(axes).reshape(shape)


def _sum_to(x: np.ndarray, src: Clique, dst: Clique) -> np.ndarray:
    """The table ``x`` over ``src`` summed onto ``dst`` (a subset), axes in ``dst``'s order."""
    out = x.sum(axis=tuple(i for i, a in enumerate(src) if a not in dst)) if len(dst) < len(src) else x
    kept = [a for a in src if a in dst]
    return out if kept == list(dst) else out.transpose([kept.index(a) for a in dst])


def _logsumexp(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """``log(sum(exp(x)))`` over ``axis`` (kept axes in order), shifted by the maxima as JAX's is."""
    top = x.max(axis=axis, keepdims=True)
    out = np.log(np.exp(x - top).sum(axis=axis)) + top.reshape(
        [n for i, n in enumerate(x.shape) if i not in axis]
    )
    return out


def _parent(cliques: Sequence[Clique], clique: Clique, size: Any) -> Clique:
    """``mbi``'s choice of the clique that holds ``clique``'s marginal: the smallest containing it, the
    first of the smallest."""
    return min((c for c in cliques if set(clique) <= set(c)), key=size)


class _Plan:
    """The layout of one model structure: the junction tree of the potentials' cliques, the order of its
    messages, and where each potential, measurement and marginal goes."""

    def __init__(self, domain: Any, cliques: Sequence[Clique], measured: Sequence[Clique]) -> None:
        from mbi.clique_utils import reverse_clique_mapping
        from mbi.junction_tree import make_junction_tree, maximal_cliques, message_passing_order

        self.cliques = tuple(cliques)
        tree = make_junction_tree(domain, self.cliques)[0]
        self.order = message_passing_order(tree)
        self.nodes = maximal_cliques(tree)
        self.shapes = {cl: tuple(domain.size(a) for a in cl) for cl in (*self.nodes, *self.cliques)}
        mapping = reverse_clique_mapping(self.nodes, self.cliques, domain=domain)
        self.expand = {node: mapping[node] for node in self.nodes}
        self.holder = {
            cl: cl if cl in self.nodes else _parent(self.nodes, cl, domain.size) for cl in self.cliques
        }
        self.measured = {
            cl: cl if cl in self.cliques else _parent(self.cliques, cl, domain.size) for cl in measured
        }

    def marginals(self, potentials: dict[Clique, np.ndarray], total: float) -> dict[Clique, np.ndarray]:
        """The model's marginals of the potentials' cliques, scaled to ``total`` (HUGIN, as ``mbi``)."""
        beliefs = {}
        for node in self.nodes:
            b = np.zeros(self.shapes[node])
            for cl in self.expand[node]:
                b = b + _broadcast(potentials[cl], cl, node)
            beliefs[node] = b
        messages: dict[tuple, tuple[Clique, np.ndarray]] = {}
        for i, j in self.order:
            tau = beliefs[i]
            if (j, i) in messages:
                tau = tau - _broadcast(messages[(j, i)][1], messages[(j, i)][0], i)
            shared = tuple(a for a in i if a in j)
            msg = _logsumexp(tau, tuple(k for k, a in enumerate(i) if a not in j))
            messages[(i, j)] = (shared, msg)
            beliefs[j] = beliefs[j] + _broadcast(msg, shared, j)
        log_total = math.log(total)
        probs = {}
        for node, b in beliefs.items():
            flat = b.ravel()
            top = flat.max()
            norm = math.log(np.exp(flat - top).sum()) + top
            probs[node] = np.exp(b + (log_total - norm))
        return {cl: _sum_to(probs[self.holder[cl]], self.holder[cl], cl) for cl in self.cliques}


class _Loss:
    """The squared loss ``sum_M ||(mu_M - y_M) / sigma_M||^2 / 2`` of the measurements and its gradient
    in the potentials' cliques."""

    def __init__(self, plan: _Plan, measurements: Sequence[Any]) -> None:
        self.plan = plan
        self.terms = [
            (
                tuple(m.clique),
                plan.measured[tuple(m.clique)],
                np.asarray(m.noisy_measurement, dtype=float).reshape(plan_shape(plan, m)),
                max(float(m.stddev), 1e-12),
            )
            for m in measurements
        ]

    def __call__(self, mu: dict[Clique, np.ndarray], grad: bool = False) -> tuple[float, dict | None]:
        loss, g = 0.0, None
        if grad:
            g = {cl: np.zeros(x.shape) for cl, x in mu.items()}
        for cl, holder, y, sd in self.terms:
            diff = (_sum_to(mu[holder], holder, cl) - y) / sd
            loss += 0.5 * float(np.vdot(diff, diff))
            if g is not None:
                g[holder] = g[holder] + _broadcast(diff / sd, cl, holder)
        return loss, g


def plan_shape(plan: _Plan, m: Any) -> tuple[int, ...]:
    """The shape of measurement ``m``'s marginal."""
    holder = plan.measured[tuple(m.clique)]
    sizes = dict(zip(holder, plan.shapes[holder], strict=True))
    return tuple(sizes[a] for a in m.clique)


def _warm_potentials(domain: Any, cliques: Sequence[Clique], warm: Any) -> dict[Clique, np.ndarray]:
    """The warm model's potentials re-expressed on ``cliques`` (``mbi``'s ``CliqueVector.expand``):
    each old table added into the smallest new clique that contains it; zeros without a warm model."""
    out = {cl: np.zeros(tuple(domain.size(a) for a in cl)) for cl in cliques}
    if warm is None:
        return out
    from mbi.clique_utils import reverse_clique_mapping

    pots = warm.potentials
    mapping = reverse_clique_mapping(cliques, pots.cliques, domain=domain)
    for cl in cliques:
        for old in mapping[cl]:
            out[cl] = out[cl] + _broadcast(np.asarray(pots.tables[old].values, dtype=float), old, cl)
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
    plan = _Plan(domain, cliques, [tuple(m.clique) for m in measurements])
    loss_fn = _Loss(plan, measurements)
    alpha = 2.0 / (calculate_l2_lipschitz_from_metadata(domain, measurements) * total)
    theta = _warm_potentials(domain, cliques, warm)
    mu = plan.marginals(theta, total)
    for _ in range(math.ceil(iters / CALLBACK_EVERY) * CALLBACK_EVERY):
        loss, grad = loss_fn(mu, grad=True)
        theta2 = {cl: theta[cl] - alpha * grad[cl] for cl in cliques}
        mu2 = plan.marginals(theta2, total)
        loss2, _ = loss_fn(mu2)
        dot = sum(float(np.vdot(grad[cl], mu[cl] - mu2[cl])) for cl in cliques)
        if loss - loss2 >= 0.5 * alpha * dot:
            theta, mu, alpha = theta2, mu2, 1.01 * alpha
        else:
            alpha = 0.5 * alpha
    return _model(domain, theta, mu, total)
