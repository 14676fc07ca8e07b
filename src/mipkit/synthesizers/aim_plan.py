"""AIM's workload and its budget rule, as pure functions (McKenna et al., VLDB 2022; private-pgm's
``mechanisms/aim.py``).

* :func:`workload`: the marginals the synthetic table should answer well, with their weights. Without a
  target, every pair of columns (weight 1). With a target column, the paper's target workload: every
  3-way marginal that contains the target (the pairs containing it where the table has fewer than three
  columns), leaving out those of more than ``max_cells`` cells as the reference's command line does.
* :func:`candidates`: the downward closure of the workload, each clique scored by
  ``sum_w weight_w |clique & w|``: the weight of its error in the exponential mechanism's selection.
* :func:`first_round` and :func:`next_round`: the budget. A horizon of ``T`` rounds (``16 d`` by default)
  sets the starting noise: each round spends ``rho / T``, 90% on the Gaussian measurement
  (``sigma = sqrt(T / (2 * 0.9 * rho))``) and 10% on the selection (``epsilon = sqrt(8 * 0.1 * rho / T)``,
  the exponential mechanism being ``epsilon^2 / 8``-zCDP); the 1-way marginals are measured first at that
  ``sigma``. A round whose measurement barely moves the model halves ``sigma`` and doubles ``epsilon``
  (4 times the spend). The rounds stop only when the budget does: when what is left is less than two
  rounds at the current noise, the next round is the last and spends all of it. ``T`` is a horizon, not a
  cap: without halvings the rounds number about ``T - 0.9 d``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from mipkit._validation import MipkitValueError

__all__ = ["candidates", "first_round", "next_round", "workload"]

#: The reference's command line leaves out workload marginals of more cells than this.
MAX_CELLS = 10_000


def workload(
    sizes: Sequence[int], target: int | None = None, *, max_cells: int = MAX_CELLS
) -> dict[tuple[int, ...], float]:
    """The workload's cliques of column positions and their weights (module docstring).

    Parameters
    ----------
    sizes : sequence of int
        Each column's number of codes.
    target : int, optional
        The position of the target column: the workload becomes the 3-way marginals containing it.
    max_cells : int
        Target triples of more cells than this are left out (never the pairs).
    """
    d = len(sizes)
    if target is None:
        return dict.fromkeys(itertools.combinations(range(d), 2), 1.0)
    others = [i for i in range(d) if i != target]
    if d < 3:
        return {tuple(sorted((target, i))): 1.0 for i in others}
    triples = [tuple(sorted((target, a, b))) for a, b in itertools.combinations(others, 2)]
    kept = {cl: 1.0 for cl in triples if math.prod(sizes[i] for i in cl) <= max_cells}
    # a target whose every triple is too large still gets its pairs
    return kept or {tuple(sorted((target, i))): 1.0 for i in others}


def candidates(weights: dict[tuple[int, ...], float]) -> dict[tuple[int, ...], float]:
    """Every non-empty subset of a workload clique, scored by ``sum_w weight_w |clique & w|``, smallest
    cliques first."""
    closure: set[tuple[int, ...]] = set()
    for cl in weights:
        for r in range(1, len(cl) + 1):
            closure.update(itertools.combinations(cl, r))
    ordered = sorted(closure, key=lambda cl: (len(cl), cl))
    return {cl: float(sum(w * len(set(cl) & set(wl)) for wl, w in weights.items())) for cl in ordered}


def check_rounds(rounds: int, d: int) -> int:
    """``rounds`` (the horizon T) as an int, refused below the number of columns ``d``: the 1-way
    measurements alone would spend ``0.9 d / T`` of the budget."""
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < max(d, 1):
        raise MipkitValueError(
            f"AIM's rounds must be an integer of at least the number of columns ({d}); got {rounds!r}. "
            f"Leave it out for the published 16 x {d}."
        )
    return rounds


def first_round(rho: float, rounds: int, d: int) -> tuple[float, float, float]:
    """``(sigma, epsilon, rho spent)`` after the 1-way measurements of ``d`` columns, horizon ``rounds``."""
    sigma = math.sqrt(rounds / (2.0 * 0.9 * rho))
    epsilon = math.sqrt(8.0 * 0.1 * rho / rounds)
    return sigma, epsilon, d * 0.5 / sigma**2


def next_round(rho: float, used: float, sigma: float, epsilon: float) -> tuple[float, float, bool]:
    """``(sigma, epsilon, last)`` of the next round: the same noise, or all that is left when less than two
    such rounds remain (then ``last``)."""
    remaining = rho - used
    if remaining < 2.0 * (0.5 / sigma**2 + epsilon**2 / 8.0):
        return math.sqrt(1.0 / (2.0 * 0.9 * remaining)), math.sqrt(8.0 * 0.1 * remaining), True
    return sigma, epsilon, False


def round_cost(sigma: float, epsilon: float) -> float:
    """zCDP rho of one round: the Gaussian measurement and the exponential-mechanism selection."""
    return 0.5 / sigma**2 + epsilon**2 / 8.0


def schedule(rho: float, rounds: int, d: int, halves: Callable[[int], bool]) -> list[tuple[float, float]]:
    """The ``(sigma, epsilon)`` of every round when round ``t`` (from 1) halves the noise iff
    ``halves(t)``: the budget rule alone, without data (what a fit's rounds must follow)."""
    sigma, epsilon, used = first_round(rho, rounds, d)
    out, t, last = [], 0, False
    while not last:
        t += 1
        sigma, epsilon, last = next_round(rho, used, sigma, epsilon)
        used += round_cost(sigma, epsilon)
        out.append((sigma, epsilon))
        if not last and halves(t):
            sigma, epsilon = sigma / 2.0, epsilon * 2.0
    return out
