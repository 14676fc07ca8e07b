"""Nearest-neighbour adversarial accuracy (NNAA) and the privacy loss of synthetic data.

Yale et al. (2019) classify each point of two sets ``T`` (real) and ``S`` (synthetic) by whether its nearest
neighbour lies in its own set or in the other one. Their accuracy (Pedersen's thesis, eq. 2.11) compares
``d_TS(i)`` (nearest in ``S``) with the leave-one-out ``d_TT(i)`` (nearest in ``T`` minus the point itself):
the own set has one point fewer, so for two samples of one continuous distribution of size ``n`` each term
has expectation ``(n - 1) / (2n - 1) < 1/2``: the metric is biased.

The unbiased definition (Pedersen, Def. 4.1.1, eq. 4.1) also leaves one point ``k`` of the *other* set out
and averages over ``k``::

    AA_TS = 1/2 [ 1/n_T sum_i 1/n_S sum_k 1(d_{T(S\\{k})}(i) > d_TT(i))
                + 1/n_S sum_i 1/n_T sum_k 1(d_{S(T\\{k})}(i) > d_SS(i)) ]

and has expectation exactly 1/2 when ``|T| = |S|`` (Thm 4.1.1). The sum over ``k`` needs only the two
nearest neighbours of point ``i`` in the other set (eqs. 4.2-4.4): with ``o1 <= o2`` the two smallest
distances to the other set (of size ``m``) and ``s`` the leave-one-out distance to the own set,

    strict count     #{k : min(other \\ k) >  s} = m if o1 > s,  1 if o1 <= s < o2,  0 otherwise
    non-strict count #{k : min(other \\ k) >= s} = m if o1 >= s, 1 if o1 < s <= o2, 0 otherwise

For discrete distances (ties) the definition is the average of the strict and non-strict versions
(eq. 4.5), so ``g(i) = (strict + non-strict) / 2`` and (eqs. 4.6-4.7)::

    g = m            if s < o1            g = (m + 1)/2    if s = o1 < o2
    g = m/2          if s = o1 = o2       g = 1            if o1 < s < o2
    g = 1/2          if o1 < s = o2       g = 0            if o2 < s

The thesis prints the middle four cases as ``n - 1/2, 1/2, 2/n, 1/n`` and case 2 of (4.2) as ``1/n``;
those values do not reproduce definition (4.1). The values above do, and the tests check that they equal a
direct O(n^3) evaluation of (4.1)/(4.5) exactly, ties included.

Each term ``term_T = 1/(n_T n_S) sum_i g_T(i)`` and ``term_S`` is returned separately (eq. 4.8 returns
``term/2``); each has expectation 1/2 for same-distribution samples of equal size. Privacy loss
(Yale et al., eq. 2.14) is ``AA(test, synthetic_2) - AA(train, synthetic_1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from mipkit._progress import Pooled, Progress
from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_choice, check_positive_int, check_probability
from mipkit.data.neighbors import Table, _n_rows, _take, kneighbors, kneighbors_both_ways
from mipkit.metrics.nnaa_intervals import jackknife_values, jackknife_variance, neighbourhood_variance

TIES = ("average", "strict", "nonstrict")
#: The stage the neighbour searches of an adversarial accuracy report to ``progress`` (units: rows).
STAGE = "NNAA neighbour searches"


def _counts(s: np.ndarray, o1: np.ndarray, o2: np.ndarray, m: int, ties: str) -> np.ndarray:
    """``g(i)``: over the ``m`` leave-one-out versions of the other set, how many classify point i right."""
    strict = np.where(o1 > s, float(m), np.where(o2 > s, 1.0, 0.0))
    if ties == "strict":
        return strict
    nonstrict = np.where(o1 >= s, float(m), np.where(o2 >= s, 1.0, 0.0))
    if ties == "nonstrict":
        return nonstrict
    return (strict + nonstrict) / 2.0


@dataclass(frozen=True)
class AdversarialAccuracy:
    """The two terms of the unbiased NNAA (Pedersen eq. 4.8, each scaled to [0, 1]).

    Attributes
    ----------
    term_t : float
        Share of ``T`` points (averaged over leave-one-out versions of ``S``) whose nearest neighbour is in
        ``T``: ``1/(n_T n_S) sum_i g_T(i)``. Expectation 1/2 for same-distribution samples of equal size.
    term_s : float
        The same for ``S`` points.
    n_t, n_s : int
        Set sizes.
    ties : str
        ``"average"`` (eq. 4.5), ``"strict"`` (eq. 4.1) or ``"nonstrict"``.
    per_record_t, per_record_s : ndarray
        ``g(i) / n_other`` of each point (in [0, 1]); their means are the terms.
    distances_t_to_s, distances_s_to_t : ndarray of shape (n, 2)
        The two nearest distances of each ``T`` point in ``S`` (and of each ``S`` point in ``T``), when
        computed from tables; ``distances_t_to_s[:, 0]`` is the distance to closest record of ``T`` in ``S``
        (reused by the DCR attack on the same tables instead of searching again).
    jackknife_t, jackknife_s : ndarray or None
        ``AA`` with each ``T`` (resp. ``S``) record removed, its neighbours' terms recomputed
        (:func:`mipkit.metrics.nnaa_intervals.jackknife_values`); computed from tables of at least 3 rows.
    dependence_t, dependence_s : ndarray of int, shape (n, 2), or None
        Each record's nearest own (leave-one-out) and nearest other neighbour (indices into its own set and
        the other set): the records its term depends on most, for :attr:`neighbourhood_variance`.
    """

    term_t: float
    term_s: float
    n_t: int
    n_s: int
    ties: str = "average"
    per_record_t: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    per_record_s: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    distances_t_to_s: np.ndarray = field(default_factory=lambda: np.empty((0, 2)), repr=False, compare=False)
    distances_s_to_t: np.ndarray = field(default_factory=lambda: np.empty((0, 2)), repr=False, compare=False)
    jackknife_t: np.ndarray | None = field(default=None, repr=False, compare=False)
    jackknife_s: np.ndarray | None = field(default=None, repr=False, compare=False)
    dependence_t: np.ndarray | None = field(default=None, repr=False, compare=False)
    dependence_s: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def neighbourhood_variance(self) -> float:
        """Variance of :attr:`value` from the covariances of neighbouring terms (NaN when not computed).

        See :func:`mipkit.metrics.nnaa_intervals.neighbourhood_variance`: at 2,000 records per set,
        coverage of one AA 95-96% at 95% on same-distribution tables (``docs/theory.md`` section 6)."""
        if self.dependence_t is None or self.dependence_s is None:
            return float("nan")
        return neighbourhood_variance(
            self.per_record_t, self.per_record_s, self.dependence_t, self.dependence_s
        )

    @property
    def jackknife_variance(self) -> float:
        """Delete-one jackknife variance of :attr:`value`, neighbours recomputed (NaN when not computed).

        See :mod:`mipkit.metrics.nnaa_intervals`: conservative in expectation (Efron-Stein)."""
        if self.jackknife_t is None or self.jackknife_s is None:
            return float("nan")
        return jackknife_variance(self.jackknife_t, self.jackknife_s)

    @property
    def value(self) -> float:
        """``AA_TS = (term_t + term_s) / 2``."""
        return 0.5 * (self.term_t + self.term_s)

    def to_dict(self) -> dict:
        """``aa`` (the value), then the two terms, the set sizes and the tie rule."""
        return {"aa": self.value, **{k: getattr(self, k) for k in ("term_t", "term_s", "n_t", "n_s", "ties")}}


def adversarial_accuracy_from_distances(
    t_own: np.ndarray,
    t_other: np.ndarray,
    s_own: np.ndarray,
    s_other: np.ndarray,
    *,
    ties: str = "average",
) -> AdversarialAccuracy:
    """Unbiased NNAA from nearest-neighbour distances (eqs. 4.2-4.8).

    Parameters
    ----------
    t_own : ndarray of shape (n_T,)
        Distance of each ``T`` point to its nearest neighbour in ``T`` minus itself.
    t_other : ndarray of shape (n_T, 2)
        Distances of each ``T`` point to its two nearest neighbours in ``S`` (ascending).
    s_own, s_other : the same for the ``S`` points.
    ties : {"average", "strict", "nonstrict"}
    """
    check_choice("ties", ties, TIES, owner="adversarial_accuracy")
    t_own, s_own = np.asarray(t_own, float).ravel(), np.asarray(s_own, float).ravel()
    t_other, s_other = np.asarray(t_other, float), np.asarray(s_other, float)
    n_t, n_s = t_own.size, s_own.size
    if n_t < 2 or n_s < 2:
        raise MipkitValueError(f"NNAA needs at least 2 points in each set. Got {n_t} and {n_s}.")
    if t_other.shape != (n_t, 2) or s_other.shape != (n_s, 2):
        raise MipkitValueError("t_other and s_other must hold the two nearest distances of each point.")
    g_t = _counts(t_own, t_other[:, 0], t_other[:, 1], n_s, ties) / n_s
    g_s = _counts(s_own, s_other[:, 0], s_other[:, 1], n_t, ties) / n_t
    return AdversarialAccuracy(float(g_t.mean()), float(g_s.mean()), n_t, n_s, ties, g_t, g_s)


def adversarial_accuracy(
    T: Table,
    S: Table,
    *,
    metric: str = "mixed",
    ties: str = "average",
    n_jobs: int = 2,
    progress: Progress | None = None,
) -> AdversarialAccuracy:
    """Unbiased nearest-neighbour adversarial accuracy of two tables (Pedersen eqs. 4.1-4.8).

    Exact neighbour searches (:mod:`mipkit.data.neighbors`): ``T`` in ``T`` and ``S`` in ``S``
    (leave-one-out, k=2), and ``T`` in ``S`` together with ``S`` in ``T`` (k=3) in one pass over the
    ``T x S`` distances (:func:`~mipkit.data.neighbors.kneighbors_both_ways`). The statistic needs the
    first own and two other neighbours; the extra ones give the delete-one jackknife values
    (:mod:`mipkit.metrics.nnaa_intervals`). The expectation is 1/2 only when ``|T| = |S|``;
    :func:`privacy_loss` subsamples to equal sizes.
    """
    n_t, n_s = _n_rows(T), _n_rows(S)
    pooled = Pooled(progress, STAGE, 2 * n_t + n_s)  # T in T, S in S, T in S (both ways)
    kw = {"metric": metric, "n_jobs": n_jobs, "progress": pooled}
    if min(n_t, n_s) < 3:  # too small for the jackknife's second own / third other neighbour
        t_own, t_own_i = kneighbors(T, T, k=1, exclude_self=True, **kw)
        s_own, s_own_i = kneighbors(S, S, k=1, exclude_self=True, **kw)
        (t_other, t_other_i), (s_other, s_other_i) = kneighbors_both_ways(T, S, k=2, **kw)
        pooled.finish()
        aa = adversarial_accuracy_from_distances(t_own[:, 0], t_other, s_own[:, 0], s_other, ties=ties)
        return replace(
            aa,
            distances_t_to_s=t_other,
            distances_s_to_t=s_other,
            dependence_t=np.column_stack([t_own_i[:, 0], t_other_i[:, 0]]),
            dependence_s=np.column_stack([s_own_i[:, 0], s_other_i[:, 0]]),
        )
    t_own, t_own_i = kneighbors(T, T, k=2, exclude_self=True, **kw)
    s_own, s_own_i = kneighbors(S, S, k=2, exclude_self=True, **kw)
    (t_other, t_other_i), (s_other, s_other_i) = kneighbors_both_ways(T, S, k=3, **kw)
    pooled.finish()
    aa = adversarial_accuracy_from_distances(
        t_own[:, 0], t_other[:, :2], s_own[:, 0], s_other[:, :2], ties=ties
    )
    jack_t, jack_s = jackknife_values(
        t_own, t_own_i, t_other, t_other_i, s_own, s_own_i, s_other, s_other_i, ties=ties
    )
    return replace(
        aa,
        distances_t_to_s=t_other[:, :2],
        distances_s_to_t=s_other[:, :2],
        jackknife_t=jack_t,
        jackknife_s=jack_s,
        dependence_t=np.column_stack([t_own_i[:, 0], t_other_i[:, 0]]),
        dependence_s=np.column_stack([s_own_i[:, 0], s_other_i[:, 0]]),
    )


def adversarial_accuracy_naive(
    d_tt: np.ndarray, d_ts: np.ndarray, d_ss: np.ndarray, *, ties: str = "average"
) -> AdversarialAccuracy:
    """Direct O(n_T n_S^2 + n_S n_T^2) evaluation of definition (4.1) / (4.5), for tests.

    ``d_tt`` (n_T x n_T), ``d_ts`` (n_T x n_S) and ``d_ss`` (n_S x n_S) are full distance matrices; the
    diagonals of ``d_tt`` and ``d_ss`` are ignored. For every point ``i`` and every left-out ``k`` of the
    other set, the nearest distance to ``other \\ {k}`` is compared with the leave-one-out own distance.
    """
    check_choice("ties", ties, TIES, owner="adversarial_accuracy_naive")

    def one_side(d_own: np.ndarray, d_other: np.ndarray) -> np.ndarray:
        n, m = d_other.shape
        own = d_own.astype(float).copy()
        np.fill_diagonal(own, np.inf)
        s = own.min(axis=1)
        out = np.empty(n)
        for i in range(n):
            strict = nonstrict = 0
            for k in range(m):
                rest = np.delete(d_other[i], k)
                o = rest.min() if rest.size else np.inf
                strict += o > s[i]
                nonstrict += o >= s[i]
            if ties == "strict":
                out[i] = strict / m
            elif ties == "nonstrict":
                out[i] = nonstrict / m
            else:
                out[i] = (strict + nonstrict) / (2 * m)
        return out

    g_t = one_side(np.asarray(d_tt), np.asarray(d_ts))
    g_s = one_side(np.asarray(d_ss), np.asarray(d_ts).T)
    return AdversarialAccuracy(float(g_t.mean()), float(g_s.mean()), len(g_t), len(g_s), ties, g_t, g_s)


def yale_adversarial_accuracy_from_distances(
    t_own: np.ndarray, t_other1: np.ndarray, s_own: np.ndarray, s_other1: np.ndarray
) -> AdversarialAccuracy:
    """Yale et al.'s original (biased) NNAA, eq. 2.11: ``1(d_TS(i) > d_TT(i))`` without leaving ``S`` out.

    For two samples of size ``n`` of one continuous distribution each term has expectation
    ``(n - 1)/(2n - 1)``, not 1/2 (the own set has one candidate fewer).
    """
    g_t = (np.asarray(t_other1, float).ravel() > np.asarray(t_own, float).ravel()).astype(float)
    g_s = (np.asarray(s_other1, float).ravel() > np.asarray(s_own, float).ravel()).astype(float)
    return AdversarialAccuracy(float(g_t.mean()), float(g_s.mean()), g_t.size, g_s.size, "yale", g_t, g_s)


def yale_adversarial_accuracy(
    T: Table, S: Table, *, metric: str = "mixed", n_jobs: int = 2
) -> AdversarialAccuracy:
    """Yale et al.'s biased NNAA (eq. 2.11) of two tables, to compare with the unbiased form."""
    t_own, _ = kneighbors(T, T, k=1, exclude_self=True, metric=metric, n_jobs=n_jobs)
    t_other, _ = kneighbors(T, S, k=1, metric=metric, n_jobs=n_jobs)
    s_own, _ = kneighbors(S, S, k=1, exclude_self=True, metric=metric, n_jobs=n_jobs)
    s_other, _ = kneighbors(S, T, k=1, metric=metric, n_jobs=n_jobs)
    return yale_adversarial_accuracy_from_distances(t_own[:, 0], t_other[:, 0], s_own[:, 0], s_other[:, 0])


INTERVALS = ("auto", "neighbourhood", "jackknife", "record-bootstrap")
NEIGHBOURHOOD_FROM_ROWS = 1000
"""Records per set from which ``interval="auto"`` takes the neighbourhood interval (the jackknife below)."""


def interval_method(interval: str, n: int) -> str:
    """The interval method that ``interval`` means at ``n`` records per set.

    ``"auto"`` is ``"neighbourhood"`` when ``n >= NEIGHBOURHOOD_FROM_ROWS`` (1,000), where it covers the
    privacy loss 94.5-95.3% of the time at 95% with the width the estimate's spread needs (600 tables at 1,000
    and at 2,000 per set), and ``"jackknife"`` below, where the neighbourhood interval falls short on small
    discrete tables (85-93% at 150 per set) and the jackknife is conservative
    (``benchmarks/nnaa_interval_coverage.py``, ``docs/theory.md`` section 6). Any other value is itself.
    """
    if interval != "auto":
        return interval
    return "neighbourhood" if n >= NEIGHBOURHOOD_FROM_ROWS else "jackknife"


@dataclass(frozen=True)
class PrivacyLoss:
    """Train and test NNAA and the privacy loss ``AA_test - AA_train`` with their intervals.

    Attributes
    ----------
    train : AdversarialAccuracy
        ``AA(train, synthetic_1)``.
    test : AdversarialAccuracy
        ``AA(test, synthetic_2)``.
    n : int
        Size of each of the four (sub)sampled sets.
    split_synthetic : bool
        True when one synthetic table was split into two disjoint halves.
    intervals : dict
        ``train_ci``, ``test_ci``, ``privacy_loss_ci``, their standard errors (``*_se``), the confidence and
        the ``method`` used: ``"neighbourhood"`` (covariances of neighbouring terms, normal interval; the
        default's choice from 1,000 records per set), ``"jackknife"`` (delete-one jackknife with the
        neighbours recomputed, normal interval, conservative: 1.5-2 times too wide; the default's choice
        below 1,000; both :mod:`mipkit.metrics.nnaa_intervals`) or
        ``"record-bootstrap"`` (percentile bootstrap of the per-record contributions with the
        neighbour structure held fixed:
        too narrow, kept to show how much, ``docs/theory.md`` section 6).
    """

    train: AdversarialAccuracy
    test: AdversarialAccuracy
    n: int
    split_synthetic: bool
    intervals: dict

    @property
    def value(self) -> float:
        return self.test.value - self.train.value

    def to_dict(self) -> dict:
        out = {
            "train": self.train.value,
            "test": self.test.value,
            "privacy_loss": self.value,
            "train_terms": self.train.to_dict(),
            "test_terms": self.test.to_dict(),
            "n": self.n,
            "split_synthetic": self.split_synthetic,
            "intervals": self.intervals,
        }
        return out


def _normal_ci(value: float, se: float, z: float) -> list[float]:
    return [value - z * se, value + z * se]


_DETAIL = {
    "neighbourhood": "covariances of terms of records that are or share nearest neighbours; normal interval",
    "jackknife": "delete-one jackknife over the records of each set, neighbours recomputed; normal interval",
}


def _normal_intervals(
    aa_train: AdversarialAccuracy, aa_test: AdversarialAccuracy, confidence: float, method: str
) -> dict:
    """Normal intervals from the ``method`` variances; train and test sets are independent."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    attr = "neighbourhood_variance" if method == "neighbourhood" else "jackknife_variance"
    v_train, v_test = getattr(aa_train, attr), getattr(aa_test, attr)
    se = {"train": np.sqrt(v_train), "test": np.sqrt(v_test), "privacy_loss": np.sqrt(v_train + v_test)}
    value = {"train": aa_train.value, "test": aa_test.value, "privacy_loss": aa_test.value - aa_train.value}
    out = {f"{k}_ci": _normal_ci(value[k], float(se[k]), z) for k in se}
    return {
        **out,
        **{f"{k}_se": float(v) for k, v in se.items()},
        "confidence": confidence,
        "method": method,
        "detail": _DETAIL[method],
    }


def _record_bootstrap_intervals(
    aa_train: AdversarialAccuracy,
    aa_test: AdversarialAccuracy,
    confidence: float,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> dict:
    """Percentile bootstrap of the per-record contributions, neighbour structure held fixed (too narrow)."""

    def boot(aa: AdversarialAccuracy) -> np.ndarray:
        it = rng.integers(0, aa.n_t, size=(n_bootstrap, aa.n_t))
        is_ = rng.integers(0, aa.n_s, size=(n_bootstrap, aa.n_s))
        return 0.5 * (aa.per_record_t[it].mean(axis=1) + aa.per_record_s[is_].mean(axis=1))

    b_train, b_test = boot(aa_train), boot(aa_test)
    a = (1 - confidence) / 2
    q = [a, 1 - a]
    return {
        "train_ci": np.quantile(b_train, q).tolist(),
        "test_ci": np.quantile(b_test, q).tolist(),
        "privacy_loss_ci": np.quantile(b_test - b_train, q).tolist(),
        "train_se": float(b_train.std()),
        "test_se": float(b_test.std()),
        "privacy_loss_se": float((b_test - b_train).std()),
        "n_bootstrap": n_bootstrap,
        "confidence": confidence,
        "method": "record-bootstrap",
        "detail": "percentile, records resampled within each set, neighbour structure held fixed",
    }


def privacy_loss(
    train: Table,
    test: Table,
    synthetic: Table,
    *,
    synthetic2: Table | None = None,
    metric: str = "mixed",
    ties: str = "average",
    max_n: int | None = None,
    interval: str = "auto",
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    random_state: RandomState = None,
    n_jobs: int = 2,
    progress: Progress | None = None,
) -> PrivacyLoss:
    """Privacy loss ``AA(test, synthetic_2) - AA(train, synthetic_1)`` (Yale et al. eq. 2.14, unbiased NNAA).

    When ``synthetic2`` is not given, ``synthetic`` is split at random into two disjoint halves
    ``synthetic_1`` and ``synthetic_2`` (so neither AA reuses the other's synthetic points). All four sets
    are then subsampled without replacement to one common size ``n = min(sizes, max_n)``, because the
    unbiasedness of each term needs ``|T| = |S|`` and equal sizes make train and test comparable.

    A generator that memorises its training data gives ``AA_train`` below 1/2 and a positive privacy loss;
    one that generalises gives both near 1/2 (unbiased NNAA) and a privacy loss near 0.

    Intervals (``interval``): normal intervals ``value -+ z sqrt(v)`` with ``v_PL = v_train + v_test``
    (the four sets are disjoint and independent). ``"auto"`` (default) is ``"neighbourhood"`` from 1,000
    records per set and ``"jackknife"`` below (:func:`interval_method`). ``"neighbourhood"`` sums the
    covariances of the terms of records that are, or share, nearest neighbours
    (:mod:`mipkit.metrics.nnaa_intervals`): over 600 tables at 1,000 and at 2,000 records per set it covers
    the privacy loss 94.5-95.3% of the time at 95% with 0.99-1.03 times the width of the estimate's spread
    (``benchmarks/nnaa_interval_coverage.py``); on small discrete tables (150 per set) about 85-93%.
    ``"jackknife"`` is the delete-one jackknife of each AA with the neighbours recomputed: conservative in
    expectation by the Efron-Stein inequality at any size, 1.5-2 times too wide (``docs/theory.md`` section
    6). ``"record-bootstrap"`` (``n_bootstrap`` replicates) is a percentile bootstrap of per-record
    contributions, which holds the neighbour structure fixed and covers only 81-90%.
    """
    check_choice("interval", interval, INTERVALS, owner="privacy_loss")
    n_bootstrap = check_positive_int("n_bootstrap", n_bootstrap, owner="privacy_loss")
    confidence = check_probability("confidence", confidence, closed="neither", owner="privacy_loss")
    rng = check_random_state(random_state)
    split = synthetic2 is None
    if split:
        n_syn = _n_rows(synthetic)
        if n_syn < 4:
            raise MipkitValueError(f"The synthetic table needs at least 4 rows to be split. Got {n_syn}.")
        perm = rng.permutation(n_syn)
        syn1, syn2 = _take(synthetic, perm[: n_syn // 2]), _take(synthetic, perm[n_syn // 2 :])
    else:
        syn1, syn2 = synthetic, synthetic2
    sets = [train, syn1, test, syn2]
    n = min(_n_rows(x) for x in sets)
    if max_n is not None:
        n = min(n, check_positive_int("max_n", max_n, minimum=2, owner="privacy_loss"))
    if n < 3:
        raise MipkitValueError(f"privacy_loss needs at least 3 rows in each set. Got {n}.")
    sub = [_take(x, np.sort(rng.choice(_n_rows(x), size=n, replace=False))) for x in sets]
    pooled = Pooled(progress, STAGE, 6 * n)  # two adversarial accuracies of 3 n rows searched each
    kw = {"metric": metric, "ties": ties, "n_jobs": n_jobs, "progress": pooled}
    aa_train = adversarial_accuracy(sub[0], sub[1], **kw)
    aa_test = adversarial_accuracy(sub[2], sub[3], **kw)
    pooled.finish()
    method = interval_method(interval, n)
    if method in _DETAIL:
        intervals = _normal_intervals(aa_train, aa_test, confidence, method)
    else:
        intervals = _record_bootstrap_intervals(aa_train, aa_test, confidence, n_bootstrap, rng)
    return PrivacyLoss(aa_train, aa_test, n, split, intervals)
