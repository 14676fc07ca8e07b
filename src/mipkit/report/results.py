"""The run folder's ``results.json``: a versioned schema, written atomically.

Every run (``mipkit audit``, ``mipkit audit-synthetic``, ``mipkit protect``) writes one
``results.json`` holding ``schema_version``, ``kind``, ``mipkit_version``, ``created`` and the
command's own fields. Existing fields never change meaning; new ones may be added (minor version).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from mipkit import __version__
from mipkit._runfolder import atomic_write, read_run_file
from mipkit._validation import MipkitValueError

SCHEMA_VERSION = "1.2"
"""The schema of ``results.json``: the audit's top-level ``eta_ci`` is the cluster-bootstrap interval
simultaneous over the attacks (the Clopper-Pearson one stays per attack), beside ``verdict``, ``headline``,
``provenance``, per-attack ``*_cluster`` / ``*_simultaneous`` intervals, ``records`` (id column, ``row``
meaning, most exposed records) and ``slices`` (per-subgroup metrics). Files of schema 1.0 and 1.1 (without
some of these) are read too."""
RESULTS_FILE = "results.json"


def to_jsonable(obj: Any) -> Any:
    """Recursively convert NumPy scalars/arrays, tuples, Paths and dataclass-like objects to JSON types.

    Non-finite floats become ``None`` (JSON has no NaN).
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        if all(type(v) is float for v in obj):  # a curve of plain floats: no call per entry
            return [v if math.isfinite(v) else None for v in obj]
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biu":  # booleans and integers: JSON types as they are
            return obj.tolist()
        if obj.dtype.kind == "f" and np.isfinite(obj).all():  # the common case, without a call per entry
            return obj.astype(float).tolist()
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


def write_json_atomic(path: str | Path, payload: Any) -> Path:
    """Write JSON to ``path`` whole or not at all (:func:`mipkit._runfolder.atomic_write`: a unique temporary
    in the same folder, fsync, rename)."""
    text = json.dumps(to_jsonable(payload), indent=2, sort_keys=False) + "\n"
    return atomic_write(path, text, mode=0o644)


def write_results(run_dir: str | Path, results: dict, *, kind: str) -> Path:
    """Write ``run_dir/results.json`` with the schema header and ``results``' fields."""
    header = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "mipkit_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return write_json_atomic(Path(run_dir) / RESULTS_FILE, {**header, **results})


def read_results(run_dir: str | Path) -> dict:
    """Read ``run_dir/results.json`` with a clear error when it is missing or not a mipkit result."""
    path = Path(run_dir) / RESULTS_FILE
    raw = read_run_file(path)  # the staged version inside a staged write; never through a symlink
    if raw is None:
        raise MipkitValueError(f"No {RESULTS_FILE} in {run_dir}: is it a mipkit run folder?")
    from mipkit.data.json_input import parse_json_text

    data = parse_json_text(raw, f"The results file {path}")
    if not isinstance(data, dict) or "schema_version" not in data or "kind" not in data:
        raise MipkitValueError(f"{path} is not a mipkit results file (no schema_version/kind).")
    major = str(data["schema_version"]).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise MipkitValueError(
            f"{path} has schema version {data['schema_version']}; this mipkit reads {SCHEMA_VERSION}."
        )
    return data


def read_parquet_file(path: str | Path):
    """A Parquet file of a run folder as a DataFrame (its staged version inside a staged write; None when
    there is none; a symlink is refused, never followed)."""
    import io

    import pandas as pd

    raw = read_run_file(path)
    return None if raw is None else pd.read_parquet(io.BytesIO(raw))


def read_json_file(path: str | Path) -> Any:
    """A JSON file of a run folder (as :func:`read_parquet_file`: staged version, None, no symlink)."""
    raw = read_run_file(path)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise MipkitValueError(f"{path} is not valid JSON; rerun the command that wrote it.") from None
