"""What a private training run keeps of who trained it, and the audit of its model against its certificate.

:func:`read_records` reads the table of a private training run
(:class:`~mipkit.workflows.train_private.data.TrainingTable`) with each record's position in the table and
(with ``id_column``) its id; :func:`split_frame` is ``split.parquet``: one row per record with ``row``,
``id`` and ``member`` (trained on) - never a feature or a label. :func:`audit_against_certificate` audits the
fitted model as released (:func:`mipkit.audit_fitted`: LOSS on its outputs) on its
training rows (members) against the held-out rows, which stand in for non-members (they are the only records
of the population the run did not train on), and sets the measured TPR at each certified FPR beside its
certified bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.data.io import Dataset, features_target, read_table
from mipkit.workflows.train_private.data import TrainingTable

__all__ = ["AUDIT_DIR", "SPLIT_FILE", "audit_against_certificate", "read_records", "split_frame"]

SPLIT_FILE = "split.parquet"
AUDIT_DIR = "audit"
HELD_OUT_NOTE = (
    "The held-out rows stood in for non-members: they are the only records of the population the run did "
    "not train on, drawn from the same table by the run's secret random split (OS entropy, unless a noise "
    "seed was given)."
)


def read_records(
    data: TrainingTable, config: Any, domain: Any
) -> tuple[Dataset, np.ndarray, np.ndarray | None, list[str]]:
    """The arrays of ``data`` read with the settings of ``config`` (a
    :class:`~mipkit.workflows.train_private.config.TrainPrivateConfig`), each record's position in the table
    as read (``rows``; ``dropna`` drops some), its id (``None`` without ``data.id_column``; the id column
    is checked and left out of the features) and the raw feature columns, in the table's order."""
    from mipkit.workflows.audit.config import check_id_column

    df = (data.table if isinstance(data.table, pd.DataFrame) else read_table(data.table)).reset_index(
        drop=True
    )
    drop, ids = tuple(config.drop), None
    if data.id_column:
        ids = check_id_column(df, data.id_column)
        drop = drop if data.id_column in drop else (*drop, data.id_column)
    rows = np.arange(len(df))
    ds = features_target(
        df, data.target, encode=config.encode, drop=drop, dropna=config.dropna, domain=domain, release=True
    )
    if config.dropna:  # the rows features_target keeps: no missing feature nor label
        kept = df.drop(columns=[data.target, *drop]).notna().all(axis=1) & df[data.target].notna()
        rows, ids = rows[kept.to_numpy()], None if ids is None else ids[kept.to_numpy()]
    columns = [str(c) for c in df.columns if c != data.target and c not in drop]
    return ds, rows, ids, columns


def split_frame(
    rows: np.ndarray, ids: np.ndarray | None, train_idx: np.ndarray, test_idx: np.ndarray
) -> pd.DataFrame:
    """``split.parquet``: ``row`` (position in the table as read), ``id`` (with an id column) and
    ``member`` (True: trained on; False: held out), in the table's order."""
    member = np.zeros(rows.size, dtype=bool)
    member[train_idx] = True
    if member[test_idx].any():
        raise MipkitValueError("Internal error: a held-out row is also a training row.")
    frame = {"row": rows.astype(np.int64)}
    if ids is not None:
        frame["id"] = ids
    return pd.DataFrame({**frame, "member": member})


def _beside_certificate(detail: dict, bounds: dict, n_non: int) -> tuple[dict, list[str]]:
    """Each certified FPR's measured TPR (with its simultaneous interval) beside its bound, and the FPRs too
    small to measure on ``n_non`` non-members (no false positive to spare)."""
    rows, unmeasurable = {}, []
    for key, bound in bounds.items():
        if float(key) * n_non < 1:
            unmeasurable.append(key)
            continue
        got = next(v for k, v in detail.items() if float(k) == float(key))
        lower, upper = got["tpr_ci_simultaneous"]
        rows[key] = {
            "measured": got["tpr"],
            "lower": lower,
            "upper": upper,
            "certified": bound,
            "within": bool(got["tpr"] <= bound),
            "violation": bool(lower > bound),
        }
    return rows, unmeasurable


def audit_against_certificate(
    model: Any,
    X: np.ndarray,
    y: np.ndarray,
    train_idx: np.ndarray,
    test_idx: np.ndarray,
    certified: dict,
    *,
    out_dir: str | Path | None = None,
    seed: int = 0,
) -> dict:
    """Audit ``model`` on its training rows (members) against the held-out rows and compare with the
    certificate.

    Held-out rows equal to a training row (features and label) are left out: such a record would be both a
    member and a non-member. The audit runs LOSS on the model's outputs (no reference models: the held-out
    rows, the only non-members, are what the audit measures on). Its run folder is ``out_dir`` (results.json
    of kind ``"audit-fitted"``, scores.parquet, report.html).

    Returns
    -------
    dict
        ``members``, ``non_members``, ``left_out`` (held-out rows equal to a member), ``note`` (the held-out
        rows stood in for non-members), ``measured_eta`` and its interval, ``tpr_at_fpr``: per certified FPR,
        ``measured`` (the strongest attack), its ``lower`` and ``upper`` confidence ends (simultaneous 95%),
        ``certified``, ``within`` (measured <= certified) and ``violation`` (even the lower end above the
        bound: beyond sampling error); ``holds``: no violation. An FPR below one over the number of
        non-members is not measured (``unmeasurable_fprs``).
    """
    from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted

    members = pd.DataFrame(X[train_idx]).assign(__y=y[train_idx])
    held = pd.DataFrame(X[test_idx]).assign(__y=y[test_idx])
    known = pd.util.hash_pandas_object(members, index=False).to_numpy()
    fresh = ~np.isin(pd.util.hash_pandas_object(held, index=False).to_numpy(), known)
    if fresh.sum() < 2:
        raise MipkitValueError(
            "Fewer than two held-out rows differ from every training row: there is nothing to audit the "
            "model against. Hold out a larger share of the rows (test_size)."
        )
    non = test_idx[fresh]
    fprs = tuple(float(f) for f in certified["tpr_at_fpr"])
    release = FittedRelease(model, (X[train_idx], y[train_idx]), (X[non], y[non]))
    result = audit_fitted(
        release, AuditFittedConfig(attacks=("loss",), seed=seed, fprs=fprs), run_dir=out_dir
    )
    if out_dir is not None:
        result.write(out_dir)
    d = result.to_dict()
    detail = d["attacks"][d["strongest_attack"]]["tpr_at_fpr_detail"]
    rows, unmeasurable = _beside_certificate(detail, certified["tpr_at_fpr"], int(non.size))
    return {
        "members": int(train_idx.size),
        "non_members": int(non.size),
        "left_out": int((~fresh).sum()),
        "note": HELD_OUT_NOTE,
        "attack": d["strongest_attack"],
        "measured_eta": d["eta"],
        "measured_eta_ci": d["eta_ci"],
        "certified_eta": certified["eta"],
        "tpr_at_fpr": rows,
        "holds": not any(r["violation"] for r in rows.values()),
        "unmeasurable_fprs": unmeasurable,
        "run_dir": None if out_dir is None else str(out_dir),
    }
