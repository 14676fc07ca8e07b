"""Public domains of table columns: reading and checking them, encoding from them, and schema-only templates.

A private release (a DP-SGD model, a MIP-noise model, a synthetic table) is covered by its certificate only
if nothing else in it depends on the training rows. One-hot levels read from the table are such a thing: a
level that one row alone holds adds an input to the model exactly when that row is a member. The encoding of
a private release is therefore taken from a **domain** written from public knowledge (a code book, a
standard), never read off the private rows. The format is one JSON object, the one ``mipkit synthesize
--domain`` reads::

    {column: {"type": "numeric", "min": a, "max": b, "integer": bool, "missing": bool}
           | {"type": "categorical", "categories": [...], "missing": bool}
           | {"type": "identifier"}}

(``integer`` and ``missing`` default to false; an ``identifier`` column names records and is never a
feature: a verb is given it with ``--id-column``). :func:`read_domain` reads and validates a file,
:func:`validate_domain` a mapping, :func:`check_domain` matches a domain to a table's columns,
:func:`encode_features` turns feature columns into arrays from the domain alone (levels in the domain's
order, every level always a column, values outside the domain refused without printing them), and
:func:`domain_template` writes a template from a table's schema only (names and kinds; the user fills in
ranges and categories).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = [
    "MAX_DOMAIN_BYTES",
    "check_domain",
    "domain_provenance",
    "domain_template",
    "encode_features",
    "load_domain",
    "needs_domain_message",
    "read_domain",
    "validate_domain",
]

#: Largest domain file read (a domain lists column kinds, ranges and categories: kilobytes, not megabytes).
MAX_DOMAIN_BYTES = 10 * 2**20
#: Deepest JSON nesting accepted (a domain needs 3: the object, a column's entry, its categories).
MAX_DOMAIN_DEPTH = 8
_KEYS = {
    "numeric": ("type", "min", "max", "integer", "missing"),
    "categorical": ("type", "categories", "missing"),
    "identifier": ("type",),
}
#: The entry of a column that names records (``mipkit domain`` writes it for an id-like column).
IDENTIFIER = {"type": "identifier"}
_TEMPLATE_HINT = "mipkit domain --data T.csv --out domain.json writes a template"


def needs_domain_message(columns: Sequence[str]) -> str:
    """The one-line refusal of non-numeric features in a private release made without a domain."""
    shown = ", ".join(map(repr, list(columns)[:8])) + (" ..." if len(columns) > 8 else "")
    return (
        f"Non-numeric feature column(s) {shown}: one-hot levels read from the training rows would reveal "
        "them (a level that one row alone holds adds a model input exactly when that row is a member); "
        f"give their public domain with --domain FILE ({_TEMPLATE_HINT})."
    )


# -- reading and validation ----------------------------------------------------------------------------------
def _no_repeats(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise MipkitValueError(f"The domain names {key!r} twice; give each name once.")
        out[key] = value
    return out


def read_domain(path: str | os.PathLike) -> dict[str, dict]:
    """Read and validate a domain file (JSON; see the module docstring).

    A regular file of at most :data:`MAX_DOMAIN_BYTES`, JSON nested at most :data:`MAX_DOMAIN_DEPTH` deep,
    with no repeated name and no ``NaN`` / ``Infinity``; every entry as :func:`validate_domain` requires.
    Each problem is one :class:`MipkitValueError` line.
    """
    from mipkit.data.json_input import parse_json_text, read_input_bytes

    p = Path(path)
    raw = read_input_bytes(p, "domain file", max_bytes=MAX_DOMAIN_BYTES)
    obj = parse_json_text(
        raw,
        f"The domain file {p}",
        max_bytes=MAX_DOMAIN_BYTES,
        max_depth=MAX_DOMAIN_DEPTH,
        object_pairs_hook=_no_repeats,
    )
    return validate_domain(obj, source=f"The domain {p}")


def _category(col: str, value: Any) -> str:
    """A category as the text it is matched by: ``1``, ``1.0`` and ``"1"`` are all ``"1"``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    raise MipkitValueError(
        f"The domain of {col!r} lists a category of type {type(value).__name__}; categories are texts or "
        "finite numbers."
    )


def _bound(col: str, key: str, spec: Mapping) -> float:
    value = spec.get(key)
    if value is None:
        raise MipkitValueError(
            f"The domain of {col!r} needs a finite {key!r} (a public bound, e.g. from a code book); "
            f"it has {'none' if key not in spec else 'null'}."
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MipkitValueError(f"The {key!r} of {col!r} in the domain must be a number; got {value!r}.")
    if not math.isfinite(value):
        raise MipkitValueError(f"The {key!r} of {col!r} in the domain must be finite; got {value!r}.")
    return float(value)


def _flag(col: str, key: str, spec: Mapping) -> bool:
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise MipkitValueError(f"The {key!r} of {col!r} in the domain must be true or false; got {value!r}.")
    return value


def _entry(col: str, spec: Any) -> dict:
    if not isinstance(spec, Mapping):
        raise MipkitValueError(
            f"The domain entry of {col!r} must be an object such as "
            f'{{"type": "numeric", "min": 0, "max": 1}}; got {type(spec).__name__}.'
        )
    if "type" not in spec:
        raise MipkitValueError(f"The domain entry of {col!r} has no 'type' ('numeric' or 'categorical').")
    kind = spec["type"]
    if kind not in _KEYS:
        raise MipkitValueError(
            f"The domain of {col!r} must have 'type' 'numeric', 'categorical' or 'identifier'. Got {kind!r} "
            "instead."
        )
    unknown = [str(k) for k in spec if k not in _KEYS[kind]]
    if unknown:
        raise MipkitValueError(
            f"The domain entry of {col!r} has unknown key(s) {', '.join(map(repr, unknown))}; a {kind} "
            f"entry takes {', '.join(map(repr, _KEYS[kind]))}."
        )
    if kind == "identifier":
        return dict(IDENTIFIER)
    if kind == "numeric":
        lo, hi = _bound(col, "min", spec), _bound(col, "max", spec)
        if lo > hi:
            raise MipkitValueError(f"The domain of {col!r} has 'min' {lo:g} above 'max' {hi:g}.")
        out: dict[str, Any] = {
            "type": "numeric",
            "min": lo,
            "max": hi,
            "integer": _flag(col, "integer", spec),
        }
    else:
        cats = spec.get("categories")
        if not isinstance(cats, list) or not cats:
            raise MipkitValueError(
                f"The domain of {col!r} needs a non-empty 'categories' list (its public levels)."
            )
        names = [_category(col, c) for c in cats]
        if len(set(names)) < len(names):
            raise MipkitValueError(f"The domain of {col!r} lists a category twice; give each level once.")
        out = {"type": "categorical", "categories": names}
    out["missing"] = _flag(col, "missing", spec)
    return out


def validate_domain(domain: Any, *, source: str = "The domain") -> dict[str, dict]:
    """Check a domain mapping and return it normalised (floats for bounds, text categories, both flags).

    Refused, each with one line: anything but a non-empty mapping of column -> entry; an entry that is not
    a mapping, has no ``type`` or an unknown one, or unknown keys; a numeric entry without finite numbers
    ``min <= max``; a categorical entry without a non-empty ``categories`` list, or listing a level twice;
    ``integer`` / ``missing`` that are not booleans.
    """
    if not isinstance(domain, Mapping):
        raise MipkitValueError(
            f"{source} must be a JSON object of column -> entry. Got {type(domain).__name__} instead."
        )
    if not domain:
        raise MipkitValueError(f"{source} has no columns.")
    return {str(col): _entry(str(col), spec) for col, spec in domain.items()}


def load_domain(value: str | os.PathLike | Mapping | None) -> tuple[dict[str, dict] | None, str | None]:
    """``(domain, path)`` from a path (read with :func:`read_domain`), a mapping, or None (no domain)."""
    if value is None:
        return None, None
    if isinstance(value, Mapping):
        return validate_domain(value), None
    return read_domain(value), str(value)


def domain_provenance(domain: Mapping | None, path: str | None, columns: int | None = None) -> dict:
    """Where the encoding of a release came from, for its certificate and results."""
    if domain is None:
        return {"source": "none needed: every feature is numeric"}
    return {
        "source": "public file" if path is not None else "public mapping",
        "path": path,
        "columns": len(domain) if columns is None else int(columns),
    }


def check_domain(
    domain: Mapping, columns: Sequence[str], *, known: Sequence[str] | None = None
) -> dict[str, dict]:
    """The validated entries of ``columns``, in their order.

    Every column needs an entry; an entry naming no column of ``known`` (default: ``columns``; pass all the
    table's columns so that a target or a dropped column may keep its entry) is refused as a misspelling.
    """
    dom = validate_domain(domain)
    names = [str(c) for c in columns]
    ids = [c for c in names if dom.get(c) == IDENTIFIER]
    if ids:
        raise MipkitValueError(
            f"The domain marks {ids[0]!r} as an identifier (it names records, it is never a feature): "
            "leave it "
            f"out with --id-column {ids[0]} (or --drop {ids[0]})."
        )
    lacking = [c for c in names if c not in dom]
    if lacking:
        shown = ", ".join(map(repr, lacking[:8])) + (" ..." if len(lacking) > 8 else "")
        raise MipkitValueError(
            f"The domain has no entry for the column(s) {shown}; add them ({_TEMPLATE_HINT})."
        )
    table = set(names if known is None else map(str, known))
    stray = [c for c in dom if c not in table and dom[c] != IDENTIFIER]
    if stray:
        shown = ", ".join(map(repr, stray[:8])) + (" ..." if len(stray) > 8 else "")
        raise MipkitValueError(
            f"The domain names column(s) {shown} that the table lacks; check their spelling."
        )
    return {c: dom[c] for c in names}


# -- encoding ------------------------------------------------------------------------------------------------
def _refuse(col: str, count: int, what: str, fix: str) -> None:
    if count:
        raise MipkitValueError(f"Column {col!r} has {count} cell(s) {what}; {fix}.")


def _numeric(col: str, s: pd.Series, spec: dict) -> list[tuple[str, np.ndarray]]:
    missing = s.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(s):
        values = s.astype(float).to_numpy()
    else:
        values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    _refuse(col, int(np.sum(np.isnan(values) & ~missing)), "that are not numbers, but its domain is numeric",
            "correct them or leave them empty")  # fmt: skip
    ok = ~missing
    lo, hi = spec["min"], spec["max"]
    _refuse(col, int(np.sum(ok & ((values < lo) | (values > hi)))), f"outside its domain [{lo:g}, {hi:g}]",
            "widen the public range or drop those rows")  # fmt: skip
    if spec["integer"]:
        _refuse(col, int(np.sum(ok & (np.floor(values) != values))), "that are not whole numbers",
                "its domain says integer")  # fmt: skip
    if not spec["missing"]:
        _refuse(col, int(missing.sum()), "missing", 'say "missing": true in its domain, or drop those rows')
        return [(col, values)]
    return [(col, np.where(missing, lo, values)), (f"{col}_nan", missing.astype(float))]


def _categorical(col: str, s: pd.Series, spec: dict) -> list[tuple[str, np.ndarray]]:
    cats = spec["categories"]
    index = {c: i for i, c in enumerate(cats)}
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    keys = []
    for u in uniques:
        try:
            keys.append(index.get(_category(col, u.item() if isinstance(u, np.generic) else u), -1))
        except MipkitValueError:
            keys.append(-1)
    level = np.asarray(keys, dtype=int)[np.maximum(codes, 0)] if len(keys) else np.full(codes.size, -1)
    missing = codes < 0
    _refuse(col, int(np.sum(~missing & (level < 0))), f"outside its domain ({len(cats)} categories)",
            "add the level to the domain if it is public, or drop those rows")  # fmt: skip
    if not spec["missing"]:
        _refuse(col, int(missing.sum()), "missing", 'say "missing": true in its domain, or drop those rows')
    out = [(f"{col}_{c}", (~missing & (level == i)).astype(float)) for i, c in enumerate(cats)]
    if spec["missing"]:
        out.append((f"{col}_nan", missing.astype(float)))
    return out


def encode_features(features: pd.DataFrame, domain: Mapping) -> tuple[np.ndarray, list[str]]:
    """Feature columns -> ``(X, names)`` from the domain alone.

    Numeric columns pass through (a missing cell, where the domain allows it, becomes the domain's ``min``
    and a ``<col>_nan`` indicator); a categorical column becomes one indicator per domain level, in the
    domain's order, plus ``<col>_nan`` where the domain allows missing values. The width of ``X`` depends on
    the domain only. A cell outside the domain (a level not listed, a number outside ``[min, max]`` or not
    whole for an integer column, a missing cell the domain does not allow) is refused with one line naming
    the column and the number of cells, never their values.
    """
    dom = check_domain(domain, [str(c) for c in features.columns])
    blocks: list[tuple[str, np.ndarray]] = []
    for col, name in zip(features.columns, dom, strict=True):
        spec = dom[name]
        column = features[col]
        if spec["type"] == "numeric":
            blocks.extend(_numeric(name, column, spec))
        else:
            blocks.extend(_categorical(name, column, spec))
    names = [n for n, _ in blocks]
    seen: set[str] = set()
    clash = next((n for n in names if n in seen or seen.add(n)), None)
    if clash is not None:
        raise MipkitValueError(
            f"Two encoded features are both named {clash!r} (a column and a level of another); rename one."
        )
    X = np.column_stack([v for _, v in blocks]) if blocks else np.zeros((len(features), 0))
    return X.astype(float, copy=False), names


# -- templates -----------------------------------------------------------------------------------------------
def domain_template(
    df: pd.DataFrame, *, drop: Sequence[str] = (), identifiers: Sequence[str] = ()
) -> dict[str, dict]:
    """A domain template from the table's schema only: column names and whether each is numeric.

    Numeric columns get ``"min": null, "max": null``, categorical ones ``"categories": []``; ``integer`` and
    ``missing`` are false; the ``identifiers`` (columns that name records) get ``{"type": "identifier"}``.
    No value of the data enters the template: the user fills in ranges and levels
    from public knowledge (the template itself does not pass :func:`validate_domain` until then).
    """
    out: dict[str, dict] = {}
    for col in df.columns:
        if col in drop:
            continue
        s = df[col]
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        if str(col) in identifiers:
            out[str(col)] = dict(IDENTIFIER)
        elif numeric:
            out[str(col)] = {"type": "numeric", "min": None, "max": None, "integer": False, "missing": False}
        else:
            out[str(col)] = {"type": "categorical", "categories": [], "missing": False}
    return out
