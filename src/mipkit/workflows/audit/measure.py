"""The model audit after the fits: attacks, summaries, the cluster-bootstrap headline, utility and the
certificate (with its premise and exactness).

:func:`measure` is all of the audit that follows the fits, so calibration studies (``tests/verdicts``,
``benchmarks/verdict_calibration_model.py``) call it on simulated model outputs with exactly the audit's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mipkit.attacks.registry import AttackInputs, run_score_attacks
from mipkit.data.io import Dataset
from mipkit.metrics.attack_summary import AttackSummary, summarize_attack
from mipkit.metrics.slices import SliceSummary, slice_summary
from mipkit.workflows.audit.config import AuditConfig, RecordInfo
from mipkit.workflows.audit.verdict import headline_statistics

__all__ = [
    "PREMISE",
    "UTILITY_NOTE",
    "annotate_certificate",
    "measure",
    "measure_slices",
    "read_certificate",
    "utility_of",
]

UTILITY_NOTE = (
    "mean over the K models of accuracy on the records each model did not train on (held out) "
    "and on its training records; majority_class_rate: held-out accuracy of always guessing the most "
    "frequent class of the training half"
)
PREMISE = (
    "the model is trained on a uniformly random half of a pool of {n} records (the MIP game, "
    "docs/theory.md section 1); the guarantee bounds what an attacker learns about whether a record of the "
    "pool is in that half"
)
BOOTSTRAP_STREAM = 0xB007
"""Spawn key of the bootstrap's random stream, next to the audit's seed."""
SLICES_STREAM = 0x511CE
"""Spawn key of the per-subgroup bootstrap's stream (its own, so the headline's numbers do not move)."""


def measure(inputs: AttackInputs, config: AuditConfig) -> tuple[dict, dict, dict, dict]:
    """Score every attack of ``config`` on ``inputs``, summarise it and compute the headline statistics.

    Parameters
    ----------
    inputs : AttackInputs
        The models' outputs and memberships; its ``random_state`` draws the cross-fitting folds.
    config : AuditConfig
        Its ``seed`` seeds the bootstrap (its own stream), ``n_boot`` and ``confidence`` size it.

    Returns
    -------
    scores, settings, summaries, stats : dict
        Per-attack ``(T, n)`` scores, the attacks' settings, :class:`AttackSummary` per row and
        :func:`mipkit.workflows.audit.verdict.headline_statistics`.
    """
    scores, settings = run_score_attacks(inputs, config.attacks)
    targets = np.asarray(inputs.targets)
    T, n = targets.size, inputs.y.size
    labels = inputs.in_mask[targets]
    groups = np.repeat(targets, n).reshape(T, n)
    summaries = {
        name: summarize_attack(
            s.ravel(),
            labels.ravel().astype(int),
            name=name,
            groups=groups.ravel(),
            fprs=config.fprs,
            base_rates=config.base_rates,
            random_state=inputs.random_state,
        )
        for name, s in scores.items()
    }
    stats = headline_statistics(
        summaries,
        scores,
        labels,
        confidence=config.confidence,
        n_boot=config.n_boot,
        random_state=np.random.default_rng(np.random.SeedSequence([config.seed, BOOTSTRAP_STREAM])),
    )
    return scores, settings, summaries, stats


def measure_slices(
    config: AuditConfig,
    records: RecordInfo,
    scores: Mapping[str, np.ndarray],
    summaries: Mapping[str, AttackSummary],
    labels: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
    *,
    label: str = "label",
) -> SliceSummary | None:
    """Per-subgroup metrics of the strongest attack (largest held-out eta): by true class (the column
    ``label``, the target's name) and by every ``slice_by`` column, with the audit's own hard guesses and the
    two-way cluster bootstrap restricted to each subgroup's records (:func:`mipkit.metrics.slices.
    slice_summary`). None without a score attack."""
    if not summaries:
        return None
    best = max(summaries, key=lambda a: summaries[a].eta.eta)  # the first one on a tie, as AuditResult
    T, n = labels.shape
    groups = {label: np.asarray(classes)[y].astype(str), **records.slices}
    return slice_summary(
        scores[best],
        labels,
        groups,
        guesses=summaries[best].guesses.reshape(T, n),
        features={label: False, **records.slice_features},
        kinds={label: "true class"},
        fprs=config.fprs,
        confidence=config.confidence,
        n_boot=config.n_boot,
        attack=best,
        random_state=np.random.default_rng(np.random.SeedSequence([config.seed, SLICES_STREAM])),
    )


def utility_of(probs: np.ndarray, y: np.ndarray, in_mask: np.ndarray) -> dict:
    """Accuracy of the models on held-out and training records beside the majority-class rate.

    ``accuracy_nonmembers = mean_k mean_{i not in D_k} [argmax p_k(x_i) = y_i]``; ``majority_class_rate`` is
    the same mean for the rule "always the most frequent class of ``D_k``". A model not better than that rule
    did not learn, and a low leak then says little (``warning``).
    """
    K = probs.shape[0]
    correct = probs.argmax(axis=2) == y[None, :]
    majority = []
    for k in range(K):
        top = np.bincount(y[in_mask[k]], minlength=probs.shape[2]).argmax()
        majority.append(float(np.mean(y[~in_mask[k]] == top)))
    acc = float(np.mean([correct[k, ~in_mask[k]].mean() for k in range(K)]))
    rate = float(np.mean(majority))
    out: dict[str, Any] = {
        "accuracy_nonmembers": acc,
        "accuracy_members": float(np.mean([correct[k, in_mask[k]].mean() for k in range(K)])),
        "majority_class_rate": rate,
        "learns": bool(acc > rate),
        "note": UTILITY_NOTE,
    }
    if not out["learns"]:
        out["warning"] = (
            f"The models are right on {100 * acc:.1f}% of held-out records, no better than always guessing "
            f"the majority class ({100 * rate:.1f}%): they did not learn, so a low leak says little (scale "
            "the features or change the model's settings)."
        )
    return out


def read_certificate(
    trainer, ds: Dataset, train_idx: np.ndarray, seed: int, fprs: Sequence[float]
) -> dict | None:
    """Fit once and read the trainer's certificate, when its parameters suggest it carries one.

    The certificate protocol: a fitted trainer's ``certificate_`` with ``to_dict()`` (or attributes) holding
    at least ``eta`` (and ``exact``); where it is f-DP, a ``tradeoff_curve`` (a
    :class:`mipkit.accounting.TradeoffCurve` for the replace-one relation that matches the fixed-size-halves
    game) whose ``tpr(FPR) = 1 - f(FPR)`` is the certified TPR at each FPR.
    """
    est = trainer.build(seed)
    params = est.get_params(deep=True) if hasattr(est, "get_params") else {}
    keys = {str(k).rsplit("__", 1)[-1] for k in params}
    if isinstance(params.get("params"), dict):  # ScaledTrainer: the inner trainer's parameters
        keys |= set(params["params"])
    hints = {"eta", "target_eta", "epsilon", "noise_multiplier", "certificate"}
    if not (hints & keys) and not hasattr(type(est), "certificate_"):
        return None
    est.fit(ds.X[train_idx], ds.y[train_idx])
    cert = getattr(est, "certificate_", None)
    if cert is None:
        return None
    raw = cert.to_dict() if hasattr(cert, "to_dict") else {}
    eta = raw.get("eta", getattr(cert, "eta", None))
    if eta is None:
        return None
    out: dict[str, Any] = {"eta": float(eta), "source": type(est).__name__}
    for key in ("exact", "calibration", "sigma_source", "epsilon", "delta", "noise_multiplier", "relation"):
        val = raw.get(key, getattr(cert, key, None))
        if isinstance(val, (int, float, str, bool, np.floating, np.integer)):
            out[key] = val.item() if isinstance(val, np.generic) else val
    if isinstance(raw.get("certified"), dict):  # DP-SGD: certified eta, advantage, TPR at FPR, epsilon
        out["certified"] = raw["certified"]
    curve = getattr(cert, "tradeoff_curve", None)
    if curve is not None:
        out["tradeoff"] = type(curve).__name__
        out["tpr_bound"] = {f"{f:g}": float(np.asarray(curve.tpr(f))) for f in fprs}
        grid = np.logspace(-5, 0, 80)
        out["tpr_bound_curve"] = {"fpr": grid, "tpr": np.asarray(curve.tpr(grid), dtype=float)}
    return out


def annotate_certificate(cert: dict | None, n: int, fprs: Sequence[float]) -> dict | None:
    """Add the certificate's premise, whether it is exact, and the certified TPR at each FPR.

    Without a trade-off curve the certified TPR is ``min(1, FPR + 2 eta)`` (eta alone: an attacker may find
    a fraction ``2 eta`` of the members at zero false alarms; docs/theory.md section 1).
    """
    if cert is None:
        return None
    cert = dict(cert)
    cert["premise"] = PREMISE.format(n=n)
    exact = cert.get("exact")
    if exact is True:
        cert["exactness"] = "exact: a theorem for this release"
    elif exact is False:
        cert["exactness"] = (
            "approximate: it rests on an estimated sigma, so an attack may exceed it; a measurement above it "
            "is a finding to investigate"
        )
    else:
        cert["exactness"] = "not stated: the certificate does not say whether it is exact"
    if "tpr_bound" not in cert:
        cert["tpr_bound"] = {f"{f:g}": min(1.0, f + 2 * cert["eta"]) for f in fprs}
        cert["tpr_bound_rule"] = "FPR + 2 eta (eta alone; docs/theory.md section 1)"
    else:
        cert["tpr_bound_rule"] = "1 - f(FPR) of the certified trade-off curve (docs/theory.md section 3)"
    return cert
