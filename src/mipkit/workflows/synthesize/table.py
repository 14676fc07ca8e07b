"""What a synthesizer run acts on: :class:`PrivateTable`, the private records and their public domain.

The column domain is data-side input, not a setting: it describes this table's columns (their ranges and
categories, from a public code book), it is checked against the table, and a config stays reusable
across tables. Without one, the run estimates the domain from the records with differential privacy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = ["PrivateTable"]


@dataclass(frozen=True)
class PrivateTable:
    """The private table a synthesizer is fitted on, with the public domain of its columns when known.

    Parameters
    ----------
    table : DataFrame
        The private records.
    domain : mapping, optional
        Public column domain (``{column: {"type": "numeric", "min", "max"[, "integer", "missing"]}`` or
        ``{"type": "categorical", "categories": [...][, "missing"]}``; ``mipkit domain`` writes a template),
        used as is at no privacy cost. ``None``: estimated with differential privacy from a share of the
        budget (``SynthesizeConfig.domain_share``); CTGAN reads it from the data.
    """

    table: pd.DataFrame = field(repr=False)
    domain: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.table, pd.DataFrame):
            raise MipkitValueError(
                f"The 'data' parameter of synthesize must be a DataFrame. Got {type(self.table).__name__}."
            )
        if self.domain is not None and not isinstance(self.domain, Mapping):
            raise MipkitValueError(
                "The domain must be a mapping of columns to their public ranges or categories. "
                f"Got {type(self.domain).__name__}."
            )
