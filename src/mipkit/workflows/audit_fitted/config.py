"""The settings of :func:`mipkit.audit_fitted`: the measurement it shares with ``audit_scores``, the columns
of the members' and non-members' tables, and the reference models (how many, where they are fitted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mipkit._validation import MipkitValueError, check_choice
from mipkit.workflows.audit_scores.config import MeasureConfig, names

__all__ = ["DEFAULT_N_REFERENCE", "AuditFittedConfig"]

DEFAULT_N_REFERENCE = 16
"""Reference models trained by default: enough for LiRA's per-record Gaussians (each audited record is IN
about half of them and OUT of the others) and for RMIA, at 16 fits of the released model's procedure."""


@dataclass(frozen=True)
class AuditFittedConfig(MeasureConfig):
    """Every setting of :func:`mipkit.audit_fitted`: the measurement (see
    :class:`~mipkit.workflows.audit_scores.config.MeasureConfig`; ``seed`` also seeds the reference models'
    subsets and fits), then:

    Attributes
    ----------
    target : str, optional
        The label column of the tables (needed for DataFrames; ``(X, y)`` pairs carry their labels).
    id_column : str, optional
        A column of both tables naming each record (unique, never a feature): the per-record table and the
        most exposed records carry it.
    slice_by : tuple of str
        Columns of both tables to measure per subgroup (the true class always is), as ``mipkit audit``.
    n_reference : int
        Reference models to train: 0 (none: LOSS only) or at least 2 (default :data:`DEFAULT_N_REFERENCE`).
    backend : {"local", "ray"}
        Where the reference models are fitted (:func:`mipkit.engine.runner.run_fits`).
    n_jobs : int
        Parallel reference fits: >= 1, or -1 for every core (-2 all but one, ...).
    address : str, optional
        The Ray cluster's address (``backend="ray"``).
    """

    target: str | None = None
    id_column: str | None = None
    slice_by: tuple[str, ...] = ()
    n_reference: int = DEFAULT_N_REFERENCE
    backend: str = "local"
    n_jobs: int = -1
    address: str | None = None

    owner: ClassVar[str] = "audit_fitted"

    def check(self) -> None:
        super().check()
        k = self.n_reference
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0 or k == 1:
            raise MipkitValueError(
                f"The 'n_reference' parameter of audit_fitted must be 0 (none) or an integer >= 2. Got {k!r}."
            )
        if k == 0 and "loss" not in self.attacks:
            raise MipkitValueError(
                f"LiRA and RMIA need reference models; the 'n_reference' parameter of audit_fitted is 0 "
                f"(none), which leaves only LOSS: add loss to the 'attacks' parameter of audit_fitted "
                f"({', '.join(self.attacks)}), or ask for 2 or more reference models."
            )
        check_choice("backend", self.backend, ("local", "ray"), owner=self.owner)
        jobs = self.n_jobs
        if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0:
            raise MipkitValueError(
                "The 'n_jobs' parameter of audit_fitted must be an integer >= 1, or -1 for every core. "
                f"Got {jobs!r}."
            )
        id_column = None if self.id_column is None else str(self.id_column).strip() or None
        if id_column is not None and id_column == self.target:
            raise MipkitValueError(
                f"The 'id_column' parameter of audit_fitted names the target column {id_column!r}; the ids "
                "must be another column."
            )
        object.__setattr__(self, "n_reference", int(k))
        object.__setattr__(self, "n_jobs", int(jobs))
        object.__setattr__(self, "id_column", id_column)
        object.__setattr__(self, "slice_by", names(self.slice_by))
