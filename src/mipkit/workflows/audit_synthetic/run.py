"""Audit released synthetic data: a :class:`SyntheticRelease` in, an :class:`AuditSyntheticResult` out.

Three questions, each against a reference that tells what would happen anyway:

1. *Does the synthetic data resemble its training records more than unseen records?* Unbiased
   nearest-neighbour adversarial accuracy (Pedersen ch. 4.1; ``docs/theory.md`` section 6) on (training,
   synthetic half 1) and (holdout, synthetic half 2); privacy loss = ``AA_test - AA_train``
   (:mod:`mipkit.metrics.nnaa`).
2. *Can an attacker tell training records from unseen ones by their distance to the closest synthetic
   record?* The DCR attack (:mod:`mipkit.attacks.distance`) measured by AUC, TPR at low FPR, precision at
   base rates and protection scores (:mod:`mipkit.metrics.dcr`), and the exact and near copy rates
   (:mod:`mipkit.metrics.copies`).
3. *Can an attacker infer a secret attribute beyond the non-member baseline?* Attribute inference
   (:mod:`mipkit.attacks.inference`) measured by precision, coverage and precision improvement
   (:mod:`mipkit.metrics.inference`; ``docs/theory.md`` section 4).

On request (off by default), two more of anonymeter's criteria, each against the non-member set
(:mod:`mipkit.workflows.audit_synthetic.anonymity`; ``docs/theory.md`` section 6): *singling out* (predicates
written from the synthetic data that isolate exactly one training record) and *linkability* (two column
subsets of a record joined through their nearest synthetic records).

The unseen records ("non-members") are the ``holdout`` table when given, else the ``control`` table. Without
either, the privacy loss and the DCR attack are not computed (the DCR baseline protection, the exact copies
against the training records' own twins and the attribute inference against the non-member baseline still
are). With the synthesizer's certificate the result also holds its certified bounds beside the measured
risks (:func:`mipkit.synthesizers.audit_bounds.certified_audit_bounds`).

The run folder (:meth:`AuditSyntheticResult.write`) holds ``results.json`` (kind ``"audit-synthetic"``),
``scores.parquet`` (one row per audited record: its set, row, DCR and attack score), ``inference.parquet``
(one row per inference target and secret), ``certified_bounds.json`` (with a certificate) and
``report.html``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd

from mipkit._progress import Progress, report
from mipkit._random import spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.data.tables import (
    TableSchema,
    check_not_the_original,
    check_tables,
    encode_euclidean,
    encode_mixed,
)
from mipkit.workflows.audit_synthetic.anonymity import check_linkability, check_singling_out
from mipkit.workflows.audit_synthetic.config import AuditSyntheticConfig
from mipkit.workflows.audit_synthetic.headline import headline_size
from mipkit.workflows.audit_synthetic.inputs import exact_ties, inputs_record
from mipkit.workflows.audit_synthetic.measure import (
    Encoded,
    anonymity_stage,
    dcr_stage,
    empty_scores,
    inference_family,
    inference_stage,
    nnaa_stage,
)
from mipkit.workflows.audit_synthetic.release import SyntheticRelease
from mipkit.workflows.audit_synthetic.result import AuditSyntheticResult
from mipkit.workflows.audit_synthetic.scale import backend_record, sample_record, search_backend

__all__ = ["audit_synthetic"]


def _check(data: SyntheticRelease, config: AuditSyntheticConfig) -> TableSchema:
    """Everything about the tables that can be wrong, before any computation: their columns, that no
    reference table is the original, and the columns the settings name."""
    if not isinstance(data, SyntheticRelease):
        raise MipkitValueError(
            "audit_synthetic takes a SyntheticRelease(original, synthetic, holdout=..., control=...). "
            f"Got {type(data).__name__}."
        )
    c = config
    others = {"synthetic": data.synthetic, "control": data.control, "holdout": data.holdout}
    schema = check_tables(data.original, others, required=[*c.secrets, *(c.known or [])])
    for name in ("control", "holdout"):
        if others[name] is not None:
            check_not_the_original(data.original, others[name], name)
    if c.singling_out is not None:
        check_singling_out(c.singling_out, c.singling_out_cols, schema)
    if c.linkability is not None:
        check_linkability(c.linkability, c.linkability_neighbors, schema)
    if c.quality_target is not None and c.quality_target not in data.original.columns:
        raise MipkitValueError(
            f"The 'quality_target' parameter of audit_synthetic {c.quality_target!r} is not a column of the "
            "original table."
        )
    return schema


def _without_id(data: SyntheticRelease, id_column: str | None) -> SyntheticRelease:
    """The release without the id column: the original must have it; the other tables may lack it."""
    if id_column is None or not isinstance(data, SyntheticRelease):
        return data
    if id_column not in data.original.columns:
        raise MipkitValueError(
            f"The id column {id_column!r} is not a column of the original table; its columns: "
            f"{list(map(str, data.original.columns))}."
        )
    tables = {
        name: df.drop(columns=[id_column]) if df is not None and id_column in df.columns else df
        for name, df in data.tables().items()
    }
    return dataclasses.replace(data, **tables)


def _encode(data: SyntheticRelease, config: AuditSyntheticConfig, schema: TableSchema) -> Encoded | None:
    """The tables encoded for the distance stages (None when neither NNAA nor DCR runs)."""
    if "nnaa" not in config.checks and "dcr" not in config.checks:
        return None

    def encode(df: pd.DataFrame):
        return encode_mixed(df, schema) if config.metric == "mixed" else encode_euclidean(df, schema)

    nonmember, name = data.nonmember
    return Encoded(
        original=encode(data.original),
        synthetic=encode(data.synthetic),
        nonmember=None if nonmember is None else encode(nonmember),
        nonmember_name=name,
        metric=config.metric,
    )


def audit_synthetic(
    data: SyntheticRelease,
    config: AuditSyntheticConfig | None = None,
    *,
    progress: Progress | None = None,
) -> AuditSyntheticResult:
    """Run the synthetic-data audit (module docstring).

    Parameters
    ----------
    data : SyntheticRelease
        The synthetic table, its generator's training table, the unseen records (holdout, control) and,
        optionally, the synthesizer's certificate.
    config : AuditSyntheticConfig, optional
        Every setting (default: ``AuditSyntheticConfig()``).
    progress : Progress, optional
        ``progress(stage, done, total)`` over the stages: ``"NNAA neighbour searches"``, ``"DCR"``,
        ``"attribute inference"``, ``"singling out"``, ``"linkability"``.

    Returns
    -------
    AuditSyntheticResult
        ``summary()`` the DPIA paragraph, ``to_dict()`` the ``results.json`` payload, ``to_frame()`` one row
        per measure, ``write(run_dir)`` the run folder.
    """
    c = AuditSyntheticConfig() if config is None else config
    data = _without_id(data, c.id_column)
    schema = _check(data, c)
    enc = _encode(data, c, schema)
    ties = None if enc is None else exact_ties(schema, c.metric, enc.original, enc.synthetic)
    timings: dict[str, float] = {}
    with search_backend(c) as plan:
        nnaa, dcr, inference, anonymity = _measure(data, c, schema, enc, progress, timings)
    nonmember, _ = data.nonmember
    sizes = {"n_original": len(data.original), "n_synthetic": len(data.synthetic),
             "n_nonmember": None if nonmember is None else len(nonmember)}  # fmt: skip
    scored = dcr["scores"]["member"].to_numpy()
    dcr_rows = (int((scored == 1).sum()), int((scored == 0).sum())) if "dcr" in c.checks else None
    per_target = [r.per_target.assign(secret=s) for s, r in inference.items()]
    n_other = headline_size(nnaa=nnaa is not None, copies=dcr["copies"], inference=False)
    result = AuditSyntheticResult(
        policy={"fail_above": c.fail_above, "metric": c.fail_metric, "confidence": c.confidence},
        inference_family=inference_family(inference, c.confidence, n_other),
        inputs=inputs_record(data, c, schema, ties),
        nnaa=nnaa,
        dcr_attack=dcr.get("dcr_attack"),
        overfitting_protection=dcr.get("overfitting_protection"),
        baseline_protection=dcr.get("baseline_protection"),
        copies=dcr["copies"],
        inference=inference,
        scores=dcr["scores"],
        inference_targets=pd.concat(per_target, ignore_index=True) if per_target else pd.DataFrame(),
        timings_s=timings,
        samples=sample_record(c, sizes, None if nnaa is None else nnaa.n, dcr_rows),
        backend=backend_record(c, plan),
        **anonymity,
    )
    return _with_extras(result, data, c, progress)


def _measure(
    data: SyntheticRelease, c: AuditSyntheticConfig, schema: TableSchema, enc: Encoded | None,
    progress: Progress | None, timings: dict[str, float],
) -> tuple:  # fmt: skip
    """The stages, each timed: NNAA, DCR, attribute inference, singling out and linkability."""
    seeds = spawn_seeds(c.random_state, 4 + len(c.secrets))
    t0 = time.perf_counter()
    nnaa = None
    if enc is not None and enc.nonmember is not None and "nnaa" in c.checks:
        nnaa = nnaa_stage(enc, c, seeds[0], progress)
    timings["nnaa"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    dcr: dict = {"scores": empty_scores(), "copies": None}
    if "dcr" in c.checks:
        copy_seed = None if c.random_state is None else np.random.SeedSequence([int(c.random_state), 12])
        dcr = dcr_stage(enc, c, [*seeds[1:4], copy_seed], progress)
    timings["dcr"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    inference = inference_stage(data, c, schema, seeds[4:], progress) if "inference" in c.checks else {}
    timings["inference"] = time.perf_counter() - t0
    anonymity = anonymity_stage(data, c, schema, progress, timings)
    return nnaa, dcr, inference, anonymity


def _with_extras(
    result: AuditSyntheticResult, data: SyntheticRelease, config: AuditSyntheticConfig,
    progress: Progress | None,
) -> AuditSyntheticResult:  # fmt: skip
    """The result with the certified bounds (a certificate given) and the utility report (asked for)."""
    extras: dict = {}
    if data.certificate is not None:
        from mipkit.synthesizers.audit_bounds import certified_audit_bounds

        extras["certified"] = certified_audit_bounds(data.certificate, result)
    if config.quality_target is not None:
        from mipkit.synthesizers.quality_report import quality_report

        test, _ = data.nonmember
        report(progress, "utility report", 0, 1)
        extras["quality"] = quality_report(
            data.original, data.synthetic, target=config.quality_target, test=test, seed=config.random_state
        )
        report(progress, "utility report", 1, 1)
    return dataclasses.replace(result, **extras) if extras else result
