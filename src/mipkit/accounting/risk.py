"""Operational risk from a privacy guarantee: MIP eta, attack advantage, TPR at low FPR, success over a
baseline, singling out, attribute inference and precision at a realistic base rate.

Pure functions of a :class:`~mipkit.accounting.tradeoff.TradeoffCurve` (or of ``(epsilon, delta)`` /
``eta``); every formula is in docs/theory.md sections 1, 3 and 4. Vocabulary: alpha = FPR, beta = FNR,
TPR = ``1 - beta``; ``f`` is the trade-off curve.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_delta,
    check_epsilon,
    check_interval,
    check_positive_int,
)
from mipkit.accounting.tradeoff import TradeoffCurve

__all__ = [
    "DEFAULT_BASELINES",
    "DEFAULT_RECALLS",
    "advantage_over_baseline",
    "binary_attribute_error_bound",
    "certified_precision",
    "eta_from_curve",
    "eta_from_dp",
    "mip_tpr_bound",
    "replace_one_curve",
    "singling_out_bound",
    "success_bound",
    "tpr_at_fpr_bound",
]

#: Baseline success rates (the attacker's best chance without the release) reported by default.
DEFAULT_BASELINES: tuple[float, ...] = (0.01, 0.1, 0.5)
#: Recalls (fraction of members found) at which certified precision is reported by default.
DEFAULT_RECALLS: tuple[float, ...] = (0.01, 0.1, 0.5)


def _check_curve(curve: object, owner: str) -> TradeoffCurve:
    if not isinstance(curve, TradeoffCurve):
        raise MipkitValueError(
            f"The 'curve' parameter of {owner} must be a TradeoffCurve. Got {type(curve).__name__} instead."
        )
    return curve


def _check_rates(name: str, values: float | np.ndarray, owner: str, *, closed: str = "both") -> np.ndarray:
    """A float array whose values all lie in [0, 1] (or the sub-interval ``closed`` says)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise MipkitValueError(
            f"The {name!r} parameter of {owner} must be numeric. Got {values!r} instead."
        ) from None
    left = arr >= 0.0 if closed in ("left", "both") else arr > 0.0
    right = arr <= 1.0 if closed in ("right", "both") else arr < 1.0
    ok = left & right
    if not np.all(ok):  # NaN fails both comparisons; report the first offender in the usual form
        check_interval(name, float(arr[~ok].ravel()[0]), 0.0, 1.0, closed=closed, owner=owner)
    return arr


def eta_from_dp(epsilon: float, delta: float = 0.0, *, neighbours: str = "add_remove") -> float:
    """MIP eta implied by ``(epsilon, delta)``-DP for the stated neighbouring relation.

    * ``neighbours="replace_one"``: Theorem 4 of Izzo, Yoon, Arik & Zou, "Provable Membership Inference
      Privacy" (TMLR 2024), ``delta + (1 - delta)/(1 + e^-eps) - 1/2``; tight (a randomised response with a
      ``delta`` leak attains it). The MIP game replaces one record, which is the theorem's adjacency.
    * ``neighbours="add_remove"`` (the usual DP convention, the default): a replacement is a removal and
      an addition, so the replace-one curve is the group-privacy curve ``1 - g o g`` of the
      ``(eps, delta)`` curve, whose advantage is ``1 - e^-eps (1 - 2 delta)``: ``eta = (1 - e^-eps
      (1 - 2 delta)) / 2`` (docs/theory.md sections 1 and 3).

    Parameters
    ----------
    epsilon : float
        DP epsilon, ``>= 0``.
    delta : float, default=0.0
        DP delta, in ``[0, 1)``.
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The relation the guarantee is stated for.

    Returns
    -------
    float
        ``eta`` in ``[0, 1/2]``: no attacker in the MIP game is right more than ``1/2 + eta`` of the time.
    """
    eps = check_epsilon(epsilon, owner="eta_from_dp")
    d = check_delta(delta, owner="eta_from_dp")
    rel = check_choice("neighbours", neighbours, ("add_remove", "replace_one"), owner="eta_from_dp")
    if rel == "replace_one":
        return float(d + (1.0 - d) * expit(eps) - 0.5)
    return float(min(0.5, (-math.expm1(-eps) + 2.0 * d * math.exp(-eps)) / 2.0))


def replace_one_curve(curve: TradeoffCurve) -> TradeoffCurve:
    """The replace-one curve of ``curve`` (the relation of the MIP game; docs/theory.md section 3).

    The curve itself when it is for replace-one; else the curve of its record for replace-one
    (:func:`mipkit.accounting.tradeoff_curve` with ``neighbours="replace_one"``: ``2 mu``, sensitivity
    ``2L``, DP-SGD accounted for replace-one, or group privacy), on the same PLD grid or tolerance; a curve
    without a record gets the group-privacy curve ``1 - g o g``.
    """
    c = _check_curve(curve, "replace_one_curve")
    if c.neighbours == "replace_one":
        return c
    cache = getattr(c, "_cache", None)
    if isinstance(cache, dict) and "replace_one" in cache:
        return cache["replace_one"]
    from mipkit.accounting.curves import tradeoff_curve
    from mipkit.accounting.relations import GroupPrivacyCurve

    record = getattr(c, "mechanism", None)
    if record is None or isinstance(c, GroupPrivacyCurve):
        out: TradeoffCurve = GroupPrivacyCurve(c)
    elif c.exact:
        out = tradeoff_curve(record, neighbours="replace_one")
    else:
        fixed = getattr(c, "tolerance", None) is None
        out = tradeoff_curve(
            record,
            neighbours="replace_one",
            value_discretization_interval=c.grid if fixed else None,  # type: ignore[attr-defined]
            tolerance=None if fixed else c.tolerance,  # type: ignore[attr-defined]
        )
        if getattr(c, "side", "upper") == "lower":
            out = out.lower_curve()
    if isinstance(cache, dict):
        cache["replace_one"] = out
    return out


def eta_from_curve(curve: TradeoffCurve) -> float:
    """MIP eta implied by f-DP: ``eta = adv / 2`` of the **replace-one** curve, ``adv = sup (1 - a - f(a))``.

    A curve for add/remove neighbours is first turned into the replace-one curve (:func:`replace_one_curve`):
    the MIP game's "in" and "out" training sets differ by replacing one record. mipkit's f-DP-to-MIP result
    (docs/theory.md section 1), by the matching argument of Izzo et al. (TMLR 2024), Thm 4 and Lemma 12:
    pair each training set ``D0`` holding the target with a neighbour ``D1`` without it (one record
    replaced). An attacker saying "member" on the set ``S`` errs on the pair with probability
    ``(P(A(D0) not in S) + P(A(D1) in S)) / 2 = (beta + alpha) / 2 >= (alpha + f(alpha)) / 2``, and
    ``min_alpha (alpha + f(alpha)) = 1 - adv``; so the accuracy is at most ``1/2 + adv/2``. For a
    replace-one :class:`~mipkit.accounting.curves.ApproxDPCurve` this equals Thm 4 (:func:`eta_from_dp`);
    for replace-one mu-GDP it is ``Phi(mu/2) - 1/2``.
    """
    c = replace_one_curve(_check_curve(curve, "eta_from_curve"))
    return float(c.advantage() / 2.0)


def tpr_at_fpr_bound(curve: TradeoffCurve, fpr: float | np.ndarray) -> np.ndarray:
    """Largest TPR any membership test can reach at FPR ``fpr`` under f-DP: ``1 - f(fpr)``.

    Definition of f-DP (Dong, Roth & Su 2022, Def. 2.3); docs/theory.md sections 1 and 3. Returns an array of
    ``fpr``'s shape.
    """
    c = _check_curve(curve, "tpr_at_fpr_bound")
    a = _check_rates("fpr", fpr, "tpr_at_fpr_bound")
    return np.asarray(c.tpr(a), dtype=float)


def mip_tpr_bound(eta: float, fpr: float | np.ndarray) -> np.ndarray:
    """Largest TPR at FPR ``fpr`` that eta-MIP alone allows: ``min(1, fpr + 2 eta)``.

    Corrects Theorem 8 of Izzo et al. (TMLR 2024), which states ``TPR <= FPR + eta``: its proof writes
    the joint probability ``P(I = 1, x* in D_train) = TPR / 2`` where it says TPR. With ``k = n/2`` the
    accuracy is ``(TPR + 1 - FPR)/2 <= 1/2 + eta``, so ``TPR - FPR <= 2 eta`` (docs/theory.md section 1).
    Check: a perfect attacker has ``eta = 1/2``, ``TPR = 1``, ``FPR = 0``. Unlike f-DP, this does not bound
    precision at low FPR.
    """
    e = check_interval("eta", eta, 0.0, 0.5, closed="both", owner="mip_tpr_bound")
    a = _check_rates("fpr", fpr, "mip_tpr_bound")
    return np.minimum(1.0, a + 2.0 * e)


def success_bound(curve: TradeoffCurve, baseline: float | np.ndarray) -> np.ndarray:
    """Largest success of re-identification, attribute inference or reconstruction: ``1 - f(base)``.

    Kulynych et al., "Unifying Re-Identification, Attribute Inference, and Data Reconstruction Risks in
    Differential Privacy" (2025), unified bound (Thm 3.1-3.3; docs/theory.md section 3): if the attacker's
    best chance without the target's record is ``base`` (baseline success), its chance with the release is at
    most ``1 - f(base)``. Holds for single-target predicate singling out (SPSO), attribute inference (SAI) and
    reconstruction robustness (SRR).
    """
    c = _check_curve(curve, "success_bound")
    b = _check_rates("baseline", baseline, "success_bound")
    return np.asarray(c.tpr(b), dtype=float)


def advantage_over_baseline(curve: TradeoffCurve, baseline: float | np.ndarray) -> np.ndarray:
    """Largest gain of an attack over its baseline: ``1 - f(base) - base`` (Kulynych et al. 2025).

    The worst case over all baselines is the advantage ``sup (1 - alpha - f(alpha))`` (docs/theory.md
    section 3).
    """
    c = _check_curve(curve, "advantage_over_baseline")
    b = _check_rates("baseline", baseline, "advantage_over_baseline")
    return np.asarray(c.tpr(b), dtype=float) - b


def singling_out_bound(curve: TradeoffCurve, n: int, w: float | np.ndarray) -> np.ndarray:
    """Largest advantage of predicate singling out over ``n`` records: ``n (1 - f(w)) - n w (1-w)^(n-1)``.

    Setting (Cohen & Nissim's PSO, as bounded through f-DP by Kulynych et al. 2025, Fig. 2; docs/theory.md
    section 3): the ``n`` records are i.i.d.; from the release the attacker outputs a predicate whose weight
    (chance that a fresh record satisfies it) is at most ``w``; it succeeds if the predicate isolates exactly
    one record of the data. Without the release a weight-``w`` predicate isolates one record with probability
    ``n w (1 - w)^(n - 1)`` (the baseline). With it, by a union bound over the ``n`` records and f-DP for
    each, the success is at most ``min(1, n (1 - f(w)))``. The returned value is the bound on
    success minus baseline (``adv = succ - base``); mipkit caps the success part at 1 (success is a
    probability), which only tightens the published form.

    Parameters
    ----------
    curve : TradeoffCurve
        The release's trade-off curve.
    n : int
        Number of records, ``>= 1``.
    w : float or array
        Largest weight of the predicate, in [0, 1].
    """
    c = _check_curve(curve, "singling_out_bound")
    size = check_positive_int("n", n, owner="singling_out_bound")
    ww = _check_rates("w", w, "singling_out_bound")
    succ = np.minimum(1.0, size * np.asarray(c.tpr(ww), dtype=float))
    base = size * ww * np.power(1.0 - ww, size - 1)
    return succ - base


def binary_attribute_error_bound(curve: TradeoffCurve, prior: float | np.ndarray) -> np.ndarray:
    """Smallest error probability of any attacker inferring a binary attribute with prior ``pi``.

    The attacker sees the release and must say whether the target's secret bit is 1 (prior probability
    ``pi``) or 0. Any guess is a test between the two output laws, which f-DP ties by ``beta >= f(alpha)``
    in both directions, so the Bayes error is at least ``min_alpha ((1 - pi) alpha + pi f(alpha))``.
    By Legendre duality (``delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha)``) this equals

    ``min(pi, 1 - pi) * (1 - delta(|log(pi / (1 - pi))|))``,

    which is docs/theory.md section 3's ``(1 - pi)(1 - delta(log(pi/(1 - pi))))`` for ``pi >= 1/2`` and its
    mirror image for ``pi < 1/2`` (the formula as written would need ``delta`` at a negative epsilon). It is
    an error probability, not an accuracy: the attacker is right at most ``1 -`` this. Kulynych et al. 2025
    (SAI). Tight for symmetric curves (the optimal likelihood-ratio test attains it).
    """
    c = _check_curve(curve, "binary_attribute_error_bound")
    p = _check_rates("prior", prior, "binary_attribute_error_bound")
    out = np.empty(p.shape, dtype=float).ravel()
    for j, pi in enumerate(p.ravel()):
        small = min(pi, 1.0 - pi)
        if small == 0.0:
            out[j] = 0.0
            continue
        eps = abs(math.log(pi) - math.log1p(-pi))
        out[j] = small * (1.0 - c.delta_for_epsilon(eps))
    return out.reshape(p.shape)


def certified_precision(curve: TradeoffCurve, recall: float | np.ndarray, base_rate: float) -> np.ndarray:
    """Largest precision of a membership attack at recall ``r`` when a fraction ``pi`` are members.

    ``precision <= pi r / (pi r + (1 - pi) alpha*(r))`` with ``alpha*(r) = inf{alpha : 1 - f(alpha) >= r}``
    the smallest FPR at which TPR ``r`` is reachable (docs/theory.md section 4; Francis & Wagner's base-rate
    precision with the f-DP bound plugged in). For mu-GDP, ``alpha*(r) = Phi(Phi^-1(r) - mu)``. Where
    ``alpha*(r) = 0`` (e.g. ``r <= delta`` for ``(eps, delta)``-DP) the bound is 1; at ``r = 0`` it is
    undefined (NaN).

    Parameters
    ----------
    curve : TradeoffCurve
        The release's trade-off curve.
    recall : float or array
        Recall (TPR) of the attack, in [0, 1].
    base_rate : float
        Fraction ``pi`` of members among the targets, in (0, 1).
    """
    c = _check_curve(curve, "certified_precision")
    r = _check_rates("recall", recall, "certified_precision")
    pi = check_interval("base_rate", base_rate, 0.0, 1.0, owner="certified_precision")
    alpha = np.asarray(c.alpha_at_tpr(r), dtype=float)
    num = pi * r
    den = num + (1.0 - pi) * alpha
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
