"""Audit a training procedure: the membership game with reference models, the registry's attacks, metrics and
a run folder.

The protocol is LiRA's evaluation (Carlini et al. 2022, Sec. 4.1 / Alg. 1 and the released code):

1. ``K`` models are trained, each on its own uniformly random half of the record pool
   (:func:`independent_halves`; see there why not LiRA's exactly balanced design), through
   :func:`mipkit.engine.runner.run_fits`, with a SQLite ledger in the run folder so that running the same
   audit again resumes without refitting.
2. Each of the first ``T`` models in turn is the *target*; the other ``K - 1`` are the attacker's
   *reference* models (leave-one-out over models). Every (target model, record) pair is a trial of the
   membership game with a known label ``in_mask[t, i]``; there are ``T n`` trials, about half members.
3. Each attack of :data:`mipkit.attacks.registry.ATTACKS` that the configuration names scores every record
   against every target model from the models' ``predict_proba`` outputs: LOSS (Yeom et al.), LiRA online and
   offline (Carlini et al.), RMIA online and offline (Zarifzadeh et al.; the population ``z`` is the whole
   record pool), and the LTU game (Pedersen, ch. 4-5; loss strategy on the same fits, or retraining).
4. Scores are pooled over targets and summarised by :func:`mipkit.metrics.attack_summary.summarize_attack`:
   AUC, TPR at low FPR, the empirical eta of hard guesses made with a threshold cross-fitted across target
   models, balanced accuracy, and precision at base rates.
5. The headline intervals are a two-way cluster bootstrap over target models and records, simultaneous over
   the attacks (:mod:`mipkit.workflows.audit.verdict`, docs/theory.md section 11); the verdict compares them
   with the stated policy and the trainer's certificate.

:func:`audit` returns an :class:`~mipkit.workflows.audit.result.AuditResult`; given a run folder it writes
there ``config.json``, ``results.json`` (kind ``"audit"``), ``scores.parquet`` (one row per record: per-attack
vulnerability, named by its ``row`` in the table as read and, with an id column, its id), ``ledger.sqlite``
and ``report.html``. The strongest attack's metrics are also reported per subgroup of records (true class and
``slice_by`` columns; :func:`mipkit.metrics.slices.slice_summary`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._progress import Progress
from mipkit._random import spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.attacks.ltu import LTUResult
from mipkit.attacks.registry import ATTACKS, AttackInputs
from mipkit.data.io import Dataset
from mipkit.workflows._records import LabelledTable
from mipkit.workflows.audit.config import AuditConfig, RecordInfo
from mipkit.workflows.audit.data import check_dataset, data_hash, data_sha256, dataset_and_records
from mipkit.workflows.audit.measure import (
    annotate_certificate,
    measure,
    measure_slices,
    read_certificate,
    utility_of,
)
from mipkit.workflows.audit.result import AuditResult, vulnerability_table
from mipkit.workflows.audit.verdict import provenance, verdict

__all__ = ["audit", "independent_halves"]

LEDGER_FILE = "ledger.sqlite"
PROTOCOL = (
    "leave-one-out over models: each target model attacked with the other K-1 as references; "
    "scores pooled over targets; eta threshold cross-fitted across target models"
)


@dataclass(frozen=True)
class _Game:
    """The audit's layout: who trains on what, the fits, and the stream of the evaluation's draws."""

    in_mask: np.ndarray
    tasks: list
    eval_rng: np.random.Generator


def independent_halves(n_records: int, n_models: int, *, random_state) -> np.ndarray:
    """``in_mask`` (n_models, n_records): each model trains on its own uniformly random half of the records.

    This is the MIP game of Izzo et al. (Def. 1: ``D_train`` a uniformly random subset of size ``n/2``),
    drawn independently for every model. LiRA's exactly balanced design (every record IN for exactly ``K/2``
    models, :func:`mipkit.game.splits.balanced_membership`) is not used here on purpose: with leave-one-out
    over models, a record's number of IN reference models would then be ``K/2 - 1`` when it is a member of
    the target and ``K/2`` when it is not, so the reference set itself would reveal the answer (an attack
    counting IN references is always right, and the reference means shift by one model in ``K - 1``).
    With independent halves the target's membership is independent of the references' (up to the fixed
    half size, an ``O(1/n)`` effect).
    """
    from mipkit.game.splits import independent_halves as draw_independent_halves

    return draw_independent_halves(n_records, n_models, random_state=random_state)


def audit(
    data: LabelledTable | Dataset,
    config: AuditConfig | None = None,
    *,
    run_dir: str | Path | None = None,
    progress: Progress | None = None,
    report: bool = True,
) -> AuditResult:
    """Audit the training procedure of ``config`` on the records ``data``.

    Parameters
    ----------
    data : LabelledTable or Dataset
        The record pool: a table (a file or a DataFrame) with its label column and, optionally, an id column
        (:class:`~mipkit.workflows._records.LabelledTable`), or arrays (:class:`~mipkit.data.io.Dataset`).
    config : AuditConfig, optional
        Every setting (default ``AuditConfig()``).
    run_dir : path, optional
        Run folder (created if needed): the fits are committed to its ledger as they finish, so that the
        same audit run again resumes from it, and the result is written there (:meth:`AuditResult.write`).
        Without it nothing is written.
    progress : Progress, optional
        ``progress("model fits", done, total)`` over the fits, handed to
        :func:`mipkit.engine.runner.run_fits` (the library draws nothing itself).
    report : bool
        With ``run_dir``, also render ``report.html``.

    Returns
    -------
    AuditResult
        ``result.summary()`` the plain paragraph; ``result.to_dict()`` what ``results.json`` holds;
        ``result.to_frame()`` one row per attack; ``result.scores`` the per-record table (with ``row``, the
        record's position in the table as read, and the ids of the id column); ``result.slices_frame()``
        the per-subgroup metrics.
    """
    config = AuditConfig() if config is None else config
    if not isinstance(config, AuditConfig):
        raise MipkitValueError(f"The config of audit must be an AuditConfig. Got {type(config).__name__}.")
    data = LabelledTable.of(data)
    trainer = _trainer(config)
    ds, records = dataset_and_records(data, config)
    check_dataset(ds)
    game = _game(ds.y.size, config)
    probs, run_key = _fit(trainer, ds, game, config, run_dir, progress)
    result = _result(trainer, data, ds, records, game, probs, run_key, config)
    if run_dir is not None:
        result = replace(result, run_dir=Path(run_dir))
        result.write(run_dir, report=report)
    return result


def _trainer(config: AuditConfig):
    """The trainer of ``config`` (inside a standardising pipeline with ``scale``)."""
    from mipkit.game.trainers import resolve_trainer

    if config.scale:
        from mipkit.workflows.audit.scaled import SCALED_TRAINER

        return resolve_trainer(SCALED_TRAINER, {"model": config.model, "params": config.params})
    return resolve_trainer(config.model, config.params)


def _game(n: int, config: AuditConfig) -> _Game:
    """The membership matrix, one fit per model with its seed, and the evaluation's stream, from the seed."""
    from mipkit.engine.runner import FitTask

    ss_members, ss_fits, ss_eval = np.random.SeedSequence(config.seed).spawn(3)
    in_mask = independent_halves(n, config.n_models, random_state=np.random.default_rng(ss_members))
    seeds = spawn_seeds(ss_fits, config.n_models)
    tasks = [
        FitTask(index=k, train_idx=np.flatnonzero(in_mask[k]), seed=seeds[k]) for k in range(config.n_models)
    ]
    return _Game(in_mask=in_mask, tasks=tasks, eval_rng=np.random.default_rng(ss_eval))


def _fit(
    trainer, ds: Dataset, game: _Game, config: AuditConfig, run_dir, progress: Progress | None
) -> tuple[np.ndarray, str]:
    """Every model's class probabilities on every record (read back from the run folder's ledger where it
    holds them), and the run key naming the fits."""
    from mipkit.engine.ledger import Ledger, make_run_key
    from mipkit.engine.runner import run_fits

    run_key = make_run_key(trainer, ds.X, ds.y, game.tasks, extra={"workflow": "audit-model-v1"})
    options = {"backend": config.backend, "n_jobs": config.n_jobs, "address": config.address}
    if run_dir is None:
        probs = run_fits(trainer, ds.X, ds.y, game.tasks, progress=progress, **options)
        return np.asarray(probs, dtype=float), run_key
    out = Path(run_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Ledger(out / LEDGER_FILE, run_key, info={"kind": "audit", "model": config.model}) as ledger:
        probs = run_fits(trainer, ds.X, ds.y, game.tasks, ledger=ledger, progress=progress, **options)
    return np.asarray(probs, dtype=float), run_key


def _ltu_retrain(trainer, ds: Dataset, in_mask: np.ndarray, config: AuditConfig, rng) -> LTUResult:
    """The LTU game with the retraining strategy (Pedersen Thm 4.2.4) against model 0's training half."""
    from mipkit.attacks.ltu import ltu_game

    return ltu_game(
        trainer,
        ds.X,
        ds.y,
        defender_idx=np.flatnonzero(in_mask[0]),
        reserve_idx=np.flatnonzero(~in_mask[0]),
        strategy="retrain",
        n_rounds=config.ltu_rounds or 50,
        random_state=spawn_seeds(rng, 1)[0],
        n_jobs=config.n_jobs,
    )


def _games(trainer, ds: Dataset, inputs: AttackInputs, game: _Game, config: AuditConfig) -> dict:
    """The pairwise games of ``config.attacks`` (LTU: on the audit's fits, or retraining)."""
    games: dict[str, LTUResult] = {}
    for spec in (ATTACKS[name] for name in config.attacks if ATTACKS[name].family == "game"):
        if config.ltu_strategy == "retrain":  # the only game is LTU; its retraining strategy refits
            games[spec.name] = _ltu_retrain(trainer, ds, game.in_mask, config, game.eval_rng)
        else:
            games[spec.name] = spec.score(inputs).game
    return games


def _certificate(trainer, ds: Dataset, game: _Game, config: AuditConfig) -> dict | None:
    """The certificate drawn next to the measurement: the configured eta, or the trainer's own."""
    if config.certified_eta is not None:
        certificate = {"eta": config.certified_eta, "source": "certified_eta in the configuration"}
    else:
        first = game.tasks[0]
        certificate = read_certificate(trainer, ds, first.train_idx, first.seed, config.fprs)
    return annotate_certificate(certificate, ds.y.size, config.fprs)


def _trainer_info(trainer, config: AuditConfig) -> dict[str, Any]:
    info = {"import_path": config.model, "params": config.params, "fingerprint": trainer.fingerprint()}
    if config.scale:
        info["preprocessing"] = "StandardScaler inside the trainer (fitted on each training half)"
    return info


def _setup(ds: Dataset, config: AuditConfig, labels: np.ndarray) -> dict[str, Any]:
    """The game's layout, written to ``results.json`` as ``"game"``."""
    n, T = ds.y.size, config.n_targets_used
    return {
        "n_records": n,
        "n_features": int(ds.X.shape[1]),
        "n_classes": len(ds.classes),
        "n_models": config.n_models,
        "n_targets": T,
        "trials": int(T * n),
        "members": int(labels.sum()),
        "protocol": PROTOCOL,
    }


def _result(
    trainer,
    data: LabelledTable,
    ds: Dataset,
    records: RecordInfo,
    game: _Game,
    probs: np.ndarray,
    run_key: str,
    config: AuditConfig,
) -> AuditResult:
    """Attack, measure and judge the fits: the :class:`AuditResult` (nothing written)."""
    targets = np.arange(config.n_targets_used)
    inputs = AttackInputs(
        probs=probs, y=ds.y, in_mask=game.in_mask, targets=targets, random_state=game.eval_rng
    )
    scores, settings, summaries, stats = measure(inputs, config)
    labels = game.in_mask[targets]
    label = data.target or "label"
    slices = measure_slices(config, records, scores, summaries, labels, ds.y, ds.classes, label=label)
    games = _games(trainer, ds, inputs, game, config)
    certificate = _certificate(trainer, ds, game, config)
    info = _trainer_info(trainer, config)
    table = vulnerability_table(
        scores, summaries, labels, ds.y, ds.classes, include_labels=config.include_labels, records=records
    )
    decision = verdict(
        stats, fail_metric=config.fail_metric, fail_above=config.fail_above, certificate=certificate
    )
    # the fields by what they are: set-up; what was measured; what it concludes; per record; identity
    return AuditResult(
        config=config, setup=_setup(ds, config, labels), trainer=info,
        provenance=provenance(data_sha256(ds), info),
        summaries=summaries, games=games, attack_settings=settings, headline=stats, slices=slices,
        utility=utility_of(probs, ds.y, game.in_mask), certificate=certificate, verdict=decision,
        scores=table, trial_scores=scores, in_mask=game.in_mask, id_column=records.id_column,
        run_key=run_key, data_sha256_16=data_hash(ds), data_source=data.describe(),
    )  # fmt: skip
