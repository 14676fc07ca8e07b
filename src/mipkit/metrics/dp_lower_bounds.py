"""Measured lower bounds on a model's privacy: how much of a certificate is real.

An attack's hard guesses at one threshold have a false-positive rate ``FPR`` and a false-negative rate
``FNR``. Every ``(epsilon, delta)``-DP mechanism satisfies, for every test (Kairouz, Oh & Viswanath 2015;
docs/theory.md section 3),

``FPR + e^eps FNR >= 1 - delta``  and  ``FNR + e^eps FPR >= 1 - delta``,

so one-sided Clopper-Pearson upper bounds ``FPR+`` and ``FNR+`` (each at level ``a/2``) give, with
confidence ``1 - a``, the lower bound (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021)

``eps >= max(log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+))``.

A mu-GDP mechanism has ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, hence ``mu >= Phi^-1(1 - FPR+) - Phi^-1(FNR+)``
(Dong, Roth & Su 2022, eq. 6; Nasr et al. 2023). Choosing the threshold on the same trials would void the
confidence, so :func:`epsilon_lower_bound` and :func:`gdp_lower_bound` either fix it in advance, choose it
on one part of the trials and measure on the other (``"split"``, by groups such as target models), or pay
a Bonferroni correction over every candidate threshold (``"bonferroni"``, as DeepMind's jax_privacy does).
The intervals treat trials as independent: exact for one canary per training run, indicative for the
pooled trials of an audit, which share models and records (docs/theory.md section 11).

**One training run** (Steinke, Nasr & Jagielski, NeurIPS 2023). ``m`` canaries, each included
independently with probability 1/2; after one run the auditor guesses "in" for some, "out" for some and
abstains on the rest: ``r`` guesses, ``v`` of them right. If the training is ``(eps, delta)``-DP,

``P[W >= v] <= B(v) + 2 m delta max_{1 <= i <= v} (B(v - i) - B(v)) / i``,  ``B(k) = P[Bin(r, q) >= k]``,

with ``q = e^eps / (1 + e^eps)``: :func:`one_run_p_value`. The lower bound is the largest ``eps`` whose
p-value is at most ``1 - confidence`` (:func:`one_run_epsilon`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize, special, stats

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_delta, check_interval, check_positive_int

__all__ = [
    "EpsilonLowerBound",
    "GDPLowerBound",
    "OneRunBound",
    "clopper_pearson_upper",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "gdp_lower_bound",
    "mu_from_rates",
    "one_run_epsilon",
    "one_run_lower_bound",
    "one_run_p_value",
    "threshold_counts",
]

_EPS_CAP = 100.0


def clopper_pearson_upper(k, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound on a binomial proportion: ``B(1 - alpha; k + 1, n - k)``
    (1 when ``k = n``): ``P[Bin(n, p) <= k] = alpha`` at ``p`` = the bound (Clopper & Pearson 1934)."""
    k = np.asarray(k)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1))
    return np.where(k < n, out, 1.0)


def epsilon_from_rates(fpr, fnr, delta: float, *, one_sided: bool = False) -> np.ndarray:
    """The smallest ``eps >= 0`` that a test with rates ``(fpr, fnr)`` allows under ``(eps, delta)``-DP.

    ``max(log((1 - delta - fnr) / fpr), log((1 - delta - fpr) / fnr), 0)``; ``one_sided`` keeps the first
    term only (the "member if the score is high" direction of jax_privacy's default).
    """
    fpr, fnr = np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(1 - delta - fnr > 0, np.log(np.maximum(1 - delta - fnr, 1e-300)) - np.log(fpr), 0.0)
        b = np.where(1 - delta - fpr > 0, np.log(np.maximum(1 - delta - fpr, 1e-300)) - np.log(fnr), 0.0)
    out = a if one_sided else np.maximum(a, b)
    return np.clip(np.nan_to_num(out, nan=0.0, posinf=np.inf), 0.0, None)


def mu_from_rates(fpr, fnr) -> np.ndarray:
    """The smallest GDP ``mu >= 0`` that a test with rates ``(fpr, fnr)`` allows:
    ``Phi^-1(1 - fpr) - Phi^-1(fnr)`` (symmetric in the two rates)."""
    fpr, fnr = np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float)
    return np.clip(stats.norm.isf(fpr) - stats.norm.ppf(fnr), 0.0, None)


def _scores_labels(scores, labels, owner: str) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(labels).ravel()
    if s.shape != y.shape or s.size == 0:
        raise MipkitValueError(f"{owner}: scores and labels must be non-empty and of one length.")
    if not np.all(np.isfinite(s)):
        raise MipkitValueError(f"{owner}: attack scores must be finite (no NaN or infinity).")
    if not np.all((y == 0) | (y == 1)):
        raise MipkitValueError(f"{owner}: membership labels must be 0 (non-member) or 1 (member).")
    y = y.astype(bool)
    if y.all() or not y.any():
        raise MipkitValueError(f"{owner}: labels need both members (1) and non-members (0).")
    return s, y


def threshold_counts(scores, labels, thresholds=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """False positives and false negatives of "member iff score >= t" for each threshold ``t``.

    Returns ``(thresholds, fp, fn, n_neg, n_pos)``; ``thresholds`` defaults to every distinct score and
    ``+inf`` (no one flagged).
    """
    s, y = _scores_labels(scores, labels, "threshold_counts")
    thr = (
        np.append(np.unique(s), np.inf)
        if thresholds is None
        else np.atleast_1d(np.asarray(thresholds, float))
    )
    pos, neg = np.sort(s[y]), np.sort(s[~y])
    fn = np.searchsorted(pos, thr, side="left")  # members below t
    fp = neg.size - np.searchsorted(neg, thr, side="left")  # non-members at or above t
    return thr, fp, fn, int(neg.size), int(pos.size)


class _Record:
    """Base of the frozen bound records below: their fields as a dict."""

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class _EpsilonAtDelta(_Record):
    """The first fields of an epsilon lower bound: the training is not ``(eps', delta)``-DP for ``eps' <
    epsilon``, with probability ``confidence``."""

    epsilon: float
    delta: float
    confidence: float


@dataclass(frozen=True)
class EpsilonLowerBound(_EpsilonAtDelta):
    """A measured ``(eps, delta)`` lower bound: the training is not ``(eps', delta)``-DP for ``eps' <
    epsilon``, with probability ``confidence`` (rates at the chosen threshold)."""

    threshold: float
    fpr_upper: float
    fnr_upper: float
    false_positives: int
    negatives: int
    false_negatives: int
    positives: int
    method: str


@dataclass(frozen=True)
class GDPLowerBound(_Record):
    """A measured GDP lower bound: the training is not ``mu'``-GDP for ``mu' < mu`` (with ``confidence``);
    ``epsilon`` is that ``mu``'s epsilon at ``delta`` (the GDP-based epsilon lower bound), when asked."""

    mu: float
    epsilon: float | None
    delta: float | None
    confidence: float
    threshold: float
    fpr_upper: float
    fnr_upper: float
    method: str


def _split(y: np.ndarray, groups, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint masks: whole groups (target models) at random, or trials when there are < 2 groups."""
    if groups is not None:
        g = np.asarray(groups).ravel()
        if g.shape != y.shape:
            raise MipkitValueError("The 'groups' of a lower bound must have one entry per score.")
        names = np.unique(g)
        if names.size >= 2:
            chosen = rng.permutation(names)[: names.size // 2]
            first = np.isin(g, chosen)
            return first, ~first
    first = rng.random(y.size) < 0.5
    return first, ~first


def _bound(kind, s, y, delta, alpha, threshold, groups, one_sided, random_state):
    """Shared threshold strategies: returns (value, index-free details) for ``kind`` in {"eps", "mu"}."""

    def values(fp, fn, n_neg, n_pos, a):
        fpr_u = clopper_pearson_upper(fp, n_neg, a / 2)
        fnr_u = clopper_pearson_upper(fn, n_pos, a / 2)
        v = (
            epsilon_from_rates(fpr_u, fnr_u, delta, one_sided=one_sided)
            if kind == "eps"
            else mu_from_rates(fpr_u, fnr_u)
        )
        return np.atleast_1d(v), np.atleast_1d(fpr_u), np.atleast_1d(fnr_u)

    if isinstance(threshold, str) and threshold == "split":
        first, second = _split(y, groups, check_random_state(random_state))
        if not (y[first].any() and (~y[first]).any() and y[second].any() and (~y[second]).any()):
            raise MipkitValueError("The 'split' lower bound needs members and non-members in both parts.")
        thr, fp, fn, n_neg, n_pos = threshold_counts(s[first], y[first])
        v, _, _ = values(fp, fn, n_neg, n_pos, alpha)
        t = float(thr[int(np.argmax(v))])
        thr, fp, fn, n_neg, n_pos = threshold_counts(s[second], y[second], [t])
        method = "threshold chosen on half of the " + ("groups" if groups is not None else "trials")
        v, fu, nu = values(fp, fn, n_neg, n_pos, alpha)
        return v[0], t, fu[0], nu[0], fp[0], n_neg, fn[0], n_pos, method
    if isinstance(threshold, str) and threshold == "bonferroni":
        thr, fp, fn, n_neg, n_pos = threshold_counts(s, y)
        v, fu, nu = values(fp, fn, n_neg, n_pos, alpha / thr.size)
        i = int(np.argmax(v))
        method = f"Bonferroni over {thr.size} thresholds"
        return v[i], float(thr[i]), fu[i], nu[i], fp[i], n_neg, fn[i], n_pos, method
    if isinstance(threshold, str):
        raise MipkitValueError(
            f"The 'threshold' of a lower bound must be 'split', 'bonferroni' or a number. Got {threshold!r}."
        )
    t = check_interval("threshold", threshold, -math.inf, math.inf, closed="both")
    thr, fp, fn, n_neg, n_pos = threshold_counts(s, y, [t])
    v, fu, nu = values(fp, fn, n_neg, n_pos, alpha)
    return v[0], t, fu[0], nu[0], fp[0], n_neg, fn[0], n_pos, "threshold fixed in advance"


def epsilon_lower_bound(
    scores,
    labels,
    *,
    delta: float,
    confidence: float = 0.95,
    threshold: str | float = "split",
    groups=None,
    one_sided: bool = False,
    random_state: RandomState = 0,
) -> EpsilonLowerBound:
    """Clopper-Pearson epsilon lower bound at ``delta`` from an attack's scores (module docstring).

    Parameters
    ----------
    scores, labels : arrays (N,)
        Attack scores (higher: more likely a member) and membership (1 member, 0 non-member).
    delta : float
        The certificate's delta.
    confidence : float, default=0.95
    threshold : "split", "bonferroni" or float
        How the threshold is chosen (module docstring).
    groups : array (N,), optional
        Trial groups (the audit's target models) for the split.
    one_sided : bool
        Only the ``log((1 - delta - FNR+) / FPR+)`` term.
    random_state : int, Generator or None
        Seeds the split.
    """
    s, y = _scores_labels(scores, labels, "epsilon_lower_bound")
    d = check_delta(delta, owner="epsilon_lower_bound")
    conf = check_interval("confidence", confidence, 0.0, 1.0, owner="epsilon_lower_bound")
    v, t, fu, nu, fp, n_neg, fn, n_pos, method = _bound(
        "eps", s, y, d, 1.0 - conf, threshold, groups, one_sided, random_state
    )
    return EpsilonLowerBound(
        epsilon=float(min(v, _EPS_CAP)), delta=d, confidence=conf, threshold=t, fpr_upper=float(fu),
        fnr_upper=float(nu), false_positives=int(fp), negatives=n_neg, false_negatives=int(fn),
        positives=n_pos, method=method,
    )  # fmt: skip


def gdp_lower_bound(
    scores,
    labels,
    *,
    delta: float | None = None,
    confidence: float = 0.95,
    threshold: str | float = "split",
    groups=None,
    random_state: RandomState = 0,
) -> GDPLowerBound:
    """GDP ``mu`` lower bound from an attack's scores, and the epsilon at ``delta`` it implies.

    Same threshold strategies as :func:`epsilon_lower_bound`; ``epsilon`` is the exact epsilon of
    ``mu``-GDP at ``delta`` (Dong, Roth & Su 2022, Cor. 2.13; :class:`~mipkit.accounting.GaussianCurve`).
    """
    s, y = _scores_labels(scores, labels, "gdp_lower_bound")
    d = None if delta is None else check_delta(delta, owner="gdp_lower_bound")
    conf = check_interval("confidence", confidence, 0.0, 1.0, owner="gdp_lower_bound")
    mu, t, fu, nu, *_, method = _bound("mu", s, y, 0.0, 1.0 - conf, threshold, groups, False, random_state)
    eps = None
    if d is not None:
        from mipkit.accounting.closed_forms import GaussianCurve

        eps = 0.0 if mu <= 0 else float(min(GaussianCurve(float(mu)).epsilon_for_delta(d), _EPS_CAP))
    return GDPLowerBound(mu=float(mu), epsilon=eps, delta=d, confidence=conf, threshold=t,
                         fpr_upper=float(fu), fnr_upper=float(nu), method=method)  # fmt: skip


# ------------------------------------------------------------------------------------- one training run
def one_run_p_value(m: int, n_guess: int, n_correct: int, epsilon: float, delta: float) -> float:
    """Steinke, Nasr & Jagielski (2023): an upper bound on ``P[W >= v]`` under ``(epsilon, delta)``-DP.

    ``m`` canaries, ``r = n_guess`` non-abstaining guesses of which ``v = n_correct`` are right (module
    docstring).
    """
    m = check_positive_int("m", m, owner="one_run_p_value")
    r, v = int(n_guess), int(n_correct)
    if not 0 <= v <= r <= m:
        raise MipkitValueError(f"one_run_p_value needs 0 <= n_correct <= n_guess <= m. Got {v}, {r}, {m}.")
    q = float(special.expit(epsilon))
    beta = float(stats.binom.sf(v - 1, r, q))  # P[Bin(r, q) >= v]
    if delta == 0 or v == 0:
        return min(beta, 1.0)
    i = np.arange(1, v + 1)
    alpha = float(np.max((stats.binom.sf(v - i - 1, r, q) - beta) / i))
    return min(beta + alpha * delta * 2 * m, 1.0)


def one_run_epsilon(m: int, n_guess: int, n_correct: int, *, delta: float, confidence: float = 0.95) -> float:
    """Largest ``eps`` rejected at level ``1 - confidence``: ``sup{eps : one_run_p_value(eps) <= 1 - c}``
    (0 when even ``eps = 0`` is not rejected). The p-value grows with ``eps``, so this is a root."""
    a = 1.0 - check_interval("confidence", confidence, 0.0, 1.0, owner="one_run_epsilon")
    d = check_delta(delta, owner="one_run_epsilon")

    def gap(eps: float) -> float:
        return a - one_run_p_value(m, n_guess, n_correct, eps, d)

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        if hi >= _EPS_CAP:
            return _EPS_CAP
        hi *= 2.0
    return float(optimize.brentq(gap, 0.0, hi, xtol=1e-9))


@dataclass(frozen=True)
class OneRunBound(_EpsilonAtDelta):
    """The one-run epsilon lower bound and the guesses behind it."""

    m: int
    k_plus: int
    k_minus: int
    n_guess: int
    n_correct: int
    rules_tried: int


def one_run_lower_bound(
    scores,
    included,
    *,
    delta: float,
    confidence: float = 0.95,
    k_plus=(0.01, 0.02, 0.05, 0.1, 0.2),
    k_minus=(0.0,),
) -> OneRunBound:
    """One-run epsilon lower bound from the canaries' scores (higher: more likely included).

    The auditor guesses "in" for the ``k+`` highest scores and "out" for the ``k-`` lowest, abstaining on
    the rest. Each ``(k+, k-)`` pair of the grid (fractions of ``m`` when below 1, else counts) is one
    guessing rule fixed before looking; the bound is the largest over the rules, each at level
    ``(1 - confidence) / n_rules`` (Bonferroni), so it holds with probability ``confidence``.
    """
    s, y = _scores_labels(scores, included, "one_run_lower_bound")
    m = s.size
    d = check_delta(delta, owner="one_run_lower_bound")
    conf = check_interval("confidence", confidence, 0.0, 1.0, owner="one_run_lower_bound")

    def counts(ks) -> list[int]:
        out = []
        for k in np.atleast_1d(ks):
            c = int(round(float(k) * m)) if 0 <= float(k) < 1 else int(k)
            if c < 0 or c > m:
                raise MipkitValueError(f"Guess counts must lie in [0, {m}]. Got {k!r}.")
            out.append(c)
        return out

    rules = [(p, n) for p in counts(k_plus) for n in counts(k_minus) if 0 < p + n <= m]
    if not rules:
        raise MipkitValueError("one_run_lower_bound needs at least one rule with a guess.")
    order = np.argsort(-s, kind="stable")
    ranked = y[order]
    level = 1.0 - (1.0 - conf) / len(rules)
    best = None
    for p, n in rules:
        correct = int(ranked[:p].sum()) + int((~ranked[m - n :]).sum() if n else 0)
        eps = one_run_epsilon(m, p + n, correct, delta=d, confidence=level)
        if best is None or eps > best[0]:
            best = (eps, p, n, correct)
    eps, p, n, correct = best
    return OneRunBound(epsilon=float(eps), delta=d, confidence=conf, m=m, k_plus=p, k_minus=n,
                       n_guess=p + n, n_correct=correct, rules_tried=len(rules))  # fmt: skip
