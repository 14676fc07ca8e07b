"""The stages of the synthetic-data audit, each a measurement on the encoded tables.

:func:`nnaa_stage` (nearest-neighbour adversarial accuracy and the privacy loss), :func:`dcr_stage` (the
distance-to-closest-record attack, the protection scores and the copy rates), :func:`inference_stage`
(attribute inference against the non-member baseline) and :func:`anonymity_stage` (singling out and
linkability, when asked). Each takes its own seed, so that one stage left out leaves the others unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Pooled, Progress, Tally
from mipkit._random import check_random_state, spawn_seeds
from mipkit.attacks.distance import dcr_scores, distance_to_closest_record
from mipkit.attacks.inference import attribute_inference_guesses
from mipkit.data.tables import TableSchema
from mipkit.metrics.copies import copy_rates
from mipkit.metrics.dcr import dcr_attack, dcr_baseline_protection, dcr_overfitting_protection
from mipkit.metrics.inference import InferenceResult, measure_inference
from mipkit.metrics.nnaa import PrivacyLoss, privacy_loss
from mipkit.workflows.audit_synthetic.anonymity import linkability, singling_out
from mipkit.workflows.audit_synthetic.config import AuditSyntheticConfig
from mipkit.workflows.audit_synthetic.release import SyntheticRelease

__all__ = [
    "Encoded",
    "attribute_inference",
    "empty_scores",
    "inference_family",
    "anonymity_stage",
    "dcr_stage",
    "inference_stage",
    "nnaa_stage",
]


@dataclass(frozen=True)
class Encoded:
    """The tables as the distances see them (``None`` where the distance stages do not run)."""

    original: Any
    synthetic: Any
    nonmember: Any
    nonmember_name: str | None
    metric: str

    def take(self, table: Any, rows: np.ndarray) -> Any:
        return table.take(rows) if self.metric == "mixed" else table[rows]


def nnaa_stage(
    enc: Encoded, config: AuditSyntheticConfig, seed: Any, progress: Progress | None
) -> PrivacyLoss:
    """NNAA on (training, synthetic half 1) and (unseen, synthetic half 2), and the privacy loss."""
    return privacy_loss(
        enc.original,
        enc.nonmember,
        enc.synthetic,
        metric=config.metric,
        max_n=config.max_nnaa_rows,
        interval=config.nnaa_interval,
        n_bootstrap=config.n_bootstrap,
        confidence=config.confidence,
        random_state=seed,
        n_jobs=config.n_jobs,
        progress=progress,
    )


def dcr_stage(
    enc: Encoded, config: AuditSyntheticConfig, seeds: list, progress: Progress | None
) -> dict[str, Any]:
    """The DCR of (capped) training and unseen records, the DCR attack, the protection scores and the copy
    rates: ``scores``, ``dcr_attack``, ``overfitting_protection``, ``baseline_protection``, ``copies``.

    ``seeds``: the subsample's, the overfitting score's, the baseline score's and the copy rates'."""
    rng = check_random_state(seeds[0])
    cap = config.max_dcr_rows

    def rows(n: int) -> np.ndarray:
        return np.arange(n) if cap is None or n <= cap else np.sort(rng.choice(n, size=cap, replace=False))

    rows_m = rows(len(enc.original))
    rows_h = rows(len(enc.nonmember)) if enc.nonmember is not None else np.empty(0, int)
    adv = Pooled(progress, "DCR", rows_m.size + rows_h.size)
    kw = {"metric": config.metric, "n_jobs": config.n_jobs}
    dcr_m = distance_to_closest_record(enc.take(enc.original, rows_m), enc.synthetic, progress=adv, **kw)
    frames = [pd.DataFrame({"set": "original", "row": rows_m, "member": 1, "dcr": dcr_m})]
    out: dict[str, Any] = {"dcr_attack": None, "overfitting_protection": None, "baseline_protection": None}
    if enc.nonmember is not None:
        dcr_h = distance_to_closest_record(enc.take(enc.nonmember, rows_h), enc.synthetic, progress=adv, **kw)
        frames.append(pd.DataFrame({"set": enc.nonmember_name, "row": rows_h, "member": 0, "dcr": dcr_h}))
        out["dcr_attack"] = dcr_attack(dcr_m, dcr_h)
        out["overfitting_protection"] = dcr_overfitting_protection(
            enc.original, enc.nonmember, enc.synthetic, random_state=seeds[1],
            max_rows=config.max_protection_rows, **kw,
        )  # fmt: skip
    if config.metric == "mixed":
        out["baseline_protection"] = dcr_baseline_protection(
            enc.original, enc.synthetic, random_state=seeds[2], n_jobs=config.n_jobs,
            max_rows=config.max_protection_rows,
        )  # fmt: skip
    attack = out["dcr_attack"]
    out["copies"] = copy_rates(
        dcr_m, attack and attack.dcr_nonmembers, original=enc.original, synthetic=enc.synthetic,
        random_state=seeds[3],
    )  # fmt: skip
    scores = pd.concat(frames, ignore_index=True)
    scores["score"] = dcr_scores(scores["dcr"].to_numpy())
    out["scores"] = scores
    return out


def empty_scores() -> pd.DataFrame:
    """The ``scores`` table of an audit whose DCR part was not run (no rows, the columns of one that was)."""
    scores = pd.DataFrame({"set": "original", "row": np.empty(0, int), "member": 1, "dcr": np.empty(0)})
    scores["score"] = dcr_scores(scores["dcr"].to_numpy())
    return scores


def attribute_inference(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    secret: str,
    schema: TableSchema,
    confidence: float = 0.95,
    **options,
) -> InferenceResult:
    """Attribute inference of ``secret`` against the non-member baseline: the attacks, then their measures.

    :func:`mipkit.attacks.inference.attribute_inference_guesses` (which takes ``options``: ``known``,
    ``control``, ``n_attacks``, ``tolerance``, ``attacks``, ``model_factory``, ``random_state``, ``n_jobs``,
    ``non_member_baseline``, ``n_refits``) followed by :func:`mipkit.metrics.inference.measure_inference` at
    ``confidence`` (precision, coverage, precision improvement at equal coverage, anonymeter's control-set
    risk; Francis & Wagner, ``docs/theory.md`` section 4).
    """
    guesses = attribute_inference_guesses(original, synthetic, secret=secret, schema=schema, **options)
    return measure_inference(guesses, confidence=confidence, random_state=options.get("random_state"))


def inference_stage(
    data: SyntheticRelease, config: AuditSyntheticConfig, schema: TableSchema, seeds: list,
    progress: Progress | None,
) -> dict[str, InferenceResult]:  # fmt: skip
    """Attribute inference of every secret (one seed each), against the non-member baseline."""
    out: dict[str, InferenceResult] = {}
    adv = Tally(progress, "attribute inference", len(config.secrets))
    for secret, seed in zip(config.secrets, seeds, strict=True):
        out[secret] = attribute_inference(
            data.original, data.synthetic, secret=secret, schema=schema, known=config.known,
            control=data.control, n_attacks=config.n_attacks, tolerance=config.tolerance,
            attacks=tuple(config.attacks), non_member_baseline=config.non_member_baseline,
            n_refits=config.n_refits, confidence=config.confidence, random_state=seed, n_jobs=config.n_jobs,
        )  # fmt: skip
        adv.add(1)
    return out


def inference_family(
    inference: dict[str, InferenceResult], confidence: float, n_other_tests: int = 0
) -> list[dict]:
    """Every (secret, attack) pair's PI with its interval widened for the number of pairs (Bonferroni), and
    for the pairs times the tests of the headline family (``ci_headline``: ``n_other_tests`` + 1 tests)."""
    pairs = [(s, a) for s, r in inference.items() for a in r.attacks]
    if not pairs:
        return []
    level = 1.0 - (1.0 - confidence) / len(pairs)
    level_h = 1.0 - (1.0 - confidence) / (len(pairs) * (n_other_tests + 1))
    return [
        {
            "secret": s,
            "attack": a,
            "baseline": inference[s].baseline_of(a),
            "value": inference[s].pi_of(a),
            "ci_corrected": inference[s].pi_interval(a, level),
            "level": level,
            "ci_headline": inference[s].pi_interval(a, level_h),
            "level_headline": level_h,
        }
        for s, a in pairs
    ]


def anonymity_stage(
    data: SyntheticRelease, config: AuditSyntheticConfig, schema: TableSchema, progress: Progress | None,
    timings: dict[str, float],
) -> dict:  # fmt: skip
    """Singling out and linkability when asked, against the non-member set (their own seeds, so that
    turning them on leaves every other number of the audit unchanged)."""
    out: dict = {}
    c = config
    seed = None if c.random_state is None else np.random.SeedSequence([int(c.random_state), 11])
    seeds = spawn_seeds(seed, 2)
    nonmember, _ = data.nonmember
    if c.singling_out is not None:
        t0 = time.perf_counter()
        adv = Tally(progress, "singling out", 1)
        out["singling_out"] = singling_out(
            data.original, data.synthetic, schema=schema, control=nonmember, n_predicates=c.singling_out,
            n_cols=c.singling_out_cols, confidence=c.confidence, random_state=seeds[0],
        )  # fmt: skip
        adv.add(1)
        timings["singling_out"] = time.perf_counter() - t0
    if c.linkability is not None:
        t0 = time.perf_counter()
        adv = Tally(progress, "linkability", 1)
        out["linkability"] = linkability(
            data.original, data.synthetic, schema=schema, aux_cols=c.linkability, control=nonmember,
            n_attacks=c.n_attacks, n_neighbors=c.linkability_neighbors, random_state=seeds[1],
            n_jobs=c.n_jobs,
        )  # fmt: skip
        adv.add(1)
        timings["linkability"] = time.perf_counter() - t0
    return out
