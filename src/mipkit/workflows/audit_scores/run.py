"""Audit one fitted model from its per-record outputs: scores in, metrics and a report out.

:func:`audit_predictions` takes what any framework can write down for the records it audits - the true
label, whether the record was in the model's training data (``member``, 0/1) and the model's output on it
(class probabilities, logits or a per-record loss) - and, optionally, the outputs of *reference models*
trained by the same procedure with known memberships. It runs the attacks of
:data:`mipkit.attacks.registry.ATTACKS` that these outputs allow, with the registry's own code:

* LOSS (Yeom et al. 2018) always: it needs the target model's outputs only;
* LiRA (Carlini et al. 2022) and RMIA (Zarifzadeh et al. 2024), offline with at least two reference models,
  online too when some reference models were trained on audited records (``reference member`` = 1).

The game has one target model (index 0 of the registry's ``(K, n, C)`` layout) and ``n`` records; the
reference models are models ``1..R``. A per-record loss ``l`` is turned into the two-column probabilities
``(exp(-l), 1 - exp(-l))`` of label 0, so that the registry's cross-entropy signal is ``l`` itself (exact for
a cross-entropy loss, ``-log p_y``; clipped at about 708), LiRA's logit-scaled confidence is
``log(p / (1 - p))`` with ``p = exp(-l)`` and RMIA's probability is ``exp(-l)``.

Metrics: :func:`mipkit.metrics.attack_summary.summarize_attack` per attack row (eta from hard guesses with a
threshold cross-fitted over two random halves of the records) and
:func:`mipkit.workflows.audit.verdict.headline_statistics` for the intervals: with one target model its
two-way bootstrap resamples records only, which is the valid interval here (the trials are the independent
records of one model), simultaneous over the attacks (docs/theory.md section 11).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import softmax

from mipkit._validation import MipkitValueError
from mipkit.attacks.registry import ATTACKS, AttackInputs, _finite, run_score_attacks
from mipkit.engine.ledger import hash_array
from mipkit.metrics.attack_summary import summarize_attack
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows.audit.config import AuditConfig, RecordInfo, check_measurement
from mipkit.workflows.audit.verdict import check_policy, headline_statistics, provenance, verdict
from mipkit.workflows.audit_fitted.records import fitted_slices, scores_table
from mipkit.workflows.audit_fitted.result import FITTED_MODEL, RECORD_BOOTSTRAP_METHOD, FittedAuditResult

__all__ = ["MIN_REFERENCE_MODELS", "PROBA_TOLERANCE", "ModelOutputs", "audit_predictions", "loss_to_proba"]

PROBA_TOLERANCE = 1e-3
"""Largest accepted ``|sum_c p_c - 1|`` of a row of class probabilities (rounding in a CSV file)."""
MIN_REFERENCE_MODELS = 2
"""LiRA fits a Gaussian per record to the reference models' confidences: at least two are needed."""
EVAL_STREAM, BOOT_STREAM, SLICES_STREAM, BALANCE_STREAM = 0xE7A1, 0xB007, 0x51CE, 0xBA1A


def balanced_trials(member: np.ndarray, seed: int) -> np.ndarray:
    """Indices of a game with the MIP prior 1/2: every record of the smaller side (members or
    non-members) and as many of the larger side, drawn at random (seeded); all records when equal.

    Eta is accuracy - 1/2 in a game where a record is a member with probability 1/2 (docs/theory.md
    section 1); measured on an 80/20 mix, the accuracy of cross-fitted guesses is not that game's and a model
    that leaks nothing can show an interval away from 0.
    """
    members, others = np.flatnonzero(member), np.flatnonzero(~member)
    if members.size == others.size:
        return np.arange(member.size)
    small, large = (members, others) if members.size < others.size else (others, members)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), BALANCE_STREAM]))
    return np.sort(np.concatenate([small, rng.choice(large, size=small.size, replace=False)]))


@dataclass(frozen=True)
class ModelOutputs:
    """One model's outputs on the ``n`` audited records: exactly one of ``proba``, ``logits``, ``loss``.

    Attributes
    ----------
    proba : array of shape (n, C), optional
        Class probabilities (rows in [0, 1] summing to 1 within :data:`PROBA_TOLERANCE`).
    logits : array of shape (n, C), optional
        Pre-softmax scores.
    loss : array of shape (n,), optional
        A per-record loss (>= 0; read as a negative log-likelihood, see the module docstring).
    member : bool array of shape (n,), optional
        For a reference model: which audited records it was trained on (default: none, an offline
        reference model).
    """

    proba: Any = None
    logits: Any = None
    loss: Any = None
    member: Any = None

    @property
    def kind(self) -> str:
        given = [k for k in ("proba", "logits", "loss") if getattr(self, k) is not None]
        if len(given) != 1:
            raise MipkitValueError(
                "Model outputs must be exactly one of proba, logits or loss. Got "
                f"{', '.join(given) if given else 'none'} instead."
            )
        return given[0]


def loss_to_proba(loss: np.ndarray) -> np.ndarray:
    """``(..., n) -> (..., n, 2)``: ``(exp(-l), 1 - exp(-l))``, the probabilities of label 0 whose
    cross-entropy is ``l`` (``-expm1(-l)`` keeps the second column exact for small losses)."""
    loss = np.asarray(loss, dtype=float)
    return np.stack([np.exp(-loss), -np.expm1(-loss)], axis=-1)


def _as_proba(out: ModelOutputs, n: int, n_classes: int | None, who: str) -> np.ndarray:
    kind = out.kind
    arr = np.asarray(getattr(out, kind), dtype=float)
    if kind == "loss":
        if arr.shape != (n,):
            raise MipkitValueError(f"The loss of {who} must have shape ({n},). Got {arr.shape} instead.")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise MipkitValueError(f"The loss of {who} must be finite and >= 0 on every record.")
        return loss_to_proba(arr)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 2:
        raise MipkitValueError(f"The {kind} of {who} must have shape ({n}, C >= 2). Got {arr.shape} instead.")
    if n_classes is not None and arr.shape[1] != n_classes:
        raise MipkitValueError(
            f"The {kind} of {who} have {arr.shape[1]} columns; the target's have {n_classes}."
        )
    if not np.all(np.isfinite(arr)):
        raise MipkitValueError(f"The {kind} of {who} must be finite (no NaN or infinity).")
    if kind == "logits":
        return softmax(arr, axis=1)
    outside = np.flatnonzero(np.any((arr < 0) | (arr > 1), axis=1))
    if outside.size:
        raise MipkitValueError(
            f"The probabilities of {who} must lie in [0, 1]; {outside.size} record(s) do not (first: record "
            f"{outside[0] + 1})."
        )
    off = np.abs(arr.sum(axis=1) - 1.0)
    if off.max() > PROBA_TOLERANCE:
        raise MipkitValueError(
            f"The probabilities of {who} must sum to 1 on every record (within {PROBA_TOLERANCE:g}); record "
            f"{int(np.argmax(off)) + 1} is off by {off.max():.3g}."
        )
    return arr


def _binary(values: Any, n: int, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape != (n,):
        raise MipkitValueError(f"The {what} must have shape ({n},). Got {arr.shape} instead.")
    if arr.dtype != bool:
        num = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=float)
        if np.any(~np.isin(num, (0.0, 1.0))):
            raise MipkitValueError(f"The {what} must be 0 or 1 on every record (no missing values).")
        arr = num == 1.0
    return arr


def _reference_plan(requested: Sequence[str], ref_member: np.ndarray | None) -> tuple[list[str], dict]:
    """Which requested attacks run, and why the others are skipped."""
    run, skipped = [], {}
    for name in requested:
        spec = ATTACKS[name]
        if spec.family != "score":
            skipped[name] = "a pairwise game that needs the training procedure, not one fitted model"
        elif "reference models" not in spec.needs:
            run.append(name)
        elif ref_member is None or ref_member.shape[0] < MIN_REFERENCE_MODELS:
            got = 0 if ref_member is None else ref_member.shape[0]
            for row in spec.rows:
                skipped[row] = (
                    f"needs the outputs of at least {MIN_REFERENCE_MODELS} reference models trained like the "
                    f"target (got {got})"
                )
        else:
            run.append(name)
    if ref_member is not None and ref_member.shape[0] >= MIN_REFERENCE_MODELS and not ref_member.any():
        for name in run:
            for row in ATTACKS[name].rows:
                if row.endswith("-online"):
                    skipped[row] = (
                        "online attacks need reference models trained on the audited records (IN); these "
                        "reference models never saw them (offline)"
                    )
    return run, skipped


def _offline_scores(inputs: AttackInputs, names: Sequence[str]) -> tuple[dict, dict]:
    """LOSS and the offline rows of LiRA and RMIA when no reference model was trained on an audited record.

    The registry computes the online rows with the offline ones, and online LiRA needs IN reference models;
    here the offline rows are computed with the same functions (:func:`mipkit.attacks.lira.lira_offline`,
    :func:`mipkit.attacks.rmia.rmia_scores`). RMIA's ``a`` cannot be tuned on these reference models (the
    authors tune it by attacking a reference model, which needs its members among the records), so it keeps
    :func:`mipkit.attacks.rmia.rmia_scores`' default 0.3.
    """
    from mipkit.attacks.lira import lira_offline
    from mipkit.attacks.rmia import rmia_scores

    scores, settings = run_score_attacks(inputs, [n for n in names if n == "loss"])
    r, member = inputs.references(0), inputs.in_mask
    if "lira" in names:
        conf = inputs.confidence
        scores["lira-offline"] = _finite(lira_offline(conf[0], conf[r], member[r])[None, :])
    if "rmia" in names:
        p = inputs.true_probability
        scores["rmia-offline"] = _finite(
            rmia_scores(p[0], p[r], member[r], p[0], p[r], online=False)[None, :]
        )
        settings = {
            **settings,
            "rmia_a": {"0": 0.3},
            "rmia_a_source": "default 0.3: offline reference models hold no audited record to tune it on",
            "rmia_population": "every audited record",
        }
    return scores, settings


def _utility(probs: np.ndarray, y: np.ndarray, member: np.ndarray, kind: str, loss: np.ndarray) -> dict:
    if kind == "loss":
        return {
            "mean_loss_members": float(loss[member].mean()),
            "mean_loss_nonmembers": float(loss[~member].mean()),
            "note": "mean per-record loss of the target model on its training records and on the others",
        }
    correct = probs.argmax(axis=1) == y
    top = np.bincount(y[member], minlength=probs.shape[1]).argmax()
    rate = float(np.mean(y[~member] == top))
    acc = float(correct[~member].mean())
    return {
        "accuracy_nonmembers": acc,
        "accuracy_members": float(correct[member].mean()),
        "majority_class_rate": rate,
        "learns": bool(acc > rate),
        "note": "accuracy of the target model on the non-members and on its training records (members)",
    }


def audit_predictions(
    labels: Any,
    member: Any,
    outputs: ModelOutputs,
    *,
    reference: Sequence[ModelOutputs] = (),
    ids: Any = None,
    records: RecordInfo | None = None,
    label_name: str = "label",
    classes: Sequence[Any] | None = None,
    attacks: Sequence[str] = ("loss", "lira", "rmia"),
    fprs: tuple[float, ...] = DEFAULT_FPRS,
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
    fail_above: float | None = None,
    fail_metric: str = "eta",
    model_info: Mapping[str, Any] | None = None,
    design: Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    write_report: bool = True,
    run_key: str = "",
) -> FittedAuditResult:
    """Audit one fitted model from its outputs on members and non-members (see the module docstring).

    Parameters
    ----------
    labels : int array of shape (n,)
        Class codes ``0..C-1`` (the columns of ``outputs``); ignored for a ``loss``.
    member : array of shape (n,)
        1 (True) if the record was in the target model's training data, else 0.
    outputs : ModelOutputs
        The target model's probabilities, logits or per-record loss.
    reference : sequence of ModelOutputs
        Reference models' outputs of the same kind, each with its ``member`` (default: all OUT).
    ids : array of shape (n,), optional
        Record ids (an ``id`` column), carried into the per-record table ``scores``.
    records : RecordInfo, optional
        Who the records are (rows, ids and the id column's name) and their ``slice_by`` values
        (:mod:`mipkit.workflows.audit_fitted.records`); replaces ``ids``.
    label_name : str
        The name of the true class in the subgroup table (the target column).
    classes : sequence, optional
        Class names of the columns (for the report).
    attacks : names of :data:`mipkit.attacks.registry.ATTACKS`
        Requested; those the outputs do not allow are listed in ``result.skipped`` with the reason.
    fprs, base_rates, confidence, n_boot, seed, fail_above, fail_metric
        As for :class:`mipkit.workflows.audit.config.AuditConfig`.
    model_info, design : dict, optional
        Describe the model and how the outputs were obtained (written to ``results.json``).
    out_dir : path, optional
        Write the run folder there (``results.json`` of kind ``"audit-fitted"``, ``scores.parquet``,
        ``report.html``).

    Returns
    -------
    FittedAuditResult
        ``question`` is "this fitted model"; ``skipped`` says which attacks did not run and why.
    """
    check_measurement(
        fprs=fprs,
        base_rates=base_rates,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        owner="audit_predictions",
    )
    mem = np.asarray(member)
    n = mem.shape[0] if mem.ndim == 1 else -1
    if n < 4:
        raise MipkitValueError("audit_predictions needs a 1-D member array over at least 4 records.")
    mem = _binary(mem, n, "member column")
    if mem.all() or not mem.any():
        raise MipkitValueError("The audited records must include both members (1) and non-members (0).")
    kind = outputs.kind
    target = _as_proba(outputs, n, None, "the target model")
    y = np.zeros(n, dtype=np.int64) if kind == "loss" else np.asarray(labels)
    if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= target.shape[1]:
        raise MipkitValueError(f"The labels must be {n} integer class codes in 0..{target.shape[1] - 1}.")
    refs, ref_member = [], []
    for k, out in enumerate(reference):
        if out.kind != kind:
            raise MipkitValueError(f"Reference model {k} gives {out.kind}; the target model gives {kind}.")
        refs.append(_as_proba(out, n, target.shape[1], f"reference model {k}"))
        ref_member.append(
            np.zeros(n, bool) if out.member is None else _binary(out.member, n, f"ref{k} member")
        )
    requested = tuple(dict.fromkeys(a.strip().lower() for a in attacks))
    unknown = [a for a in requested if a not in ATTACKS]
    if unknown or "loss" not in requested:
        raise MipkitValueError(f"The 'attacks' parameter must include loss, among {', '.join(ATTACKS)}.")
    metric = check_policy(fail_metric, fail_above, tuple(float(f) for f in fprs)) or "eta"
    run, skipped = _reference_plan(requested, np.array(ref_member) if refs else None)

    probs = np.stack([target, *refs])
    in_mask = np.vstack([mem[None, :], *([np.array(ref_member)] if refs else [])])
    ss = np.random.SeedSequence([int(seed), EVAL_STREAM])
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=np.array([0]), random_state=None)
    offline_only = bool(refs) and not np.array(ref_member).any()
    all_scores, settings = _offline_scores(inputs, run) if offline_only else run_score_attacks(inputs, run)
    scores = {row: s for row, s in all_scores.items() if row not in skipped}
    eval_rng = np.random.default_rng(ss)
    game = balanced_trials(mem, seed)  # the metrics: a game at the MIP prior 1/2
    summaries = {
        row: summarize_attack(
            s.ravel()[game],
            mem[game].astype(int),
            name=row,
            fprs=fprs,
            base_rates=base_rates,
            random_state=eval_rng,
        )
        for row, s in scores.items()
    }
    stats = headline_statistics(
        summaries,
        {row: s[:, game] for row, s in scores.items()},
        mem[None, game],
        confidence=confidence,
        n_boot=n_boot,
        random_state=np.random.default_rng(np.random.SeedSequence([int(seed), BOOT_STREAM])),
    )
    stats["method"] = RECORD_BOOTSTRAP_METHOD
    names = np.asarray([str(c) for c in classes]) if classes is not None else np.arange(target.shape[1])
    if records is None:
        records = RecordInfo(np.arange(n), *((np.asarray(ids), "id") if ids is not None else ()))
    if np.shape(records.rows) != (n,) or (records.ids is not None and np.shape(records.ids) != (n,)):
        raise MipkitValueError(f"The records' rows and ids must have one entry per record ({n}).")
    table = scores_table(scores, summaries, mem, records)
    slices = fitted_slices(  # on the game's records, as the summaries whose guesses it reads
        {row: np.asarray(sc).reshape(-1)[game] for row, sc in scores.items()},
        summaries,
        mem[game],
        records.take(game),
        true_class=None if kind == "loss" else names[y][game],
        label_name=label_name,
        fprs=tuple(float(f) for f in fprs),
        confidence=confidence,
        n_boot=n_boot,
        random_state=np.random.default_rng(np.random.SeedSequence([int(seed), SLICES_STREAM])),
    )
    info = {"import_path": "fitted model", "params": {}, **dict(model_info or {})}
    info.setdefault("fingerprint", hash_array(target)[:16])
    digest = hash_array(np.concatenate([probs.ravel(), in_mask.ravel(), y.astype(float)]))
    setup = {
        "question": FITTED_MODEL,
        "outputs": kind,
        "n_records": n,
        "members": int(mem.sum()),
        "nonmembers": int((~mem).sum()),
        "n_classes": int(target.shape[1]) if kind != "loss" else None,
        "n_reference_models": len(refs),
        "reference_models_in": int(np.array(ref_member).any(axis=1).sum()) if refs else 0,
        "interval": RECORD_BOOTSTRAP_METHOD,
        "balance": "equal numbers of members and non-members (the MIP game's prior 1/2)"
        if 2 * int(mem.sum()) == n
        else f"unequal numbers of members and non-members: the metrics are measured on all {game.size // 2} "
        f"records of the smaller side and as many of the larger, drawn at random (seeded), the MIP game's "
        "prior 1/2; the per-record scores cover every record",
        "game_records": int(game.size),
        **dict(design or {}),
    }
    config = AuditConfig(
        target="label",
        model=str(info["import_path"]),
        attacks=tuple(run),
        n_models=1 + len(refs),
        n_targets=1,
        seed=int(seed),
        fprs=tuple(float(f) for f in fprs),
        base_rates=tuple(float(b) for b in base_rates),
        confidence=float(confidence),
        fail_above=None if fail_above is None else float(fail_above),
        fail_metric=metric,
        n_boot=int(n_boot),
    )
    result = FittedAuditResult(
        config=config,
        summaries=summaries,
        games={},
        attack_settings=settings,
        certificate=None,
        utility=_utility(target, y, mem, kind, inputs.loss[0]),
        setup=setup,
        trainer=info,
        scores=table,
        trial_scores=scores,
        in_mask=in_mask,
        run_key=run_key,
        data_sha256_16=digest[:16],
        run_dir=None if out_dir is None else Path(out_dir),
        headline=stats,
        verdict=verdict(stats, fail_metric=metric, fail_above=config.fail_above, certificate=None),
        provenance=provenance(digest, info),
        question=FITTED_MODEL,
        skipped=skipped,
        slices=slices,
        id_column=records.id_column,
        settings={
            "attacks": list(requested),
            "fprs": list(config.fprs),
            "base_rates": list(config.base_rates),
            "confidence": config.confidence,
            "n_boot": config.n_boot,
            "seed": config.seed,
            "fail_above": config.fail_above,
            "fail_metric": metric,
        },
    )
    if out_dir is not None:
        result.write(out_dir, report=write_report)
    return result
