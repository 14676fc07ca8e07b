"""The data of :func:`mipkit.audit_scores`: one model's outputs on the audited records (:class:`ModelOutputs`)
and the predictions of an audit (:class:`Predictions`: labels, membership, the audited model's outputs and
those of reference models), with the checks that turn them into probabilities.

A per-record loss ``l`` is turned into the two-column probabilities ``(exp(-l), 1 - exp(-l))`` of label 0
(:func:`loss_to_proba`), so that the registry's cross-entropy signal is ``l`` itself (exact for a
cross-entropy loss, ``-log p_y``; clipped at about 708), LiRA's logit-scaled confidence is
``log(p / (1 - p))`` with ``p = exp(-l)`` and RMIA's probability is ``exp(-l)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import softmax

from mipkit._validation import MipkitValueError
from mipkit.workflows.audit.config import RecordInfo

__all__ = ["PROBA_TOLERANCE", "ModelOutputs", "Predictions", "as_proba", "binary", "loss_to_proba"]

PROBA_TOLERANCE = 1e-3
"""Largest accepted ``|sum_c p_c - 1|`` of a row of class probabilities (rounding in a CSV file)."""


@dataclass(frozen=True)
class ModelOutputs:
    """One model's outputs on the ``n`` audited records: exactly one of ``proba``, ``logits``, ``loss``.

    Attributes
    ----------
    proba : array of shape (n, C), optional
        Class probabilities (rows in [0, 1] summing to 1 within :data:`PROBA_TOLERANCE`).
    logits : array of shape (n, C), optional
        Pre-softmax scores.
    loss : array of shape (n,), optional
        A per-record loss (>= 0; read as a negative log-likelihood, see the module docstring).
    member : bool array of shape (n,), optional
        For a reference model: which audited records it was trained on (default: none, an offline
        reference model).
    """

    proba: Any = None
    logits: Any = None
    loss: Any = None
    member: Any = None

    @property
    def kind(self) -> str:
        given = [k for k in ("proba", "logits", "loss") if getattr(self, k) is not None]
        if len(given) != 1:
            raise MipkitValueError(
                "Model outputs must be exactly one of proba, logits or loss. Got "
                f"{', '.join(given) if given else 'none'} instead."
            )
        return given[0]


@dataclass(frozen=True, eq=False)
class Predictions:
    """What :func:`mipkit.audit_scores` audits: the audited records' labels and membership, the audited
    model's outputs on them and, optionally, reference models' outputs (as read from a predictions file by
    :func:`mipkit.workflows.audit_scores.file.read_predictions`, or given as arrays).

    Attributes
    ----------
    labels : int array of shape (n,)
        Class codes ``0..C-1`` (the columns of ``outputs``); ignored for a ``loss``.
    member : array of shape (n,)
        1 (True) if the record was in the audited model's training data, else 0.
    outputs : ModelOutputs
        The audited model's probabilities, logits or per-record loss.
    reference : sequence of ModelOutputs
        Reference models' outputs of the same kind, each with its ``member`` (default: all OUT).
    ids : array of shape (n,), optional
        Record ids (named ``id``), carried into the per-record table.
    classes : sequence of str
        Class names of the output columns (default: their codes).
    records : RecordInfo, optional
        Who the records are (rows, ids and the id column's name) and their ``slice_by`` values; replaces
        ``ids``.
    label_name : str
        The name of the true class in the subgroup table (the label column).
    model_info : mapping
        Describes the audited model (``import_path``: its name in the report), for ``results.json``.
    design : mapping
        How the outputs were obtained (``source``: the predictions file or table, ...), for ``results.json``.
    """

    labels: Any
    member: Any
    outputs: ModelOutputs
    reference: Sequence[ModelOutputs] = ()
    ids: Any = None
    classes: Sequence[str] = ()
    records: RecordInfo | None = None
    label_name: str = "label"
    model_info: Mapping[str, Any] = field(default_factory=lambda: {"import_path": "fitted model"})
    design: Mapping[str, Any] = field(default_factory=dict)

    def record_info(self, n: int) -> RecordInfo:
        """:attr:`records`, or the records named by their position (and :attr:`ids`), checked to hold one
        entry per record."""
        records = self.records
        if records is None:
            records = RecordInfo(
                np.arange(n), *((np.asarray(self.ids), "id") if self.ids is not None else ())
            )
        if np.shape(records.rows) != (n,) or (records.ids is not None and np.shape(records.ids) != (n,)):
            raise MipkitValueError(f"The records' rows and ids must have one entry per record ({n}).")
        return records


def loss_to_proba(loss: np.ndarray) -> np.ndarray:
    """``(..., n) -> (..., n, 2)``: ``(exp(-l), 1 - exp(-l))``, the probabilities of label 0 whose
    cross-entropy is ``l`` (``-expm1(-l)`` keeps the second column exact for small losses)."""
    loss = np.asarray(loss, dtype=float)
    return np.stack([np.exp(-loss), -np.expm1(-loss)], axis=-1)


def _check_proba(arr: np.ndarray, who: str) -> None:
    outside = np.flatnonzero(np.any((arr < 0) | (arr > 1), axis=1))
    if outside.size:
        raise MipkitValueError(
            f"The probabilities of {who} must lie in [0, 1]; {outside.size} record(s) do not (first: record "
            f"{outside[0] + 1})."
        )
    off = np.abs(arr.sum(axis=1) - 1.0)
    if off.max() > PROBA_TOLERANCE:
        raise MipkitValueError(
            f"The probabilities of {who} must sum to 1 on every record (within {PROBA_TOLERANCE:g}); record "
            f"{int(np.argmax(off)) + 1} is off by {off.max():.3g}."
        )


def as_proba(out: ModelOutputs, n: int, n_classes: int | None, who: str) -> np.ndarray:
    """``(n, C)`` class probabilities of ``out`` (a loss as :func:`loss_to_proba`, logits through the
    softmax), checked: the shape, finite values, probabilities in [0, 1] that sum to 1."""
    kind = out.kind
    arr = np.asarray(getattr(out, kind), dtype=float)
    if kind == "loss":
        if arr.shape != (n,):
            raise MipkitValueError(f"The loss of {who} must have shape ({n},). Got {arr.shape} instead.")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise MipkitValueError(f"The loss of {who} must be finite and >= 0 on every record.")
        return loss_to_proba(arr)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 2:
        raise MipkitValueError(f"The {kind} of {who} must have shape ({n}, C >= 2). Got {arr.shape} instead.")
    if n_classes is not None and arr.shape[1] != n_classes:
        raise MipkitValueError(
            f"The {kind} of {who} have {arr.shape[1]} columns; the target's have {n_classes}."
        )
    if not np.all(np.isfinite(arr)):
        raise MipkitValueError(f"The {kind} of {who} must be finite (no NaN or infinity).")
    if kind == "logits":
        return softmax(arr, axis=1)
    _check_proba(arr, who)
    return arr


def binary(values: Any, n: int, what: str) -> np.ndarray:
    """A membership column as booleans: ``n`` values, each 0 or 1 (or True / False)."""
    arr = np.asarray(values)
    if arr.shape != (n,):
        raise MipkitValueError(f"The {what} must have shape ({n},). Got {arr.shape} instead.")
    if arr.dtype != bool:
        num = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=float)
        if np.any(~np.isin(num, (0.0, 1.0))):
            raise MipkitValueError(f"The {what} must be 0 or 1 on every record (no missing values).")
        arr = num == 1.0
    return arr
