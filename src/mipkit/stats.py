"""Intervals and estimates: proportions kept as raw counts, their exact and Wilson intervals, and the
empirical MIP eta of hard guesses.

This is a bottom layer: it imports only :mod:`mipkit._validation`, NumPy and SciPy, so that every other layer
(metrics, attacks, mechanisms, workflows) can measure with it. Results keep the raw counts (successes,
trials) and compute an interval only when asked, at the confidence asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special  # not scipy.stats: 1 s of import for two quantile functions

from mipkit._validation import MipkitValueError, check_interval

__all__ = [
    "EtaEstimate",
    "Proportion",
    "clopper_pearson",
    "eta_from_guesses",
    "pigeonhole_weights",
    "simultaneous_intervals",
    "two_way_ratio_replicates",
    "wilson",
]


def _check_counts(successes: int, trials: int) -> None:
    if trials < 1:
        raise MipkitValueError(f"A proportion needs at least one trial. Got trials={trials}.")
    if not 0 <= successes <= trials:
        raise MipkitValueError(
            f"successes must lie in [0, trials]. Got successes={successes}, trials={trials}."
        )


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial proportion.

    ``[B(a/2; x, n - x + 1), B(1 - a/2; x + 1, n - x)]`` with ``B`` the Beta quantile and
    ``a = 1 - confidence`` (Clopper & Pearson, Biometrika 26, 1934); the ends are 0 and 1 when ``x = 0`` or
    ``x = n``. Coverage is at least ``confidence`` for every true proportion.

    Parameters
    ----------
    successes, trials : int
        ``x`` and ``n``, with ``0 <= x <= n`` and ``n >= 1``.
    confidence : float in (0, 1)

    Returns
    -------
    (float, float)
        Lower and upper end.
    """
    _check_counts(successes, trials)
    a = 1.0 - check_interval("confidence", confidence, 0.0, 1.0, owner="clopper_pearson")
    lo = 0.0 if successes == 0 else float(special.betaincinv(successes, trials - successes + 1, a / 2))
    upper = special.betaincinv(successes + 1, trials - successes, 1 - a / 2) if successes < trials else 1.0
    hi = float(upper)
    return lo, hi


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``.

    Wilson (JASA 22, 1927), with ``p = x/n`` and ``z`` the ``1 - a/2`` normal quantile; clipped to [0, 1].
    Close to nominal coverage, not guaranteed above it (use :func:`clopper_pearson` for that).
    """
    _check_counts(successes, trials)
    a = 1.0 - check_interval("confidence", confidence, 0.0, 1.0, owner="wilson")
    z = float(special.ndtri(1 - a / 2))
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


@dataclass(frozen=True)
class Proportion:
    """A measured proportion kept as raw counts; the interval is computed on demand.

    Attributes
    ----------
    successes, trials : int
        Raw counts.
    method : str
        ``"clopper-pearson"`` (exact) or ``"wilson"``.
    """

    successes: int
    trials: int
    method: str = "clopper-pearson"

    def __post_init__(self) -> None:
        _check_counts(self.successes, self.trials)
        if self.method not in ("clopper-pearson", "wilson"):
            raise MipkitValueError(
                f"The 'method' parameter of Proportion must be 'clopper-pearson' or 'wilson'. "
                f"Got {self.method!r} instead."
            )

    @property
    def value(self) -> float:
        """Point estimate ``successes / trials``."""
        return self.successes / self.trials

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Two-sided interval at ``confidence`` by :attr:`method`."""
        fn = clopper_pearson if self.method == "clopper-pearson" else wilson
        return fn(self.successes, self.trials, confidence)

    def to_dict(self, confidence: float = 0.95) -> dict:
        """``value``, ``ci``, ``confidence``, the raw counts and the method, JSON-able."""
        lo, hi = self.interval(confidence)
        return {
            "value": self.value,
            "ci": [lo, hi],
            "confidence": confidence,
            "successes": self.successes,
            "trials": self.trials,
            "method": self.method,
        }


@dataclass(frozen=True)
class EtaEstimate:
    """Empirical MIP eta of an attack on the membership game: accuracy - 1/2, with an exact interval.

    The game draws each target as a member with probability 1/2; ``correct`` of ``trials`` guesses
    were right. ``eta = correct/trials - 1/2`` estimates a lower bound on the release's MIP eta (Izzo
    et al., Def. 1; docs/theory.md section 1); the interval is Clopper-Pearson on the accuracy, shifted
    by 1/2.
    """

    correct: int
    trials: int

    @property
    def accuracy(self) -> Proportion:
        """The accuracy ``correct / trials`` as a :class:`Proportion` (Clopper-Pearson)."""
        return Proportion(self.correct, self.trials, "clopper-pearson")

    @property
    def eta(self) -> float:
        """``correct / trials - 1/2``."""
        return self.accuracy.value - 0.5

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Clopper-Pearson interval on the accuracy, minus 1/2."""
        lo, hi = self.accuracy.interval(confidence)
        return lo - 0.5, hi - 0.5

    def to_dict(self, confidence: float = 0.95) -> dict:
        """``eta``, ``eta_ci``, ``accuracy``, the raw counts and the confidence, JSON-able."""
        lo, hi = self.interval(confidence)
        return {
            "eta": self.eta,
            "eta_ci": [lo, hi],
            "accuracy": self.accuracy.value,
            "correct": self.correct,
            "trials": self.trials,
            "confidence": confidence,
        }


def eta_from_guesses(guesses: np.ndarray, labels: np.ndarray) -> EtaEstimate:
    """Empirical eta from hard 0/1 guesses against true memberships: ``#{guess = label} / n - 1/2``.

    The guesses must come from a rule fixed without looking at these labels (e.g. a threshold chosen on
    other trials); otherwise the estimate is optimistic.
    """
    g = np.asarray(guesses).ravel().astype(int)
    y = np.asarray(labels).ravel().astype(int)
    if g.shape != y.shape:
        raise MipkitValueError(f"guesses and labels differ in length: {g.shape[0]} vs {y.shape[0]}.")
    return EtaEstimate(int(np.sum(g == y)), int(g.size))


# ------------------------------------------------------------------------------ two-way cluster bootstrap


def pigeonhole_weights(
    n_boot: int, n_rows: int, n_cols: int, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial resampling counts of a two-way ("pigeonhole") bootstrap over rows and columns.

    Owen (Ann. Appl. Stat. 1, 2007, Sec. 3): rows (e.g. target models) and columns (e.g. records) are
    resampled independently with replacement; a replicate gives trial ``(r, c)`` the weight
    ``W[b, r] V[b, c]``. Its variance estimate is conservative (it over-counts the residual term) for any
    dependence within a row and within a column.

    Parameters
    ----------
    n_boot, n_rows, n_cols : int
        Replicates ``B``, rows ``R`` and columns ``C`` (all >= 1).
    random_state : int, Generator or None

    Returns
    -------
    W : int array of shape (B, R)
    V : int array of shape (B, C)
    """
    from mipkit._random import check_random_state

    for name, val in (("n_boot", n_boot), ("n_rows", n_rows), ("n_cols", n_cols)):
        if int(val) < 1:
            raise MipkitValueError(f"The '{name}' parameter of pigeonhole_weights must be >= 1. Got {val}.")
    rng = check_random_state(random_state)
    W = rng.multinomial(n_rows, np.full(n_rows, 1.0 / n_rows), size=n_boot)
    V = rng.multinomial(n_cols, np.full(n_cols, 1.0 / n_cols), size=n_boot)
    return W, V


def two_way_ratio_replicates(
    numerators: np.ndarray, denominators: np.ndarray, W: np.ndarray, V: np.ndarray, *, chunk: int = 128
) -> np.ndarray:
    """Bootstrap replicates of ratio means ``sum_rc w_r v_c a_jrc / sum_rc w_r v_c d_jrc``.

    Parameters
    ----------
    numerators : array of shape (J, R, C)
        One statistic per row ``j`` of the family (e.g. "guess correct" per trial of attack ``j``).
    denominators : array of shape (J, R, C) or (R, C)
        Trial weights of each statistic (ones for a plain mean; "is a member" for a TPR).
    W, V : arrays of shape (B, R), (B, C)
        From :func:`pigeonhole_weights`.
    chunk : int
        Replicates handled at once (bounds memory to ``chunk * C`` floats per statistic).

    Returns
    -------
    array of shape (B, J)
        NaN where a replicate's denominator is 0.
    """
    a = np.asarray(numerators, dtype=float)
    d = np.asarray(denominators, dtype=float)
    if d.ndim == 2:
        d = np.broadcast_to(d, a.shape)
    if a.ndim != 3 or a.shape != d.shape or W.shape[1] != a.shape[1] or V.shape[1] != a.shape[2]:
        raise MipkitValueError(
            f"Shapes do not match: numerators {a.shape}, denominators {d.shape}, W {W.shape}, V {V.shape}."
        )
    B, J = W.shape[0], a.shape[0]
    out = np.empty((B, J))
    Wf, Vf = W.astype(float), V.astype(float)
    for j in range(J):
        for s in range(0, B, chunk):
            w, v = Wf[s : s + chunk], Vf[s : s + chunk]
            num = np.einsum("bc,bc->b", w @ a[j], v)
            den = np.einsum("bc,bc->b", w @ d[j], v)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s : s + chunk, j] = num / den
    return out


def simultaneous_intervals(
    estimates: np.ndarray, replicates: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray, float]:
    """Simultaneous intervals for ``J`` statistics from their joint bootstrap replicates (max-|t| method).

    With ``se_j`` the bootstrap standard deviation of statistic ``j``, the critical value ``q`` is the
    ``confidence`` quantile of ``max_j |theta*_j - theta_hat_j| / se_j`` over replicates, and the intervals
    are ``theta_hat_j +- q se_j`` (Davison & Hinkley, Bootstrap Methods, 1997, Sec. 4.2.5; Romano & Wolf,
    Econometrica 73, 2005). All ``J`` intervals cover together with probability about ``confidence``, so
    the interval of a statistic *chosen* among them after the fact (the largest, say) keeps its level.
    With ``J = 1`` it is a studentised symmetric bootstrap interval for one statistic.

    Parameters
    ----------
    estimates : array of shape (J,)
    replicates : array of shape (B, J)
        NaN replicates are ignored.
    confidence : float in (0, 1)

    Returns
    -------
    low, high : arrays of shape (J,)
    q : float
        The critical value (compare ``stats.norm.ppf((1 + confidence) / 2)`` for one statistic).
    """
    conf = check_interval("confidence", confidence, 0.0, 1.0, owner="simultaneous_intervals")
    est = np.asarray(estimates, dtype=float).ravel()
    rep = np.asarray(replicates, dtype=float).reshape(-1, est.size)
    se = np.nanstd(rep, axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(rep - est[None, :]) / np.where(se > 0, se, np.inf)[None, :]
    tmax = np.nanmax(np.where(np.isfinite(t), t, np.nan), axis=1) if est.size else np.zeros(0)
    tmax = tmax[np.isfinite(tmax)]
    q = float(np.quantile(tmax, conf)) if tmax.size else 0.0
    return est - q * se, est + q * se, q
