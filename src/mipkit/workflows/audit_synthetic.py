"""Audit released synthetic data: tables in, a results dict and a run folder out.

Three questions, each against a reference that tells what would happen anyway:

1. *Does the synthetic data resemble its training records more than unseen records?* Unbiased
   nearest-neighbour adversarial accuracy (Pedersen ch. 4.1) on (training, synthetic half 1) and
   (holdout, synthetic half 2); privacy loss = ``AA_test - AA_train`` (:mod:`mipkit.metrics.nnaa`).
2. *Can an attacker tell training records from unseen ones by their distance to the closest synthetic
   record?* The DCR attack with AUC, TPR at low FPR, precision at base rates and protection scores
   (:mod:`mipkit.attacks.distance`).
3. *Can an attacker infer a secret attribute beyond the non-member baseline?* Attribute inference with
   precision, coverage and precision improvement (:mod:`mipkit.attacks.inference`).

The unseen records ("non-members") are the ``holdout`` table when given, else the ``control`` table. Without
either, the privacy loss and the DCR attack are not computed (the DCR baseline protection and the attribute
inference against the non-member baseline still are).

The run folder holds ``results.json`` (kind ``"audit-synthetic"``), ``scores.parquet`` (one row per audited
record: its set, row, DCR and attack score), ``inference.parquet`` (one row per inference target and secret)
and ``report.html``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mipkit._random import check_random_state, spawn_seeds
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.attacks.distance import (
    dcr_attack,
    dcr_baseline_protection,
    dcr_overfitting_protection,
    distance_to_closest_record,
)
from mipkit.attacks.inference import attribute_inference
from mipkit.data.tables import check_tables, encode_euclidean, encode_mixed
from mipkit.metrics.nnaa import privacy_loss

ProgressFactory = Callable[[str, int], Callable[[int], None]]


def _no_progress(description: str, total: int) -> Callable[[int], None]:
    return lambda n: None


def audit_synthetic(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    control: pd.DataFrame | None = None,
    holdout: pd.DataFrame | None = None,
    secrets: Sequence[str] = (),
    known: Sequence[str] | None = None,
    n_attacks: int = 500,
    tolerance: float = 0.05,
    metric: str = "mixed",
    max_nnaa_rows: int | None = 20_000,
    max_dcr_rows: int | None = 50_000,
    max_protection_rows: int | None = 10_000,
    n_bootstrap: int = 1000,
    random_state: int | None = 0,
    n_jobs: int = 2,
    progress: ProgressFactory | None = None,
) -> dict:
    """Run the synthetic-data audit and return a JSON-ready results dict.

    Parameters
    ----------
    original, synthetic : DataFrame
        The generator's training data and its output (same columns).
    control, holdout : DataFrame, optional
        Records of the same population not used for training. ``holdout`` (else ``control``) is the
        non-member set of the NNAA test term and of the DCR attack; ``control`` also gives anonymeter's
        control-set risk for attribute inference.
    secrets : sequence of str
        Columns to attack by attribute inference (none: no inference).
    known : sequence of str, optional
        Columns the attacker knows (default: all other columns).
    n_attacks : int
        Inference targets per secret.
    metric : {"mixed", "euclidean"}
        Distance for NNAA and DCR (attribute inference always uses the mixed distance).
    max_nnaa_rows : int, optional
        Cap on the size of each of the four NNAA sets (subsampled at random).
    max_dcr_rows : int, optional
        Cap on the training and holdout records scored by DCR (subsampled at random).
    max_protection_rows : int, optional
        Cap on the synthetic records of the SDMetrics-style baseline / overfitting protection scores
        (medians and shares: 10,000 records pin them down to about +-0.01).
    random_state : int, optional
        Seed of every random step (splits, subsamples, bootstrap, target draws).
    """
    check_choice("metric", metric, ("mixed", "euclidean"), owner="audit_synthetic")
    n_attacks = check_positive_int("n_attacks", n_attacks, owner="audit_synthetic")
    progress = progress or _no_progress
    secrets = list(secrets)
    if len(set(secrets)) != len(secrets):
        raise MipkitValueError(f"A secret column is given twice: {secrets}.")
    schema = check_tables(
        original,
        {"synthetic": synthetic, "control": control, "holdout": holdout},
        required=[*secrets, *(known or [])],
    )
    for s in secrets:
        if known is not None and s in known:
            raise MipkitValueError(f"The column {s!r} cannot be both a secret and a known column.")
    seeds = spawn_seeds(random_state, 4 + len(secrets))
    nonmember, nonmember_name = (holdout, "holdout") if holdout is not None else (control, "control")
    timings: dict[str, float] = {}

    def encode(df: pd.DataFrame):
        return encode_mixed(df, schema) if metric == "mixed" else encode_euclidean(df, schema)

    enc_orig, enc_syn = encode(original), encode(synthetic)
    enc_non = encode(nonmember) if nonmember is not None else None
    results: dict = {
        "inputs": {
            "n_original": len(original),
            "n_synthetic": len(synthetic),
            "n_control": None if control is None else len(control),
            "n_holdout": None if holdout is None else len(holdout),
            "nonmember_set": nonmember_name if nonmember is not None else None,
            "columns": schema.to_dict(),
            "metric": metric,
            "secrets": secrets,
            "known": None if known is None else list(known),
            "n_attacks": n_attacks,
            "tolerance": tolerance,
            "random_state": random_state,
        }
    }

    # 1. NNAA and privacy loss -------------------------------------------------------------------
    t0 = time.perf_counter()
    if enc_non is not None:
        n_est = min(len(original), len(synthetic) // 2, len(nonmember))
        n_est = min(n_est, max_nnaa_rows) if max_nnaa_rows else n_est
        adv = progress("NNAA (4 neighbour searches x 2)", 8 * n_est)
        pl = privacy_loss(
            enc_orig,
            enc_non,
            enc_syn,
            metric=metric,
            max_n=max_nnaa_rows,
            n_bootstrap=n_bootstrap,
            random_state=seeds[0],
            n_jobs=n_jobs,
            progress=adv,
        )
        results["nnaa"] = pl.to_dict()
    else:
        results["nnaa"] = {"train": None, "test": None, "privacy_loss": None, "note": "no holdout or control"}
    timings["nnaa"] = time.perf_counter() - t0

    # 2. DCR attack and protection scores -----------------------------------------------------------
    t0 = time.perf_counter()
    rng = check_random_state(seeds[1])

    def cap(n: int) -> np.ndarray:
        if max_dcr_rows is None or n <= max_dcr_rows:
            return np.arange(n)
        return np.sort(rng.choice(n, size=max_dcr_rows, replace=False))

    take = (lambda x, i: x.take(i)) if metric == "mixed" else (lambda x, i: x[i])
    rows_m = cap(len(original))
    rows_h = cap(len(nonmember)) if nonmember is not None else np.empty(0, int)
    adv = progress("DCR", rows_m.size + rows_h.size)
    dcr_m = distance_to_closest_record(
        take(enc_orig, rows_m), enc_syn, metric=metric, n_jobs=n_jobs, progress=adv
    )
    dcr: dict = {}
    score_frames = [pd.DataFrame({"set": "original", "row": rows_m, "member": 1, "dcr": dcr_m})]
    if enc_non is not None:
        dcr_h = distance_to_closest_record(
            take(enc_non, rows_h), enc_syn, metric=metric, n_jobs=n_jobs, progress=adv
        )
        score_frames.append(pd.DataFrame({"set": nonmember_name, "row": rows_h, "member": 0, "dcr": dcr_h}))
        dcr.update(dcr_attack(dcr_m, dcr_h).to_dict())
        dcr["overfitting_protection"] = dcr_overfitting_protection(
            enc_orig,
            enc_non,
            enc_syn,
            metric=metric,
            random_state=seeds[2],
            n_jobs=n_jobs,
            max_rows=max_protection_rows,
        )
    else:
        dcr.update({"auc": None, "note": "no holdout or control: DCR attack not computed"})
        dcr["dcr_median_members"] = float(np.median(dcr_m))
    if metric == "mixed":
        dcr["baseline_protection"] = dcr_baseline_protection(
            enc_orig, enc_syn, random_state=seeds[3], n_jobs=n_jobs, max_rows=max_protection_rows
        )
    results["dcr"] = dcr
    timings["dcr"] = time.perf_counter() - t0
    scores = pd.concat(score_frames, ignore_index=True)
    scores["score"] = -scores["dcr"]

    # 3. attribute inference -------------------------------------------------------------------------
    t0 = time.perf_counter()
    inference: dict = {}
    per_target = []
    adv = progress("attribute inference", max(1, len(secrets)))
    for s, seed in zip(secrets, seeds[4:], strict=True):
        res = attribute_inference(
            original,
            synthetic,
            secret=s,
            schema=schema,
            known=known,
            control=control,
            n_attacks=n_attacks,
            tolerance=tolerance,
            random_state=seed,
            n_jobs=n_jobs,
        )
        inference[s] = res.to_dict()
        per_target.append(res.per_target.assign(secret=s))
        adv(1)
    results["inference"] = inference
    timings["inference"] = time.perf_counter() - t0
    results["timings_s"] = timings
    results["_frames"] = {
        "scores": scores,
        "inference": pd.concat(per_target, ignore_index=True) if per_target else pd.DataFrame(),
    }
    return results


def write_run(run_dir: str | Path, results: dict) -> Path:
    """Write ``results.json``, ``scores.parquet``, ``inference.parquet`` and ``report.html``."""
    from mipkit.report import write_html_report, write_results
    from mipkit.report.synthetic_report import build

    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    frames = results.get("_frames", {})
    if "scores" in frames:
        frames["scores"].to_parquet(run / "scores.parquet", index=False)
    if "inference" in frames and len(frames["inference"]):
        frames["inference"].to_parquet(run / "inference.parquet", index=False)
    payload = {k: v for k, v in results.items() if k != "_frames"}
    write_results(run, payload, kind="audit-synthetic")
    title, summary, sections = build(run)
    write_html_report(run, title=title, summary=summary, sections=sections)
    return run


def summary_for_json(results: dict) -> dict:
    """The compact machine-readable summary printed by ``mipkit audit-synthetic --json``."""
    nn = results["nnaa"]
    dcr = results["dcr"]
    return {
        "nnaa": {
            "train": nn.get("train"),
            "test": nn.get("test"),
            "privacy_loss": nn.get("privacy_loss"),
            "privacy_loss_ci": (nn.get("bootstrap") or {}).get("privacy_loss_ci"),
            "n": nn.get("n"),
        },
        "dcr": {
            "auc": dcr.get("auc"),
            "tpr_at_fpr": dcr.get("tpr_at_fpr"),
            "protection": dcr.get("protection"),
            "baseline_protection": (dcr.get("baseline_protection") or {}).get("score"),
            "overfitting_protection": (dcr.get("overfitting_protection") or {}).get("score"),
        },
        "inference": {
            s: {
                "precision": r["precision"],
                "coverage": r["coverage"],
                "baseline_precision": r["baseline_precision"],
                "precision_improvement": r["precision_improvement"],
                **({"control_risk": r["control"]["risk"]["value"]} if r.get("control") else {}),
            }
            for s, r in results["inference"].items()
        },
    }
