"""Audit a trained model: the membership game with reference models, the registry's attacks, metrics and a
run folder.

The protocol is LiRA's evaluation (Carlini et al. 2022, Sec. 4.1 / Alg. 1 and the released code):

1. ``K`` models are trained, each on its own uniformly random half of the record pool
   (:func:`independent_halves`; see there why not LiRA's exactly balanced design), through
   :func:`mipkit.engine.runner.run_fits` with a SQLite ledger so that re-running the same command resumes
   without refitting.
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

:func:`run_audit` returns an :class:`~mipkit.workflows.audit.result.AuditResult` and writes the run folder:
``config.json``, ``results.json`` (kind ``"audit"``), ``scores.parquet`` (one row per record: per-attack
vulnerability, named by its ``row`` in the table as read and, with ``id_column``, its id), ``ledger.sqlite``
and ``report.html``. The strongest attack's metrics are also reported per subgroup of records (true class and
``slice_by`` columns; :func:`mipkit.metrics.slices.slice_summary`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mipkit.attacks.ltu import LTUResult
from mipkit.attacks.registry import ATTACKS, AttackInputs
from mipkit.data.io import Dataset
from mipkit.workflows.audit.config import (
    AuditConfig,
    check_dataset,
    data_hash,
    data_sha256,
    dataset_and_records,
)
from mipkit.workflows.audit.measure import (
    annotate_certificate,
    measure,
    measure_slices,
    read_certificate,
    utility_of,
)
from mipkit.workflows.audit.result import AuditResult, vulnerability_table
from mipkit.workflows.audit.verdict import provenance, verdict

__all__ = ["AuditConfig", "AuditResult", "independent_halves", "run_audit"]

LEDGER_FILE = "ledger.sqlite"
PROTOCOL = (
    "leave-one-out over models: each target model attacked with the other K-1 as references; "
    "scores pooled over targets; eta threshold cross-fitted across target models"
)


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
        random_state=int(rng.integers(2**31 - 1)),
        n_jobs=config.n_jobs,
    )


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


def run_audit(
    config: AuditConfig,
    out_dir: str | Path,
    *,
    progress=None,
    dataset: Dataset | None = None,
    write_report: bool = True,
) -> AuditResult:
    """Run the audit described by ``config`` and write the run folder ``out_dir``.

    Parameters
    ----------
    config : AuditConfig
    out_dir : path
        Run folder; created if needed. Running again with the same config resumes from its ledger.
    progress : callable, optional
        ``progress(done, total)`` over the fits, handed to :func:`mipkit.engine.runner.run_fits` (the
        library draws nothing itself).
    dataset : Dataset or pandas.DataFrame, optional
        Arrays (or a table, read as ``config.data`` would be) to audit instead of reading ``config.data``.
    write_report : bool
        Also render ``report.html``.

    Returns
    -------
    AuditResult
        ``result.to_dict()`` is what ``results.json`` holds; ``result.to_frame()`` one row per attack;
        ``result.scores`` the per-record table (with ``row``, the record's position in the table as read,
        and the ids of ``config.id_column``); ``result.slices_frame()`` the per-subgroup metrics.
    """
    from mipkit.engine.ledger import Ledger, make_run_key
    from mipkit.engine.runner import FitTask, run_fits
    from mipkit.game.trainers import resolve_trainer

    config = config.validate()
    if config.scale:
        from mipkit.workflows.audit.scaled import SCALED_TRAINER

        trainer = resolve_trainer(SCALED_TRAINER, {"model": config.model, "params": config.params})
    else:
        trainer = resolve_trainer(config.model, config.params)
    ds, records = dataset_and_records(config, dataset)
    check_dataset(ds)
    X, y = ds.X, ds.y
    n = X.shape[0]
    K, T = config.n_models, config.n_targets
    ss = np.random.SeedSequence(config.seed)
    ss_members, ss_fits, ss_eval = ss.spawn(3)
    in_mask = independent_halves(n, K, random_state=np.random.default_rng(ss_members))
    fit_seeds = np.random.default_rng(ss_fits).integers(0, 2**31 - 1, size=K)
    tasks = [FitTask(index=k, train_idx=np.flatnonzero(in_mask[k]), seed=int(fit_seeds[k])) for k in range(K)]

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_key = make_run_key(trainer, X, y, tasks, extra={"workflow": "audit-model-v1"})
    digest = data_hash(ds)
    with Ledger(out / LEDGER_FILE, run_key, info={"kind": "audit", "model": config.model}) as ledger:
        probs = run_fits(
            trainer,
            X,
            y,
            tasks,
            ledger=ledger,
            backend=config.backend,
            n_jobs=config.n_jobs,
            address=config.address,
            progress=progress,
        )
    probs = np.asarray(probs, dtype=float)

    targets = np.arange(T)
    eval_rng = np.random.default_rng(ss_eval)
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=targets, random_state=eval_rng)
    scores, settings, summaries, stats = measure(inputs, config)
    labels = in_mask[targets]
    slices = measure_slices(config, records, scores, summaries, labels, y, ds.classes)
    games: dict[str, LTUResult] = {}
    for spec in (ATTACKS[name] for name in config.attacks if ATTACKS[name].family == "game"):
        if config.ltu_strategy == "retrain":  # the only game is LTU; its retraining strategy refits
            games[spec.name] = _ltu_retrain(trainer, ds, in_mask, config, eval_rng)
        else:
            games[spec.name] = spec.score(inputs).game

    utility = utility_of(probs, y, in_mask)
    if config.certified_eta is not None:
        certificate = {"eta": config.certified_eta, "source": "certified_eta in the configuration"}
    else:
        certificate = read_certificate(trainer, ds, tasks[0].train_idx, tasks[0].seed, config.fprs)
    certificate = annotate_certificate(certificate, n, config.fprs)
    trainer_info = {
        "import_path": config.model,
        "params": config.params,
        "fingerprint": trainer.fingerprint(),
    }
    if config.scale:
        trainer_info["preprocessing"] = "StandardScaler inside the trainer (fitted on each training half)"
    setup = {
        "n_records": n,
        "n_features": int(X.shape[1]),
        "n_classes": len(ds.classes),
        "n_models": K,
        "n_targets": T,
        "trials": int(T * n),
        "members": int(labels.sum()),
        "protocol": PROTOCOL,
    }
    table = vulnerability_table(
        scores, summaries, labels, y, ds.classes, include_labels=config.include_labels, records=records
    )
    decision = verdict(
        stats, fail_metric=config.fail_metric, fail_above=config.fail_above, certificate=certificate
    )
    # the fields by what they are: set-up; what was measured; what it concludes; per record; identity
    result = AuditResult(
        config=config, setup=setup, trainer=trainer_info,
        provenance=provenance(data_sha256(ds), trainer_info),
        summaries=summaries, games=games, attack_settings=settings, headline=stats, slices=slices,
        utility=utility, certificate=certificate, verdict=decision,
        scores=table, trial_scores=scores, in_mask=in_mask, id_column=records.id_column,
        run_key=run_key, data_sha256_16=digest, run_dir=out,
    )  # fmt: skip
    result.write(out, report=write_report)
    return result
