"""The one shape of every verb: a frozen config validated when built, ``verb(data, config) -> Result``, and a
frozen result that can be read, tabled and written.

Each verb lives in its own subpackage of :mod:`mipkit.workflows` with the same three modules:

``config.py``
    ``<Verb>Config``, a frozen dataclass that subclasses :class:`VerbConfig`; its ``check`` method raises
    :class:`mipkit.MipkitValueError` on a bad setting, so a config that exists is a valid one.
``run.py``
    ``verb(data, config) -> <Verb>Result``: ``data`` is what the verb acts on (a table, a fitted model and
    its records, a mechanism), ``config`` every setting; a ``progress`` keyword takes a
    :class:`mipkit._progress.Progress`.
``result.py``
    ``<Verb>Result``, a frozen dataclass with :meth:`VerbResult.summary` (the plain paragraph a privacy
    officer can paste into a DPIA), ``to_dict`` (JSON-able), ``to_frame`` (one tidy table) and ``write``
    (a run folder or file set).

The command line maps flags to a config, calls the verb and prints ``summary()`` then the tables.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["VerbConfig", "VerbResult"]

C = TypeVar("C", bound="VerbConfig")


class VerbConfig:
    """Base of every verb's frozen config dataclass: checked when built.

    A subclass is declared ``@dataclass(frozen=True)`` and implements :meth:`check`, which raises
    :class:`mipkit.MipkitValueError` with one line saying what is wrong; it may normalise fields with
    ``object.__setattr__`` (e.g. a list to a tuple).
    """

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise :class:`mipkit.MipkitValueError` on a bad setting (subclasses override)."""

    def replace(self: C, **changes: Any) -> C:
        """A copy with ``changes`` applied, checked again."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-able dict (tuples as lists)."""
        return {
            f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
        }


@runtime_checkable
class VerbResult(Protocol):
    """What every verb returns (a frozen dataclass)."""

    def summary(self) -> str:
        """One plain paragraph: what was done, the headline risk in words, what it means, its premises."""

    def to_dict(self) -> dict[str, Any]:
        """Everything the result holds that may leave the machine, JSON-able."""

    def to_frame(self) -> pd.DataFrame:
        """The result's main table, one row per measured quantity."""

    def write(self, out: str | Path) -> Path:
        """Write the result (run folder or files) under ``out`` and return the path written."""
