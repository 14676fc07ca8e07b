"""What a MIP-noise release acts on: :class:`ProtectData`, the rows as arrays and where their encoding came
from.

``protect`` trains on them; ``audit_noise`` reads them as the pool ``D`` of the MIP game. Both release
models trained on the rows, so :meth:`ProtectData.from_table` encodes a non-numeric feature only from a
public domain (:mod:`mipkit.data.domain`): levels read from the rows would reveal the training rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mipkit._validation import MipkitValueError, check_choice
from mipkit.mechanisms.spread import num_samples

__all__ = ["ProtectData", "as_protect_data"]


@dataclass(frozen=True)
class ProtectData:
    """The rows of a MIP-noise release: features, labels and the provenance of their encoding.

    Attributes
    ----------
    X : array-like of shape (n, d)
        Numeric features.
    y : array-like of shape (n,) or None
        Labels (None for an estimator fitted on ``X`` alone).
    domain : dict or None
        Where the encoding came from (:func:`mipkit.data.domain.domain_provenance`); None for arrays the
        caller encoded.
    """

    X: Any
    y: Any = None
    domain: dict | None = None

    def __post_init__(self) -> None:
        if not hasattr(self.X, "shape") and not hasattr(self.X, "__len__"):
            raise MipkitValueError("The features X must be an array or a table of rows.")
        if self.y is not None and num_samples(self.y) != num_samples(self.X):
            raise MipkitValueError(
                f"X has {num_samples(self.X)} rows but y has {num_samples(self.y)}; give one label per row."
            )

    @property
    def n_records(self) -> int:
        """The number of rows."""
        return num_samples(self.X)

    @classmethod
    def from_table(
        cls,
        path: str | Path,
        target: str,
        *,
        encode: str = "none",
        drop: Sequence[str] = (),
        domain: str | Path | Mapping | None = None,
        owner: str = "protect",
    ) -> ProtectData:
        """Read a CSV/Parquet table: features and labels, levels from the public ``domain`` only.

        Parameters
        ----------
        path : path
            The table.
        target : str
            The label column.
        encode : {"none", "onehot"}
            How non-numeric features would be encoded without a domain (a release refuses them then).
        drop : sequence of str
            Columns to leave out.
        domain : path, mapping or None
            The features' public domain.
        owner : str
            The verb, named in errors.
        """
        from mipkit.data.domain import domain_provenance, load_domain
        from mipkit.data.io import features_target, read_table

        check_choice("encode", encode, ("none", "onehot"), owner=owner)
        dom, where = load_domain(domain)
        ds = features_target(
            read_table(path), target, encode=encode, drop=tuple(drop or ()), domain=dom, release=True
        )
        return cls(ds.X, ds.y, domain_provenance(dom, where))


def as_protect_data(data: Any) -> ProtectData:
    """``data`` as :class:`ProtectData`: itself, or an ``(X, y)`` pair."""
    if isinstance(data, ProtectData):
        return data
    if isinstance(data, tuple) and len(data) == 2:
        return ProtectData(*data)
    raise MipkitValueError(
        "The data of protect / audit_noise must be a ProtectData (ProtectData.from_table reads a table) or "
        f"an (X, y) pair. Got {type(data).__name__}."
    )
