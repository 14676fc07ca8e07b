"""Audit one fitted model from its per-record outputs: scores in, metrics and a report out.

:func:`audit_scores` takes what any framework can write down for the records it audits - the true label,
whether the record was in the model's training data (``member``, 0/1) and the model's output on it (class
probabilities, logits or a per-record loss) - and, optionally, the outputs of *reference models* trained by
the same procedure with known memberships: a predictions table (a CSV/Parquet path or a DataFrame, its
columns named by :class:`~mipkit.workflows.audit_scores.config.AuditScoresConfig`) or
:class:`~mipkit.workflows.audit_scores.outputs.Predictions` (arrays). It runs the attacks these outputs
allow (:mod:`mipkit.workflows.audit_scores.attacks`).

Metrics: :func:`mipkit.metrics.attack_summary.summarize_attack` per attack row (eta from hard guesses with a
threshold cross-fitted over two random halves of the records) and
:func:`mipkit.workflows.audit.verdict.headline_statistics` for the intervals: with one target model its
two-way bootstrap resamples records only, which is the valid interval here (the trials are the independent
records of one model), simultaneous over the attacks (docs/theory.md section 11).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Progress, Tally
from mipkit._validation import MipkitValueError
from mipkit.engine.ledger import hash_array
from mipkit.metrics.attack_summary import summarize_attack
from mipkit.workflows.audit.result import FITTED_MODEL
from mipkit.workflows.audit.verdict import headline_statistics, provenance, verdict
from mipkit.workflows.audit_scores.attacks import (
    attack_scores,
    balanced_trials,
    check_attacks_can_run,
    utility,
)
from mipkit.workflows.audit_scores.config import AuditScoresConfig, MeasureConfig
from mipkit.workflows.audit_scores.outputs import Predictions, as_proba, binary
from mipkit.workflows.audit_scores.records import fitted_slices, scores_table
from mipkit.workflows.audit_scores.result import RECORD_BOOTSTRAP_METHOD, AuditScoresResult

__all__ = ["audit_scores", "measure"]

EVAL_STREAM, BOOT_STREAM, SLICES_STREAM = 0xE7A1, 0xB007, 0x51CE


def audit_scores(
    data: Predictions | pd.DataFrame | str | Path,
    config: AuditScoresConfig | None = None,
    *,
    progress: Progress | None = None,
) -> AuditScoresResult:
    """Audit one fitted model from its outputs on members and non-members (see the module docstring).

    Parameters
    ----------
    data : Predictions, DataFrame or path
        The predictions: arrays (:class:`~mipkit.workflows.audit_scores.outputs.Predictions`), or a table
        with one row per record (a DataFrame, or a CSV/Parquet file) read by
        :func:`~mipkit.workflows.audit_scores.file.read_predictions` with the columns ``config`` names.
    config : AuditScoresConfig, optional
        The measurement and the column mapping (default: ``AuditScoresConfig()``).
    progress : Progress, optional
        ``progress("audit steps", done, 3)`` over the audit's three steps (attacks, intervals, subgroups).

    Returns
    -------
    AuditScoresResult
        ``question`` is "this fitted model"; ``skipped`` says which attacks did not run and why. Write its
        run folder with ``result.write(out)``.
    """
    config = AuditScoresConfig() if config is None else config
    if not isinstance(data, Predictions):
        from mipkit.workflows.audit_scores.file import read_predictions

        data = read_predictions(data, config)
    return AuditScoresResult(**measure(data, config, progress=progress))


def _target_arrays(data: Predictions) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(member, probabilities, labels, kind)`` of the audited model, checked."""
    mem = np.asarray(data.member)
    n = mem.shape[0] if mem.ndim == 1 else -1
    if n < 4:
        raise MipkitValueError("audit_scores needs a 1-D member array over at least 4 records.")
    mem = binary(mem, n, "member column")
    if mem.all() or not mem.any():
        raise MipkitValueError("The audited records must include both members (1) and non-members (0).")
    kind = data.outputs.kind
    target = as_proba(data.outputs, n, None, "the target model")
    y = np.zeros(n, dtype=np.int64) if kind == "loss" else np.asarray(data.labels)
    if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= target.shape[1]:
        raise MipkitValueError(f"The labels must be {n} integer class codes in 0..{target.shape[1] - 1}.")
    return mem, target, y, kind


def _stacked(
    data: Predictions, mem: np.ndarray, target: np.ndarray, kind: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(probs, in_mask)``: the target's and the reference models' probabilities ``(1 + R, n, C)`` and who
    trained on what ``(1 + R, n)``."""
    n = mem.size
    probs, in_mask = [target], [mem]
    for k, out in enumerate(data.reference):
        if out.kind != kind:
            raise MipkitValueError(f"Reference model {k} gives {out.kind}; the target model gives {kind}.")
        probs.append(as_proba(out, n, target.shape[1], f"reference model {k}"))
        in_mask.append(np.zeros(n, bool) if out.member is None else binary(out.member, n, f"ref{k} member"))
    return np.stack(probs), np.vstack(in_mask)


def _summaries(scores: dict, mem: np.ndarray, game: np.ndarray, config: MeasureConfig) -> dict:
    """Each attack row's ROC metrics, TPR at the FPRs, cross-fitted eta and precision, on the game."""
    eval_rng = np.random.default_rng(np.random.SeedSequence([config.seed, EVAL_STREAM]))
    return {
        row: summarize_attack(
            s.ravel()[game],
            mem[game].astype(int),
            name=row,
            fprs=config.fprs,
            base_rates=config.base_rates,
            random_state=eval_rng,
        )
        for row, s in scores.items()
    }


def _setup(
    data: Predictions, in_mask: np.ndarray, n_classes: int | None, kind: str, game: np.ndarray
) -> dict:
    """The design of the audit (``results.json``'s ``design``)."""
    mem, refs = in_mask[0], in_mask[1:]
    n = mem.size
    balance = (
        "equal numbers of members and non-members (the MIP game's prior 1/2)"
        if 2 * int(mem.sum()) == n
        else f"unequal numbers of members and non-members: the metrics are measured on all {game.size // 2} "
        "records of the smaller side and as many of the larger, drawn at random (seeded), the MIP game's "
        "prior 1/2; the per-record scores cover every record"
    )
    return {
        "question": FITTED_MODEL,
        "outputs": kind,
        "n_records": n,
        "members": int(mem.sum()),
        "nonmembers": int((~mem).sum()),
        "n_classes": n_classes if kind != "loss" else None,
        "n_reference_models": int(refs.shape[0]),
        "reference_models_in": int(refs.any(axis=1).sum()),
        "interval": RECORD_BOOTSTRAP_METHOD,
        "balance": balance,
        "game_records": int(game.size),
        **dict(data.design),
    }


def measure(data: Predictions, config: MeasureConfig, *, progress: Progress | None = None) -> dict[str, Any]:
    """The fields of an :class:`~mipkit.workflows.audit_scores.result.AuditScoresResult` (or of a result
    built on it) measured on ``data`` with the settings of ``config``."""
    steps = Tally(progress, "audit steps", 3)  # attacks, intervals, subgroups
    mem, target, y, kind = _target_arrays(data)
    probs, in_mask = _stacked(data, mem, target, kind)
    records = data.record_info(mem.size)
    check_attacks_can_run(config.attacks, probs.shape[0] - 1)
    inputs, scores, settings, skipped = attack_scores(probs, y, in_mask, config.attacks)
    steps.add()
    game = balanced_trials(mem, config.seed)  # the metrics: a game at the MIP prior 1/2
    summaries = _summaries(scores, mem, game, config)
    stats = headline_statistics(
        summaries,
        {row: s[:, game] for row, s in scores.items()},
        mem[None, game],
        confidence=config.confidence,
        n_boot=config.n_boot,
        random_state=np.random.default_rng(np.random.SeedSequence([config.seed, BOOT_STREAM])),
    )
    stats["method"] = RECORD_BOOTSTRAP_METHOD
    steps.add()
    names = np.asarray([str(c) for c in data.classes]) if len(data.classes) else np.arange(target.shape[1])
    slices = fitted_slices(  # on the game's records, as the summaries whose guesses it reads
        {row: np.asarray(sc).reshape(-1)[game] for row, sc in scores.items()},
        summaries,
        mem[game],
        records.take(game),
        true_class=None if kind == "loss" else names[y][game],
        label_name=data.label_name,
        fprs=config.fprs,
        confidence=config.confidence,
        n_boot=config.n_boot,
        random_state=np.random.default_rng(np.random.SeedSequence([config.seed, SLICES_STREAM])),
        headline=stats,
    )
    steps.add()
    info = {"import_path": "fitted model", "params": {}, **dict(data.model_info)}
    info.setdefault("fingerprint", hash_array(target)[:16])
    digest = hash_array(np.concatenate([probs.ravel(), in_mask.ravel(), y.astype(float)]))
    return {
        "config": config,
        "summaries": summaries,
        "games": {},
        "attack_settings": settings,
        "certificate": None,
        "utility": utility(target, y, mem, kind, inputs.loss[0]),
        "setup": _setup(data, in_mask, int(target.shape[1]), kind, game),
        "trainer": info,
        "scores": scores_table(scores, summaries, mem, records),
        "trial_scores": scores,
        "in_mask": in_mask,
        "data_sha256_16": digest[:16],
        "headline": stats,
        "verdict": verdict(
            stats, fail_metric=config.fail_metric, fail_above=config.fail_above, certificate=None
        ),
        "provenance": provenance(digest, info),
        "question": FITTED_MODEL,
        "skipped": skipped,
        "slices": slices,
        "id_column": records.id_column,
    }
