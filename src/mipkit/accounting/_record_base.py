"""The base of the mechanism records: the :class:`Mechanism` class, the neighbouring relations and the
parsing of a serialised record (shared by :mod:`mipkit.accounting.mechanisms` and its companion
:mod:`mipkit.accounting.mechanisms_dp`; docs/theory.md section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any, ClassVar

from mipkit._validation import MipkitValueError, check_choice, check_positive

__all__ = ["NEIGHBOURS", "Mechanism", "record_parts"]

#: The neighbouring relations a record can state (module docstring); the first is the default.
NEIGHBOURS: tuple[str, ...] = ("add_remove", "replace_one")


class Mechanism:
    """Base class of the mechanism records: frozen dataclasses validated when built.

    Subclasses set ``name`` (the ``"name"`` of :meth:`to_dict`) and validate their fields in
    ``__post_init__``. Records compare and hash by value.
    """

    name: ClassVar[str] = ""
    neighbours: str

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., <field>: <value>, ...}``: JSON-ready; :func:`mechanism_from_dict` reverses it."""
        return {"name": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}  # type: ignore[arg-type]


def _set(record: Mechanism, field_name: str, value: Any) -> None:
    object.__setattr__(record, field_name, value)


def _relation(record: Mechanism) -> None:
    """Check the record's ``neighbours`` field."""
    owner = type(record).__name__
    _set(record, "neighbours", check_choice("neighbours", record.neighbours, NEIGHBOURS, owner=owner))


def _positive(record: Mechanism, *names: str) -> None:
    """Check (and store as floats) the fields of ``record`` that must be finite and ``> 0``."""
    for n in names:
        _set(record, n, check_positive(n, getattr(record, n), owner=type(record).__name__))


def record_parts(
    d: Mapping[str, Any], registry: Mapping[str, type], kind: str, owner: str
) -> tuple[type, dict]:
    """The class and the parameters of a serialised record ``{"name": ..., <parameter>: ..., ...}``.

    Checks that ``d`` is a dict whose ``"name"`` is in ``registry`` (name -> dataclass), with no unknown key
    and every parameter without a default given (not None). Shared by :func:`mechanism_from_dict` and
    :func:`mipkit.accounting.targets.target_from_dict`; ``kind`` names the record in messages.
    """
    if not isinstance(d, Mapping) or "name" not in d:
        raise MipkitValueError(
            f"The 'd' parameter of {owner} must be a dict with a 'name' key. Got {d!r} instead."
        )
    name = d["name"]
    if name not in registry:
        raise MipkitValueError(
            f"The 'name' of a {kind} must be one of {list(registry)}. Got {name!r} instead."
        )
    cls = registry[name]
    known = fields(cls)
    extra = sorted(set(d) - {f.name for f in known} - {"name"})
    if extra:
        raise MipkitValueError(
            f"A {name!r} {kind} takes {[f.name for f in known]}. Got unknown keys {extra} instead."
        )
    for f in known:
        if f.default is MISSING and d.get(f.name) is None:
            raise MipkitValueError(f"The {name!r} {kind} needs the {f.name!r} parameter. Got None instead.")
    return cls, {k: v for k, v in d.items() if k != "name"}
