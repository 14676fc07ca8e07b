"""What :func:`mipkit.workflows.train_private.train_private` acts on: a table and its public domain.

:class:`TrainingTable` names the table (a CSV or Parquet path, or a pandas DataFrame), its label column,
the public domain of its features (:mod:`mipkit.data.domain`: the encoding comes from it alone, never from
the rows) and, optionally, a column of record ids. Arrays already encoded (a
:class:`mipkit.data.io.Dataset`) may be given instead of a table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from mipkit._validation import MipkitValueError

__all__ = ["TrainingTable"]

OWNER = "train_private"


@dataclass(frozen=True)
class TrainingTable:
    """The table a private model is trained on (checked when built; read by the verb).

    Attributes
    ----------
    table : str, path or DataFrame
        A CSV or Parquet file, or the table itself.
    target : str
        The label column.
    domain : str, path or dict, optional
        The features' public domain (a JSON file or its mapping, :mod:`mipkit.data.domain`). Without it
        every feature must be numeric.
    id_column : str, optional
        A column of unique record ids: left out of the features, written beside each row in
        ``split.parquet``.
    """

    table: Any
    target: str
    domain: str | os.PathLike | dict | None = None
    id_column: str | None = None

    def __post_init__(self) -> None:
        import pandas as pd

        if self.table is None or (not isinstance(self.table, pd.DataFrame) and not str(self.table).strip()):
            raise MipkitValueError(f"The 'table' parameter of {OWNER} is required (a CSV or Parquet file).")
        if not isinstance(self.target, str) or not self.target.strip():
            raise MipkitValueError(f"The 'target' parameter of {OWNER} is required (the label column).")
        ids = None if self.id_column is None else str(self.id_column).strip() or None
        if ids is not None and ids == self.target:
            raise MipkitValueError(
                f"The 'id_column' parameter of {OWNER} names the label column {ids!r}; the ids must be "
                "another column."
            )
        object.__setattr__(self, "id_column", ids)

    def describe(self) -> str:
        """The table in words: its path, or that it was given as a DataFrame."""
        import pandas as pd

        return "a table given as a DataFrame" if isinstance(self.table, pd.DataFrame) else str(self.table)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``data``: the path, None for a DataFrame; ``domain``: its path or mapping)."""
        import pandas as pd

        domain = self.domain
        return {
            "data": None if isinstance(self.table, pd.DataFrame) else str(self.table),
            "target": self.target,
            "domain": str(domain) if isinstance(domain, (str, os.PathLike)) else domain,
            "id_column": self.id_column,
        }
