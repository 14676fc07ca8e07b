"""Audit released synthetic data: tables in, a :class:`SyntheticAuditResult` and a run folder out.

Three questions, each against a reference that tells what would happen anyway:

1. *Does the synthetic data resemble its training records more than unseen records?* Unbiased
   nearest-neighbour adversarial accuracy (Pedersen ch. 4.1; ``docs/theory.md`` section 6) on (training,
   synthetic half 1) and (holdout, synthetic half 2); privacy loss = ``AA_test - AA_train``
   (:mod:`mipkit.metrics.nnaa`).
2. *Can an attacker tell training records from unseen ones by their distance to the closest synthetic
   record?* The DCR attack (:mod:`mipkit.attacks.distance`) measured by AUC, TPR at low FPR, precision at
   base rates and protection scores (:mod:`mipkit.metrics.dcr`).
3. *Can an attacker infer a secret attribute beyond the non-member baseline?* Attribute inference
   (:mod:`mipkit.attacks.inference`) measured by precision, coverage and precision improvement
   (:mod:`mipkit.metrics.inference`; ``docs/theory.md`` section 4).

On request (off by default), two more of anonymeter's criteria, each against the non-member set
(:mod:`mipkit.workflows.audit_synthetic.anonymity`; ``docs/theory.md`` section 6): *singling out* (predicates
written from the synthetic data that isolate exactly one training record) and *linkability* (two column
subsets of a record joined through their nearest synthetic records).

The unseen records ("non-members") are the ``holdout`` table when given, else the ``control`` table. Without
either, the privacy loss and the DCR attack are not computed (the DCR baseline protection and the attribute
inference against the non-member baseline still are).

The run folder (:meth:`SyntheticAuditResult.write`) holds ``results.json`` (kind ``"audit-synthetic"``),
``scores.parquet`` (one row per audited record: its set, row, DCR and attack score), ``inference.parquet``
(one row per inference target and secret) and ``report.html``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from mipkit._random import check_random_state, spawn_seeds
from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_interval,
    check_positive_int,
    check_probability,
)
from mipkit.attacks.distance import dcr_scores, distance_to_closest_record
from mipkit.attacks.inference import attribute_inference_guesses
from mipkit.data.neighbors.kernels import exact_lattice
from mipkit.data.tables import (
    TableSchema,
    check_not_the_original,
    check_tables,
    encode_euclidean,
    encode_mixed,
)
from mipkit.metrics.copies import copy_rates
from mipkit.metrics.dcr import dcr_attack, dcr_baseline_protection, dcr_overfitting_protection
from mipkit.metrics.inference import InferenceResult, measure_inference
from mipkit.metrics.nnaa import INTERVALS, privacy_loss
from mipkit.workflows.audit_synthetic.anonymity import (
    check_linkability,
    check_singling_out,
)
from mipkit.workflows.audit_synthetic.anonymity import linkability as run_linkability
from mipkit.workflows.audit_synthetic.anonymity import singling_out as run_singling_out
from mipkit.workflows.audit_synthetic.headline import headline_size
from mipkit.workflows.audit_synthetic.result import SyntheticAuditResult
from mipkit.workflows.audit_synthetic.verdict import VERDICT_METRICS

__all__ = ["SyntheticAuditResult", "attribute_inference", "audit_synthetic"]

ProgressFactory = Callable[[str, int], Callable[[int], None]]
CHECKS = ("nnaa", "dcr", "inference")


def _no_progress(description: str, total: int) -> Callable[[int], None]:
    return lambda n: None


def table_fingerprint(df: pd.DataFrame) -> str:
    """SHA-256 (first 16 hex digits) of a table's column names and cell values, row order included.

    ``pandas.util.hash_pandas_object`` hashes each row (values and dtypes); the digest of those row hashes
    and the column names identifies the audited table without revealing anything about its records.
    """
    h = hashlib.sha256("\x1f".join(map(str, df.columns)).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def _inference_family(
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
    ``non_member_baseline``) followed by :func:`mipkit.metrics.inference.measure_inference` at
    ``confidence`` (precision, coverage, precision improvement at equal coverage, anonymeter's control-set
    risk; Francis & Wagner, ``docs/theory.md`` section 4).
    """
    guesses = attribute_inference_guesses(original, synthetic, secret=secret, schema=schema, **options)
    return measure_inference(guesses, confidence=confidence, random_state=options.get("random_state"))


def _exact_ties(schema: TableSchema, metric: str, a, b) -> dict:
    """Whether the distances, hence NNAA's and DCR's ties, are exact (``docs/theory.md`` section 6)."""
    if metric != "mixed":
        return {"exact": False, "why": "Euclidean distances (square roots) are float64 values"}
    if schema.lattice is None:
        return {"exact": False, "why": "a numeric column holds non-integer values (ties are then rare)"}
    if exact_lattice(a, b) is None:
        return {
            "exact": False,
            "why": "the integer columns' ranges have a least common multiple too large for exact rounding",
        }
    return {"exact": True, "why": "integer data: every distance is rounded to its exact value k / L"}


def _anonymity(
    original, synthetic, *, schema, nonmember, n_predicates, n_cols, aux_cols, n_neighbors, n_attacks,
    confidence, random_state, n_jobs, progress, timings,
) -> dict:  # fmt: skip
    """Singling out and linkability when asked, against the non-member set (their own seeds, so that
    turning them on leaves every other number of the audit unchanged)."""
    out: dict = {}
    seed = None if random_state is None else np.random.SeedSequence([int(random_state), 11])
    seeds = spawn_seeds(seed, 2)
    if n_predicates is not None:
        t0 = time.perf_counter()
        adv = progress("singling out", 2)
        out["singling_out"] = run_singling_out(
            original, synthetic, schema=schema, control=nonmember, n_predicates=n_predicates,
            n_cols=n_cols, confidence=confidence, random_state=seeds[0],
        )  # fmt: skip
        adv(2)
        timings["singling_out"] = time.perf_counter() - t0
    if aux_cols is not None:
        t0 = time.perf_counter()
        adv = progress("linkability", 1)
        out["linkability"] = run_linkability(
            original, synthetic, schema=schema, aux_cols=aux_cols, control=nonmember,
            n_attacks=n_attacks, n_neighbors=n_neighbors, random_state=seeds[1], n_jobs=n_jobs,
        )  # fmt: skip
        adv(1)
        timings["linkability"] = time.perf_counter() - t0
    return out


def _columns(schema: TableSchema, include_data_summary: bool) -> dict:
    """The schema as recorded in ``results.json``: roles and level counts; values of real records (numeric
    minimum and range) only when asked."""
    cols = schema.to_dict()
    if not include_data_summary:
        cols = {k: v for k, v in cols.items() if k not in ("numeric_min", "numeric_range")}
    return cols


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
    checks: Sequence[str] = CHECKS,
    attacks: Sequence[str] = ("nearest", "model"),
    non_member_baseline: bool = True,
    nnaa_interval: str = "jackknife",
    fail_above: float | None = None,
    fail_metric: str = "headline",
    confidence: float = 0.95,
    sources: Mapping[str, object] | None = None,
    include_data_summary: bool = False,
    random_state: int | None = 0,
    n_jobs: int = 2,
    progress: ProgressFactory | None = None,
    singling_out: int | None = None,
    singling_out_cols: int = 3,
    linkability: Sequence[Sequence[str]] | None = None,
    linkability_neighbors: int = 1,
) -> SyntheticAuditResult:
    """Run the synthetic-data audit.

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
    tolerance : float
        Numeric secrets: a guess is right within ``tolerance`` times the column's range.
    metric : {"mixed", "euclidean"}
        Distance for NNAA and DCR (attribute inference always uses the mixed distance).
    max_nnaa_rows : int, optional
        Cap on the size of each of the four NNAA sets (subsampled at random).
    max_dcr_rows : int, optional
        Cap on the training and holdout records scored by DCR (subsampled at random).
    max_protection_rows : int, optional
        Cap on the synthetic records of the SDMetrics-style baseline / overfitting protection scores
        (medians and shares: 10,000 records pin them down to about +-0.01).
    n_bootstrap : int
        Replicates of the record bootstrap (``nnaa_interval="record-bootstrap"`` only).
    checks : sequence of {"nnaa", "dcr", "inference"}
        The parts of the audit to run (default: all three; the results say which were not requested).
    attacks : sequence of {"nearest", "model"}
        Attribute-inference attacks, each measured against the same analysis without the targets.
    non_member_baseline : bool
        Run the attacks' analyses on the original without the targets (default); ``False`` keeps only the
        most-frequent-value baseline (anonymeter's amount of work).
    nnaa_interval : {"neighbourhood", "jackknife", "record-bootstrap"}
        Interval of the NNAA terms and the privacy loss: the covariances of neighbouring terms (tight at
        1,000 records per set and more, short of 95% on small discrete tables), the delete-one jackknife
        with neighbours recomputed (default; conservative, 1.5-2 times too wide; both
        :mod:`mipkit.metrics.nnaa_intervals`), or the record bootstrap with the neighbour structure held
        fixed (too narrow; kept for comparison).
    fail_above : float, optional
        The policy: a finding when the interval of ``fail_metric`` lies above this value, a pass when it
        lies at or below it, inconclusive otherwise (:mod:`mipkit.workflows.audit_synthetic.verdict`).
        ``None``: no verdict, measurements only.
    fail_metric : {"headline", "privacy_loss", "dcr_auc", "inference_pi"}
        The metric of the policy: ``"headline"`` (default) is the family of tests of
        :mod:`mipkit.workflows.audit_synthetic.headline` (NNAA, exact and near copies, attribute inference),
        corrected for multiplicity.
    confidence : float
        Level of the verdict's intervals (and of the inference intervals).
    sources : mapping, optional
        Where the tables came from (e.g. file names and their SHA-256), recorded in ``inputs``.
    include_data_summary : bool
        Also record the original's minimum and range of each numeric column in ``inputs["columns"]``. Off
        by default: they are values of real records.
    random_state : int, optional
        Seed of every random step (splits, subsamples, bootstrap, target draws).
    n_jobs : int
        Threads of the neighbour searches.
    progress : callable, optional
        ``progress(description, total)`` returns a callback ``advance(n)`` for one stage.
    singling_out : int, optional
        Predicates per singling-out mode (univariate and multivariate), scored against the non-member set
        (:mod:`mipkit.metrics.singling_out`); ``None`` (default): not run.
    singling_out_cols : int
        Conditions per multivariate predicate.
    linkability : pair of column lists, optional
        The two column subsets of the linkability attack (:mod:`mipkit.metrics.linkability`), run on
        ``n_attacks`` training and as many non-member targets; ``None`` (default): not run.
    linkability_neighbors : int
        Nearest synthetic records per half that may link the two halves.

    Returns
    -------
    SyntheticAuditResult
        ``to_dict()`` is the ``results.json`` payload, ``to_frame()`` one row per measure, ``write(run_dir)``
        the run folder.
    """
    check_choice("metric", metric, ("mixed", "euclidean"), owner="audit_synthetic")
    check_choice("nnaa_interval", nnaa_interval, INTERVALS, owner="audit_synthetic")
    checks = tuple(dict.fromkeys(checks))
    for c in checks:
        check_choice("checks", c, CHECKS, owner="audit_synthetic")
    check_choice("fail_metric", fail_metric, VERDICT_METRICS, owner="audit_synthetic")
    if fail_above is not None:
        fail_above = check_interval(
            "fail_above", fail_above, -1.0, 1.0, closed="both", owner="audit_synthetic"
        )
    confidence = check_probability("confidence", confidence, closed="neither", owner="audit_synthetic")
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
    for name, table in (("control", control), ("holdout", holdout)):
        if table is not None:
            check_not_the_original(original, table, name)
    for s in secrets:
        if known is not None and s in known:
            raise MipkitValueError(f"The column {s!r} cannot be both a secret and a known column.")
    if singling_out is not None:
        singling_out, singling_out_cols = check_singling_out(singling_out, singling_out_cols, schema)
    if linkability is not None:
        linkability = check_linkability(linkability, linkability_neighbors, schema)
    seeds = spawn_seeds(random_state, 4 + len(secrets))
    nonmember, nonmember_name = (holdout, "holdout") if holdout is not None else (control, "control")
    timings: dict[str, float] = {}

    def encode(df: pd.DataFrame):
        return encode_mixed(df, schema) if metric == "mixed" else encode_euclidean(df, schema)

    distances = "nnaa" in checks or "dcr" in checks
    enc_orig, enc_syn = (encode(original), encode(synthetic)) if distances else (None, None)
    enc_non = encode(nonmember) if nonmember is not None and distances else None
    exact_ties = _exact_ties(schema, metric, enc_orig, enc_syn) if distances else None
    inputs = {
        "n_original": len(original),
        "n_synthetic": len(synthetic),
        "n_control": None if control is None else len(control),
        "n_holdout": None if holdout is None else len(holdout),
        "nonmember_set": nonmember_name if nonmember is not None else None,
        "columns": _columns(schema, include_data_summary),
        "fingerprints": {
            name: table_fingerprint(df)
            for name, df in (
                ("original", original),
                ("synthetic", synthetic),
                ("control", control),
                ("holdout", holdout),
            )
            if df is not None
        },
        "sources": dict(sources) if sources else None,
        "confidence": confidence,
        "metric": metric,
        "secrets": secrets,
        "known": None if known is None else list(known),
        "n_attacks": n_attacks,
        "tolerance": tolerance,
        "attacks": list(attacks),
        "non_member_baseline": non_member_baseline,
        "random_state": random_state,
        "exact_ties": exact_ties,
        "checks": list(checks),
    }
    if singling_out is not None:
        inputs["singling_out"] = {"n_predicates": singling_out, "n_cols": singling_out_cols}
    if linkability is not None:
        inputs["linkability"] = {
            "aux_cols": [list(c) for c in linkability],
            "n_neighbors": linkability_neighbors,
        }

    # 1. NNAA and privacy loss -------------------------------------------------------------------
    t0 = time.perf_counter()
    nnaa = None
    if enc_non is not None and "nnaa" in checks:
        n_est = min(len(original), len(synthetic) // 2, len(nonmember))
        n_est = min(n_est, max_nnaa_rows) if max_nnaa_rows else n_est
        nnaa = privacy_loss(
            enc_orig,
            enc_non,
            enc_syn,
            metric=metric,
            max_n=max_nnaa_rows,
            interval=nnaa_interval,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            random_state=seeds[0],
            n_jobs=n_jobs,
            progress=progress("NNAA (4 neighbour searches x 2)", 8 * n_est),
        )
    timings["nnaa"] = time.perf_counter() - t0

    # 2. DCR attack and protection scores -----------------------------------------------------------
    t0 = time.perf_counter()
    rng = check_random_state(seeds[1])

    def cap(n: int) -> np.ndarray:
        if max_dcr_rows is None or n <= max_dcr_rows:
            return np.arange(n)
        return np.sort(rng.choice(n, size=max_dcr_rows, replace=False))

    take = (lambda x, i: x.take(i)) if metric == "mixed" else (lambda x, i: x[i])
    do_dcr = "dcr" in checks
    rows_m = cap(len(original)) if do_dcr else np.empty(0, int)
    rows_h = cap(len(nonmember)) if nonmember is not None and do_dcr else np.empty(0, int)
    adv = progress("DCR", rows_m.size + rows_h.size)
    dcr_m = (
        distance_to_closest_record(
            take(enc_orig, rows_m), enc_syn, metric=metric, n_jobs=n_jobs, progress=adv
        )
        if do_dcr
        else np.empty(0)
    )
    score_frames = [pd.DataFrame({"set": "original", "row": rows_m, "member": 1, "dcr": dcr_m})]
    attack = overfitting = baseline = None
    if enc_non is not None and do_dcr:
        dcr_h = distance_to_closest_record(
            take(enc_non, rows_h), enc_syn, metric=metric, n_jobs=n_jobs, progress=adv
        )
        score_frames.append(pd.DataFrame({"set": nonmember_name, "row": rows_h, "member": 0, "dcr": dcr_h}))
        attack = dcr_attack(dcr_m, dcr_h)
        overfitting = dcr_overfitting_protection(
            enc_orig,
            enc_non,
            enc_syn,
            metric=metric,
            random_state=seeds[2],
            n_jobs=n_jobs,
            max_rows=max_protection_rows,
        )
    if metric == "mixed" and do_dcr:
        baseline = dcr_baseline_protection(
            enc_orig, enc_syn, random_state=seeds[3], n_jobs=n_jobs, max_rows=max_protection_rows
        )
    seed = None if random_state is None else np.random.SeedSequence([int(random_state), 12])
    copies = None if not do_dcr else copy_rates(
        dcr_m, attack and attack.dcr_nonmembers, original=enc_orig, synthetic=enc_syn, random_state=seed
    )  # fmt: skip
    timings["dcr"] = time.perf_counter() - t0
    scores = pd.concat(score_frames, ignore_index=True)
    scores["score"] = dcr_scores(scores["dcr"].to_numpy())

    # 3. attribute inference -------------------------------------------------------------------------
    t0 = time.perf_counter()
    inference: dict[str, InferenceResult] = {}
    adv = progress("attribute inference", max(1, len(secrets)))
    for s, seed in zip(secrets if "inference" in checks else (), seeds[4:], strict=False):
        inference[s] = attribute_inference(
            original,
            synthetic,
            secret=s,
            schema=schema,
            known=known,
            control=control,
            n_attacks=n_attacks,
            tolerance=tolerance,
            attacks=tuple(attacks),
            non_member_baseline=non_member_baseline,
            confidence=confidence,
            random_state=seed,
            n_jobs=n_jobs,
        )
        adv(1)
    timings["inference"] = time.perf_counter() - t0
    anonymity = _anonymity(
        original, synthetic, schema=schema, nonmember=nonmember, n_predicates=singling_out,
        n_cols=singling_out_cols, aux_cols=linkability, n_neighbors=linkability_neighbors,
        n_attacks=n_attacks, confidence=confidence, random_state=random_state, n_jobs=n_jobs,
        progress=progress, timings=timings,
    )  # fmt: skip
    per_target = [r.per_target.assign(secret=s) for s, r in inference.items()]
    n_other = headline_size(nnaa=nnaa is not None, copies=copies, inference=False)
    family = _inference_family(inference, confidence, n_other)
    policy = {"fail_above": fail_above, "metric": fail_metric, "confidence": confidence}
    return SyntheticAuditResult(
        policy=policy,
        inference_family=family,
        inputs=inputs,
        nnaa=nnaa,
        dcr_attack=attack,
        overfitting_protection=overfitting,
        baseline_protection=baseline,
        copies=copies,
        inference=inference,
        scores=scores,
        inference_targets=pd.concat(per_target, ignore_index=True) if per_target else pd.DataFrame(),
        timings_s=timings,
        **anonymity,
    )
