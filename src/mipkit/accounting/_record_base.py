"""The base of the mechanism records: the :class:`Mechanism` class, the neighbouring relations and the
parsing of a serialised record (shared by :mod:`mipkit.accounting.mechanisms` and its companion
:mod:`mipkit.accounting.mechanisms_dp`; docs/theory.md section 3)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from typing import Any, ClassVar

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_delta,
    check_epsilon,
    check_interval,
    check_positive,
    check_positive_int,
    check_sample_rate,
)

__all__ = ["NEIGHBOURS", "Mechanism", "record_parts"]

#: The neighbouring relations a record can state (module docstring); the first is the default.
NEIGHBOURS: tuple[str, ...] = ("add_remove", "replace_one")


#: The checks a record's ``checks`` can name: kind -> ``check(field name, value, owner)``, which returns the
#: value to store or raises ``MipkitValueError`` naming the field and the record type ``owner``.
FIELD_CHECKS: dict[str, Callable[[str, Any, str], Any]] = {
    "epsilon": lambda name, value, owner: check_epsilon(value, owner=owner),
    "delta": lambda name, value, owner: check_delta(value, owner=owner),
    "sample_rate": lambda name, value, owner: check_sample_rate(value, owner=owner),
    "positive": lambda name, value, owner: check_positive(name, value, owner=owner),
    "positive_int": lambda name, value, owner: check_positive_int(name, value, owner=owner),
    "nonnegative": lambda name, value, owner: check_interval(
        name, value, 0.0, math.inf, closed="left", owner=owner
    ),
}


class Mechanism:
    """Base class of the mechanism records: frozen dataclasses validated when built.

    A record type states its ``name`` (the ``"name"`` of :meth:`to_dict`) and the checks of its fields in
    its class statement, ``class GDP(Mechanism, name="gdp", checks={"mu": "nonnegative"})``; a subclass
    that states neither keeps its parent's. The shared ``__post_init__`` runs ``checks`` (field -> kind of
    :data:`FIELD_CHECKS`, in order), stores each field as checked, then checks ``neighbours``; a record
    that needs more overrides it. Records compare and hash by value.
    """

    name: ClassVar[str] = ""
    checks: ClassVar[Mapping[str, str]] = {}
    neighbours: str

    def __init_subclass__(
        cls, *, name: str | None = None, checks: Mapping[str, str] | None = None, **kwargs: Any
    ) -> None:
        """Record the type's ``name`` and the ``checks`` of its fields (class docstring)."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.name = name
        if checks is not None:
            unknown = sorted(set(checks.values()) - set(FIELD_CHECKS))
            if unknown:
                raise TypeError(
                    f"{cls.__name__}: unknown field checks {unknown}; known: {sorted(FIELD_CHECKS)}."
                )
            cls.checks = dict(checks)

    def __post_init__(self) -> None:
        """Check the fields named in ``checks``, then ``neighbours``, storing each as checked."""
        owner = type(self).__name__
        for field_name, kind in self.checks.items():
            _set(self, field_name, FIELD_CHECKS[kind](field_name, getattr(self, field_name), owner))
        _relation(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., <field>: <value>, ...}``: JSON-ready; :func:`mechanism_from_dict` reverses it."""
        return {"name": self.name, **{f.name: getattr(self, f.name) for f in fields(self)}}  # type: ignore[arg-type]


def _set(record: Mechanism, field_name: str, value: Any) -> None:
    object.__setattr__(record, field_name, value)


def _relation(record: Mechanism) -> None:
    """Check the record's ``neighbours`` field."""
    owner = type(record).__name__
    _set(record, "neighbours", check_choice("neighbours", record.neighbours, NEIGHBOURS, owner=owner))


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
