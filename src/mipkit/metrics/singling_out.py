"""Measures of the singling-out attack against a non-member control (``docs/theory.md`` section 6).

The attack (:mod:`mipkit.attacks.singling_out`) writes ``m`` predicates from the synthetic data; predicate
``i`` matches ``M_i`` of the ``N`` distinct training (original) records and ``C_i`` of the ``N_c`` distinct
control records. It succeeds on a table when it matches exactly one record there.

* attack success ``a = #{i : M_i = 1} / m`` (Wilson interval), and the same ``c`` on the control table;
* a predicate singles out a small table more easily than a large one, so the two are compared **at one
  size**, the smaller one ``n* = min(N, N_c)``, exactly: the larger table's success is its expected success
  over all its ``n*``-row subsets, ``mean_i P(H_i = 1)`` with ``H_i ~ Hypergeometric(N, M_i, n*)``
  (:func:`subsample_success`). Under the null (training and control records exchangeable draws of one
  population, the predicates written without them) both expectations are equal: no model is needed;
* risk ``(a* - c*) / (1 - c*)`` at that size, with anonymeter's first-order propagation of the two Wilson
  half-widths (:func:`mipkit.metrics.inference.anonymeter_risk`; the subsampled rate is an average of
  probabilities, whose variance is at most a Bernoulli's, so its Wilson interval is conservative);
* at the training table's size ``N`` (``training_size``): the attack's success ``a`` on the training table
  itself, and the success a population sample of ``N`` rows would have,
  ``s(N) = mean_i N p_i (1 - p_i)^(N-1)``
  (``p_i``: predicate ``i``'s population match probability). A control of ``N_c >= N`` rows gives ``s(N)``
  exactly by subsampling; a smaller control cannot (no unbiased estimator of a degree-``N`` polynomial of
  ``p`` exists from ``Binomial(N_c, p)`` counts, and the plug-in ``p_i = C_i / N_c`` reads every predicate
  the control misses as never singling anyone out), so :func:`training_size_bounds` bounds ``s(N)`` over
  every mixture of match probabilities whose expected histogram of control counts lies within simultaneous
  confidence bands of the observed one (a linear programme), and the risk ``(a - c) / (1 - c)`` gets the
  range and the interval those bounds allow (``docs/theory.md`` section 6a). anonymeter (Giomi et al. 2023,
  Sec. 4.1) instead scales the control's success by a fitted model's ratio, a point inside (or outside)
  that range that the model's shape picks.

The success rates are counted over the predicates actually found (anonymeter divides by the number asked
for, which lowers every rate when fewer are found).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mipkit.data.attack_records import SinglingOutCounts
from mipkit.metrics.inference import anonymeter_risk
from mipkit.stats import Proportion, clopper_pearson, wilson

__all__ = ["SinglingOutResult", "measure_singling_out", "subsample_success", "training_size_bounds"]


def subsample_success(counts: np.ndarray, n_rows: int, size: int) -> float:
    """Expected share of predicates that single out a random ``size``-row subset of an ``n_rows`` table.

    ``mean_i P(H_i = 1)``, ``H_i ~ Hypergeometric(n_rows, counts_i, size)``: the chance that exactly one of
    predicate ``i``'s ``counts_i`` matching rows is drawn. ``size = n_rows`` gives ``mean_i [counts_i = 1]``.
    """
    from scipy.stats import hypergeom  # here: scipy.stats takes a second to import

    c = np.asarray(counts, dtype=np.int64)
    if c.size == 0:
        return float("nan")
    return float(np.mean(hypergeom.pmf(1, int(n_rows), c, int(size))))


def _count_bands(counts: np.ndarray, max_count: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bands, simultaneous at ``1 - alpha`` (Bonferroni), of the shares of predicates with
    0, 1, ..., ``max_count - 1`` and ``>= max_count`` control matches."""
    c, m = np.asarray(counts, dtype=np.int64), len(counts)
    k = [int(np.sum(c == j)) for j in range(max_count)] + [int(np.sum(c >= max_count))]
    bands = np.array([clopper_pearson(kj, m, 1.0 - alpha / len(k)) for kj in k], dtype=float)
    return bands[:, 0], bands[:, 1]


def training_size_bounds(
    counts: np.ndarray, n_control: int, n_original: int, *, alpha: float = 0.025, max_count: int = 5
) -> tuple[float, float]:
    """Lowest and highest expected success at ``n_original`` rows of a population consistent with the control.

    For ``n_control >= n_original`` both are the exact subsampled success (:func:`subsample_success`).
    Otherwise: over mixtures ``w`` of match probabilities ``p`` on a grid (0 and 400 values from
    ``1e-3 / n_original`` to 1, log-spaced), the extremes of ``sum_j w_j g(p_j)``,
    ``g(p) = N p (1 - p)^(N - 1)``, subject to the expected share of predicates with ``k`` control matches,
    ``sum_j w_j P(Binomial(N_c, p_j) = k)`` (``k < max_count``; and ``>= max_count``), lying in the
    simultaneous ``1 - alpha`` Clopper-Pearson band of the observed share (:func:`_count_bands`). Two linear
    programmes (scipy's HiGHS); an infeasible band (it covers the truth with probability ``1 - alpha``) gives
    ``(0, max g) = (0, (1 - 1/N)^(N-1))``.
    """
    c = np.asarray(counts, dtype=np.int64)
    n, nc = int(n_original), int(n_control)
    if c.size == 0:
        return float("nan"), float("nan")
    if nc >= n:
        rate = subsample_success(c, nc, n)
        return rate, rate
    from scipy import optimize, stats

    p = np.r_[0.0, np.geomspace(1e-3 / n, 1.0, 400)]
    k = np.arange(max_count)
    share = np.vstack([stats.binom.pmf(k[:, None], nc, p), stats.binom.sf(max_count - 1, nc, p)])
    lo, hi = _count_bands(c, max_count, alpha)
    g = n * p * (1.0 - p) ** (n - 1)
    bounds = []
    for sign in (1.0, -1.0):
        res = optimize.linprog(
            sign * g, A_ub=np.vstack([share, -share]), b_ub=np.r_[hi, -lo], A_eq=np.ones((1, p.size)),
            b_eq=[1.0], bounds=(0, None), method="highs",
        )  # fmt: skip
        bounds.append(float(g @ res.x) if res.status == 0 else (0.0 if sign > 0 else float(g.max())))
    return max(0.0, bounds[0]), min(float(g.max()), bounds[1])


def _training_size(counts: SinglingOutCounts, attack: Proportion, confidence: float) -> dict:
    """The comparison at the training table's size: ``a`` against the bounds on the control's success
    there, each at ``1 - (1 - confidence) / 2`` so that the risk's interval holds at ``confidence``."""
    alpha = (1.0 - confidence) / 2
    c_lo, c_hi = training_size_bounds(counts.counts_control, counts.n_control, counts.n_original, alpha=alpha)
    a_lo, a_hi = wilson(attack.successes, attack.trials, 1.0 - alpha)
    a = attack.successes / attack.trials

    def risk(x: float, c: float) -> float:
        return (x - c) / (1.0 - c) if c < 1.0 else float("nan")

    return {
        "size": int(counts.n_original),
        "attack_success": a,
        "attack_success_ci": [a_lo, a_hi],
        "control_success_bounds": [c_lo, c_hi],
        "exact": bool(counts.n_control >= counts.n_original),
        "risk": {
            "bounds": [risk(a, c_hi), risk(a, c_lo)],
            "ci": [max(-1.0, risk(a_lo, c_hi)), min(1.0, risk(a_hi, c_lo))],
            "confidence": confidence,
        },
    }


@dataclass(frozen=True)
class SinglingOutResult:
    """Singling-out success on training and control records and the risk against the control.

    Attributes
    ----------
    attack : Proportion or None
        Predicates that single out a training record, of those found (``None`` when none was found).
    control_raw : Proportion or None
        The same on the control table, at its own size.
    equal_size : dict or None
        ``size`` = the smaller table's, and both success rates at that size (module docstring).
    risk : dict or None
        ``(a* - c*) / (1 - c*)`` at equal size, with its interval.
    training_size : dict or None
        At the training table's size: the attack's success with its interval, the bounds on a population
        sample's success there (:func:`training_size_bounds`; ``exact`` when the control is at least as
        large), and the risk's range over those bounds (``bounds``) and its interval (``ci``).
    """

    mode: str
    n_requested: int
    n_predicates: int
    n_cols: int
    attempts: int
    attack: Proportion | None
    control_raw: Proportion | None
    equal_size: dict | None
    risk: dict | None
    training_size: dict | None = None
    sizes: dict = field(default_factory=dict)

    def to_dict(self, confidence: float = 0.95) -> dict:
        return {
            "mode": self.mode,
            "n_requested": self.n_requested,
            "n_predicates": self.n_predicates,
            "n_cols": self.n_cols,
            "attempts": self.attempts,
            "attack_success": None if self.attack is None else self.attack.to_dict(confidence),
            "control_success_raw": None if self.control_raw is None else self.control_raw.to_dict(confidence),
            "equal_size": self.equal_size,
            "risk": self.risk,
            "training_size": self.training_size,
            "distinct_rows": self.sizes,
            "note": None if self.n_predicates else "no predicate singles out the synthetic data",
        }


def measure_singling_out(counts: SinglingOutCounts, *, confidence: float = 0.95) -> SinglingOutResult:
    """Success rates on training and control records and the control-set risk (module docstring)."""
    m = int(len(counts.counts_original))
    sizes = {"original": counts.n_original, "control": counts.n_control, "synthetic": counts.n_synthetic}
    common = {
        "mode": counts.mode,
        "n_requested": counts.n_requested,
        "n_predicates": m,
        "n_cols": counts.n_cols,
        "attempts": counts.attempts,
        "sizes": sizes,
    }
    if m == 0:
        return SinglingOutResult(**common, attack=None, control_raw=None, equal_size=None, risk=None)
    attack = Proportion(int(np.sum(counts.counts_original == 1)), m, "wilson")
    if counts.counts_control is None:
        return SinglingOutResult(**common, attack=attack, control_raw=None, equal_size=None, risk=None)
    n_o, n_c = int(counts.n_original), int(counts.n_control)
    raw = Proportion(int(np.sum(counts.counts_control == 1)), m, "wilson")
    size = min(n_o, n_c)
    a_eq = subsample_success(counts.counts_original, n_o, size)
    c_eq = subsample_success(counts.counts_control, n_c, size)
    subsampled = "none (equal sizes)" if n_o == n_c else ("training" if n_o > n_c else "control")
    equal = {"size": size, "subsampled": subsampled, "attack_success": a_eq, "control_success": c_eq}
    risk = anonymeter_risk(Proportion(a_eq * m, m, "wilson"), Proportion(c_eq * m, m, "wilson"), confidence)
    return SinglingOutResult(
        **common, attack=attack, control_raw=raw, equal_size=equal, risk=risk,
        training_size=_training_size(counts, attack, confidence),
    )  # fmt: skip
