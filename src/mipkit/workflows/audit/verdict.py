"""Valid headline statistics and the verdict of a model audit (docs/theory.md section 11).

An audit's trials are (target model, record) pairs. Trials that share a model or a record are dependent, and
the headline picks the strongest of several attacks after seeing them; binomial intervals on the pooled trials
ignore both and raise false alarms (docs/theory.md section 11 gives the measured rates). Here

* every interval is a two-way cluster ("pigeonhole") bootstrap over target models and records
  (:func:`mipkit.stats.pigeonhole_weights`): the statistic is recomputed with each target model and each
  record resampled as a whole, so any dependence within a model or within a record is carried into the
  interval;
* the family of attacks is bootstrapped jointly, and the intervals are simultaneous over the attacks
  (max-|t| critical value, :func:`mipkit.stats.simultaneous_intervals`): the interval of the attack chosen as
  the headline keeps its level however the choice was made. Per-attack (marginal) cluster intervals stay
  available beside them;
* the verdict compares the headline with a policy the user states (``fail_above`` on ``eta``, ``auc`` or
  ``tpr@<fpr>``): *finding* when the simultaneous interval lies above the limit, *pass* when it lies at or
  below it, *inconclusive* otherwise; a measured lower end above a certificate's bound is a finding too.

The cross-fitted hard guesses behind eta and the thresholds behind TPR at FPR are held fixed in the bootstrap
(they were chosen on other target models or are reported conditionally on the threshold).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.metrics.attack_summary import AttackSummary, fpr_label
from mipkit.metrics.cluster_bootstrap import weighted_auc_replicates as _auc_replicates
from mipkit.stats import pigeonhole_weights, simultaneous_intervals, two_way_ratio_replicates
from mipkit.workflows.audit.certified import certificate_by_attack

__all__ = [
    "DEFAULT_N_BOOT",
    "METHOD",
    "certificate_check",
    "check_policy",
    "headline_statistics",
    "old_headline_reveals",
    "verdict",
]

DEFAULT_N_BOOT = 1000
METHOD = (
    "two-way cluster bootstrap over target models and records (pigeonhole bootstrap, Owen 2007); "
    "intervals simultaneous over the attacks (max-|t| critical value), so the strongest attack's interval "
    "accounts for choosing it"
)


def _family(est: np.ndarray, rep: np.ndarray, confidence: float) -> dict:
    lo, hi, q = simultaneous_intervals(est, rep, confidence)
    marginal = [
        simultaneous_intervals(est[j : j + 1], rep[:, j : j + 1], confidence) for j in range(est.size)
    ]
    return {
        "estimate": est,
        "simultaneous": np.column_stack([lo, hi]),
        "marginal": np.array([[m[0][0], m[1][0]] for m in marginal]).reshape(-1, 2),
        "critical_value": q,
        "se": np.nanstd(rep, axis=0, ddof=1),
    }


def headline_statistics(
    summaries: Mapping[str, AttackSummary],
    trial_scores: Mapping[str, np.ndarray],
    labels: np.ndarray,
    *,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_N_BOOT,
    random_state=None,
) -> dict:
    """Cluster-bootstrap intervals of every score attack and the headline, simultaneous over the attacks.

    Parameters
    ----------
    summaries : dict name -> AttackSummary
        With their cross-fitted ``guesses`` (trials in ``(target, record)`` order, flattened).
    trial_scores : dict name -> array of shape (T, n)
    labels : bool array of shape (T, n)
        Membership of every trial.
    confidence : float
    n_boot : int
        Bootstrap replicates (the same resampled models and records serve every attack and metric).
    random_state : int, Generator or None
        Seeds the resampling (the audit passes a stream spawned from its seed).

    Returns
    -------
    dict
        ``headline`` (metric ``eta``: the attack with the largest eta, its estimate and simultaneous
        interval, ``reveals`` when the interval's lower end is above 0), ``attacks`` (per attack: eta, AUC and
        TPR at each FPR with marginal ``*_ci`` and simultaneous ``*_ci_simultaneous`` intervals, and the
        design effect of eta, the bootstrap variance over the binomial one), ``method``, ``n_boot``,
        ``confidence`` and ``critical_values``.
    """
    names = list(summaries)
    if not names:
        return {}
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # many tiny products: BLAS threads only cost time here
        return _headline_statistics(names, summaries, trial_scores, labels, confidence, n_boot, random_state)


def _headline_statistics(names, summaries, trial_scores, labels, confidence, n_boot, random_state) -> dict:
    lab = np.asarray(labels, dtype=bool)
    T, n = lab.shape
    W, V = pigeonhole_weights(n_boot, T, n, random_state)
    ones = np.ones((T, n))
    correct = np.stack([summaries[a].guesses.reshape(T, n) == lab for a in names]).astype(float)
    eta = _family(
        correct.mean(axis=(1, 2)) - 0.5, two_way_ratio_replicates(correct, ones, W, V) - 0.5, confidence
    )
    auc_est = np.array([summaries[a].auc for a in names])
    auc_rep = np.column_stack([_auc_replicates(np.asarray(trial_scores[a]), lab, W, V) for a in names])
    auc = _family(auc_est, auc_rep, confidence)
    tpr: dict[str, dict] = {}
    fpr_keys = [fpr_label(p.target_fpr) for p in summaries[names[0]].tpr_at_fpr]
    for key in fpr_keys:
        flags = []
        for a in names:
            point = next(p for p in summaries[a].tpr_at_fpr if fpr_label(p.target_fpr) == key)
            flags.append(point.member_flags(np.asarray(trial_scores[a]), lab))
        num = np.stack(flags).astype(float)
        est = num.sum(axis=(1, 2)) / max(lab.sum(), 1)
        tpr[key] = _family(est, two_way_ratio_replicates(num, lab.astype(float), W, V), confidence)
    attacks: dict[str, dict] = {}
    for j, a in enumerate(names):
        p = correct[j].mean()
        binom_var = p * (1 - p) / correct[j].size
        attacks[a] = {
            "eta": float(eta["estimate"][j]),
            "eta_ci": eta["marginal"][j].tolist(),
            "eta_ci_simultaneous": eta["simultaneous"][j].tolist(),
            "design_effect_eta": float(eta["se"][j] ** 2 / binom_var) if binom_var > 0 else None,
            "auc": float(auc["estimate"][j]),
            "auc_ci": auc["marginal"][j].tolist(),
            "auc_ci_simultaneous": auc["simultaneous"][j].tolist(),
            "tpr_at_fpr": {
                k: {
                    "tpr": float(f["estimate"][j]),
                    "tpr_ci": f["marginal"][j].tolist(),
                    "tpr_ci_simultaneous": f["simultaneous"][j].tolist(),
                }
                for k, f in tpr.items()
            },
        }
    best = int(np.argmax(eta["estimate"]))
    lo, hi = eta["simultaneous"][best]
    return {
        "headline": {
            "metric": "eta",
            "attack": names[best],
            "eta": float(eta["estimate"][best]),
            "eta_ci": [float(lo), float(hi)],
            "reveals": bool(lo > 0),
            "family": names,
        },
        "attacks": attacks,
        "method": METHOD,
        "n_boot": int(n_boot),
        "confidence": float(confidence),
        "critical_values": {
            "eta": eta["critical_value"],
            "auc": auc["critical_value"],
            **{f"tpr@{k}": f["critical_value"] for k, f in tpr.items()},
        },
    }


def old_headline_reveals(summaries: Mapping[str, AttackSummary], confidence: float = 0.95) -> bool:
    """The uncorrected rule: the largest-eta attack's Clopper-Pearson interval (trials taken as
    independent, no correction for the choice) excludes 0. Kept for the calibration benchmark."""
    best = max(summaries.values(), key=lambda s: s.eta.eta)
    return bool(best.eta.interval(confidence)[0] > 0)


# ------------------------------------------------------------------------------------------------ policy


def check_policy(fail_metric: str | None, fail_above: float | None, fprs: tuple[float, ...]) -> str | None:
    """Validate a policy; returns the canonical metric (``"eta"``, ``"auc"``, ``"tpr@0.01"``) or None.

    Raises :class:`MipkitValueError` for a non-finite limit (``nan`` would never fail), an unknown metric or
    an FPR the audit does not measure.
    """
    if fail_above is None:
        return None
    value = float(fail_above)
    if not np.isfinite(value):
        raise MipkitValueError(
            f"The 'fail_above' parameter of audit must be a finite number. Got {fail_above!r} instead "
            "(a NaN limit would never fail)."
        )
    metric = (fail_metric or "eta").strip().lower()
    keys = [fpr_label(f) for f in fprs]
    if metric.startswith("tpr@"):
        try:
            key = fpr_label(float(metric[4:]))
        except ValueError:
            key = metric[4:]
        if key not in keys:
            raise MipkitValueError(
                f"The 'fail_metric' parameter of audit names FPR {metric[4:]!r}, which the audit does not "
                f"measure; measured FPRs: {', '.join(keys)}."
            )
        return f"tpr@{key}"
    if metric not in ("eta", "auc"):
        raise MipkitValueError(
            "The 'fail_metric' parameter of audit must be 'eta', 'auc' or 'tpr@<fpr>' (e.g. 'tpr@0.01'). "
            f"Got {fail_metric!r} instead."
        )
    limits = {"eta": (0.0, 0.5), "auc": (0.0, 1.0)}[metric]
    if not limits[0] <= value <= limits[1]:
        raise MipkitValueError(
            f"The 'fail_above' parameter of audit must lie in [{limits[0]:g}, {limits[1]:g}] for metric "
            f"{metric}. Got {value!r} instead."
        )
    return metric


def _metric_row(stats: dict, metric: str) -> tuple[str, float, list[float]]:
    """The strongest attack on ``metric`` with its estimate and simultaneous interval."""
    attacks = stats["attacks"]
    if metric == "eta":
        h = stats["headline"]
        return h["attack"], h["eta"], h["eta_ci"]
    if metric == "auc":
        name = max(attacks, key=lambda a: attacks[a]["auc"])
        return name, attacks[name]["auc"], attacks[name]["auc_ci_simultaneous"]
    key = metric[4:]
    name = max(attacks, key=lambda a: attacks[a]["tpr_at_fpr"][key]["tpr"])
    row = attacks[name]["tpr_at_fpr"][key]
    return name, row["tpr"], row["tpr_ci_simultaneous"]


def certificate_check(stats: dict, certificate: Mapping[str, Any] | None) -> list[str]:
    """Violations of a certificate: a measured simultaneous lower end above the certified bound.

    The eta headline is compared with the certified eta, and every attack's TPR at each FPR with the certified
    TPR there (``certificate["tpr_bound"]``: ``1 - f(FPR)`` of an f-DP certificate, else ``FPR + 2 eta``).
    """
    if not certificate or not stats:
        return []
    out = []
    h = stats["headline"]
    if certificate.get("eta") is not None and h["eta_ci"][0] > float(certificate["eta"]):
        out.append(
            f"measured eta {h['eta']:.4f} ({h['attack']}; interval from {h['eta_ci'][0]:.4f}) is above the "
            f"certified eta {float(certificate['eta']):.4g}"
        )
    bounds = certificate.get("tpr_bound") or {}
    for name, row in stats["attacks"].items():
        for key, d in row["tpr_at_fpr"].items():
            bound = bounds.get(key)
            if bound is not None and d["tpr_ci_simultaneous"][0] > float(bound):
                out.append(
                    f"{name} finds {100 * d['tpr']:.2f}% of members at FPR {key} (interval from "
                    f"{100 * d['tpr_ci_simultaneous'][0]:.2f}%), above the certified "
                    f"{100 * float(bound):.2f}%"
                )
    return out


def verdict(
    stats: dict,
    *,
    fail_metric: str | None,
    fail_above: float | None,
    certificate: Mapping[str, Any] | None = None,
) -> dict:
    """The verdict box: ``status`` (``"pass"``, ``"finding"``, ``"inconclusive"`` or ``"no policy"``), the
    policy, the measurement it was read from, certificate violations and one plain ``text``.

    With a policy ``metric <= fail_above``: *finding* when the strongest attack's simultaneous interval lies
    wholly above the limit, *pass* when it lies at or below it (for these attacks; an audit never proves a
    model private), *inconclusive* when it straddles the limit. A certificate violation is a finding with or
    without a policy.
    """
    if not stats:
        return {
            "status": "inconclusive",
            "policy": None,
            "text": "No score attack ran, so there is no measurement to judge (only the pairwise LTU game).",
            "certificate_violations": [],
        }
    violations = certificate_check(stats, certificate)
    metric = fail_metric if fail_above is not None else "eta"
    name, value, ci = _metric_row(stats, metric or "eta")
    conf = stats["confidence"]
    measured = {"metric": metric, "attack": name, "value": value, "ci": ci, "confidence": conf}
    where = f"{metric} {value:.4f} ({name}; {100 * conf:g}% simultaneous interval {ci[0]:.4f} to {ci[1]:.4f})"
    if fail_above is None:
        status = "finding" if violations else "no policy"
        text = f"No limit to compare the measurement with. Measured: {where}."
        policy = None
    else:
        limit = float(fail_above)
        policy = {"metric": metric, "fail_above": limit}
        if ci[0] > limit:
            status, why = "finding", f"the whole interval lies above the limit {limit:g}"
        elif ci[1] <= limit:
            status, why = (
                "pass",
                f"the whole interval lies at or below the limit {limit:g} (for these attacks)",
            )
        else:
            status, why = (
                "inconclusive",
                f"the interval straddles the limit {limit:g}; more data or models needed",
            )
        if violations:
            status = "finding"
        text = f"Policy: {metric} must not exceed {limit:g}. Measured: {where}: {why}."
    if violations:
        text += " Certificate violated: " + "; ".join(violations) + "."
    return {
        "status": status,
        "policy": policy,
        "measured": measured,
        "certificate_violations": violations,
        "certificate_by_attack": certificate_by_attack(stats, certificate),
        "text": text,
    }


def provenance(data_sha256: str, trainer: Mapping[str, Any]) -> dict:
    """Date (UTC), data fingerprint (SHA-256 of the encoded arrays, not the data) and model fingerprint."""
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "data_sha256": data_sha256,
        "model_class": trainer.get("import_path"),
        "model_fingerprint": trainer.get("fingerprint"),
    }
