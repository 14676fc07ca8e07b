"""The ``inputs`` block of a synthetic-data audit: table sizes, fingerprints, the schema and the settings.

Nothing here holds a value of a real record unless ``include_data_summary`` asks for the numeric minima
and ranges; the fingerprints identify the audited tables without revealing their records.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from mipkit.data.neighbors.kernels import exact_lattice
from mipkit.data.tables import TableSchema
from mipkit.workflows.audit_synthetic.config import AuditSyntheticConfig
from mipkit.workflows.audit_synthetic.release import SyntheticRelease

__all__ = ["exact_ties", "inputs_record", "table_fingerprint"]


def table_fingerprint(df: pd.DataFrame) -> str:
    """SHA-256 (first 16 hex digits) of a table's column names and cell values, row order included.

    ``pandas.util.hash_pandas_object`` hashes each row (values and dtypes); the digest of those row hashes
    and the column names identifies the audited table without revealing anything about its records.
    """
    h = hashlib.sha256("\x1f".join(map(str, df.columns)).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def exact_ties(schema: TableSchema, metric: str, a, b) -> dict:
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


def _columns(schema: TableSchema, include_data_summary: bool) -> dict:
    """The schema as recorded in ``results.json``: roles and level counts; values of real records (numeric
    minimum and range) only when asked."""
    cols = schema.to_dict()
    if not include_data_summary:
        cols = {k: v for k, v in cols.items() if k not in ("numeric_min", "numeric_range")}
    return cols


def inputs_record(
    data: SyntheticRelease, config: AuditSyntheticConfig, schema: TableSchema, ties: dict | None
) -> dict:
    """The ``inputs`` block of ``results.json`` (``ties``: :func:`exact_ties`, None without distances)."""
    c = config
    nonmember, name = data.nonmember
    inputs = {
        "n_original": len(data.original),
        "n_synthetic": len(data.synthetic),
        "n_control": None if data.control is None else len(data.control),
        "n_holdout": None if data.holdout is None else len(data.holdout),
        "nonmember_set": name if nonmember is not None else None,
        "columns": _columns(schema, c.include_data_summary),
        "fingerprints": {k: table_fingerprint(df) for k, df in data.tables().items() if df is not None},
        "sources": dict(data.sources) if data.sources else None,
        "confidence": c.confidence,
        "metric": c.metric,
        "secrets": list(c.secrets),
        "known": None if c.known is None else list(c.known),
        "n_attacks": c.n_attacks,
        "tolerance": c.tolerance,
        "attacks": list(c.attacks),
        "non_member_baseline": c.non_member_baseline,
        "n_refits": c.n_refits,
        "random_state": c.random_state,
        "exact_ties": ties,
        "checks": list(c.checks),
    }
    if c.singling_out is not None:
        inputs["singling_out"] = {"n_predicates": c.singling_out, "n_cols": c.singling_out_cols}
    if c.linkability is not None:
        inputs["linkability"] = {
            "aux_cols": [list(cols) for cols in c.linkability],
            "n_neighbors": c.linkability_neighbors,
        }
    return inputs
