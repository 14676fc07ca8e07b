"""The fitted model's marginals of AIM's candidate cliques, in NumPy.

Each round AIM scores every candidate clique by its marginal under the current model. ``mbi`` computes a
marginal its model does not hold (no clique of the junction tree contains it) by variable elimination,
compiled by JAX for each clique and each model structure: as the model gains a clique every round, every
candidate's program is compiled again, round after round, and the compilations are most of a fit's time
(``benchmarks/aim_round_iters.py``). Here the same variable elimination (log-space factors, ``mbi``'s
greedy elimination order) runs in NumPy, which compiles nothing; a marginal the model holds is summed out
of its clique marginal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special

__all__ = ["model_marginals"]

Factor = tuple[tuple, np.ndarray]  # (attributes, log-values with one axis per attribute)


def _product(factors: Sequence[Factor]) -> Factor:
    """The sum of log-factors over the union of their attributes (broadcast)."""
    attrs: list = []
    for a, _ in factors:
        attrs += [x for x in a if x not in attrs]
    out = np.zeros([1] * len(attrs))
    for a, v in factors:
        order = sorted(range(len(a)), key=lambda i: attrs.index(a[i]))
        shape = [1] * len(attrs)
        for i in order:
            shape[attrs.index(a[i])] = v.shape[i]
        out = out + np.transpose(v, order).reshape(shape)
    return tuple(attrs), out


def _eliminate(domain: Any, factors: list[Factor], clique: tuple, total: float) -> np.ndarray:
    """The marginal of ``clique`` (``mbi``'s datavector order) of the model with log-potentials
    ``factors``, scaled to ``total``."""
    from mbi.junction_tree import greedy_order

    elim = [a for a in domain.attributes if a not in clique]
    order, _ = greedy_order(domain, [a for a, _ in factors] + [clique], elim=elim)
    psi = list(factors)
    for z in order:
        attrs, v = _product([f for f in psi if z in f[0]])
        psi = [f for f in psi if z not in f[0]]
        ax = attrs.index(z)
        psi.append((attrs[:ax] + attrs[ax + 1 :], special.logsumexp(v, axis=ax)))
    attrs, v = _product(psi)
    v = np.broadcast_to(v, [domain.size(a) if a in attrs else 1 for a in attrs])
    missing = [a for a in clique if a not in attrs]  # a column no potential touches: uniform
    v = v.reshape(v.shape + (1,) * len(missing))
    v = np.broadcast_to(v, v.shape[: len(attrs)] + tuple(domain.size(a) for a in missing))
    axes = [(*attrs, *missing).index(a) for a in clique]
    logp = np.transpose(v, axes)
    return (np.exp(logp - special.logsumexp(logp)) * total).ravel()


def _held(marginals: Any, clique: tuple) -> np.ndarray | None:
    """``clique``'s marginal summed out of a clique marginal of the model that contains it, or None."""
    for cl in marginals.cliques:
        if set(clique) <= set(cl):
            table = marginals.tables[cl]
            attrs = tuple(table.domain.attributes)
            v = np.asarray(table.values, dtype=float)
            v = v.sum(axis=tuple(i for i, a in enumerate(attrs) if a not in clique))
            kept = [a for a in attrs if a in clique]
            return np.transpose(v, [kept.index(a) for a in clique]).ravel()
    return None


def model_marginals(model: Any, cliques: Sequence[tuple]) -> dict[tuple, np.ndarray]:
    """The marginal of each of ``cliques`` under ``model`` (an ``mbi`` ``MarkovRandomField``), as the
    ``datavector()`` of ``model.project(clique)``."""
    pots = model.potentials
    factors = [
        (tuple(pots.tables[cl].domain.attributes), np.asarray(pots.tables[cl].values, dtype=float))
        for cl in pots.cliques
    ]
    out = {}
    for clique in cliques:
        held = _held(model.marginals, tuple(clique))
        out[tuple(clique)] = (
            held if held is not None else _eliminate(model.domain, factors, tuple(clique), float(model.total))
        )
    return out
