"""Tables to ``[0, 1]^d`` and back, from a public domain (the privacy accounting covers the training only).

Pedersen's DP-WGAN-GP trains on records in ``[0, 1]^d`` (thesis ch. 3.3). The synthetic data vault's
categorical encoding that the thesis used maps each category to an interval of ``[0, 1]`` whose width is the
category's *frequency*, and the min-max scaling of numeric columns reads their extremes: both are statistics
of the private table that the DP accounting of the training does not cover. :class:`TabularEncoder` reads
nothing from the records but the *domain*: per numeric column a public range ``[min, max]`` (values are
clipped to it), per categorical column the list of its categories (one-hot; decoding draws a category from a
generator's softmax block, or takes the largest coordinate). A missing value is a category of its own (``NaN``
in and out); a numeric column with missing values gets an indicator coordinate. When no domain is given it is
read from the table, which :attr:`TabularEncoder.domain_source` records as ``"data"`` (the guarantee then
assumes the domain is public, as AIM, MST and most DP synthesizers do);
:func:`mipkit.workflows.synthesize.run.synthesize` never does that: it takes a public domain
(:func:`check_domain`) or estimates one with differential privacy (:mod:`mipkit.synthesizers.dpdomain`), and
maps the records into it (:func:`conform`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.data.domain import validate_domain

__all__ = ["TabularEncoder", "check_domain", "conform", "infer_domain"]

MISSING = "__missing__"


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def infer_domain(data: pd.DataFrame, *, max_categories: int = 200) -> dict[str, dict]:
    """The domain of a table read from its values (NOT private: see the module docstring).

    Numeric columns: ``{"type": "numeric", "min", "max", "integer", "missing"}``; other columns:
    ``{"type": "categorical", "categories": [...], "missing"}``. An empty table, an empty or all-missing
    column, or a non-numeric column with more than ``max_categories`` distinct values is refused.
    """
    if not isinstance(data, pd.DataFrame):
        raise MipkitValueError(f"The data must be a pandas DataFrame. Got {type(data).__name__} instead.")
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise MipkitValueError(f"The table is empty ({data.shape[0]} rows, {data.shape[1]} columns).")
    dom: dict[str, dict] = {}
    for col in data.columns:
        s = data[col]
        if s.isna().all():
            raise MipkitValueError(
                f"The column {col!r} is empty or all missing; drop it before synthesizing."
            )
        missing = bool(s.isna().any())
        if _is_numeric(s):
            v = s.dropna().to_numpy(dtype=float)
            integer = bool(np.all(np.floor(v) == v))
            dom[str(col)] = {
                "type": "numeric",
                "min": float(v.min()),
                "max": float(v.max()),
                "integer": integer,
                "missing": missing,
            }
        else:
            cats = sorted({str(x) for x in s.dropna()})
            if len(cats) > max_categories:
                raise MipkitValueError(
                    f"The column {col!r} has {len(cats)} distinct values, more than {max_categories}: "
                    "treat it as numeric or drop it."
                )
            dom[str(col)] = {"type": "categorical", "categories": cats, "missing": missing}
    return dom


@dataclass
class TabularEncoder:
    """One-hot categorical and min-max numeric encoding onto ``[0, 1]^d`` from a public domain.

    Parameters
    ----------
    domain : dict, optional
        ``{column: {"type": "numeric", "min": a, "max": b[, "integer": bool, "missing": bool]}`` or
        ``{column: {"type": "categorical", "categories": [...][, "missing": bool]}}``; default: read from the
        table given to :meth:`fit` (:func:`infer_domain`).

    Attributes
    ----------
    columns : list of str
        The table's columns, in order.
    slices : dict
        Column -> slice of its coordinates.
    dim : int
        ``d``.
    domain_source : str
        ``"given"`` or ``"data"``.
    """

    domain: dict | None = None
    columns: list[str] = field(default_factory=list, init=False)
    slices: dict[str, slice] = field(default_factory=dict, init=False)
    dim: int = field(default=0, init=False)
    domain_source: str = field(default="given", init=False)
    dtypes: dict[str, Any] = field(default_factory=dict, init=False)

    def fit(self, data: pd.DataFrame) -> TabularEncoder:
        """Fix the columns and the coordinates; read the domain from ``data`` only when none was given."""
        if self.domain is None:
            self.domain = infer_domain(data)
            self.domain_source = "data"
        else:
            self.domain = check_domain(self.domain, data)
            self.domain_source = "given"
        self.columns = [str(c) for c in data.columns]
        self.dtypes = {str(c): data[c].dtype for c in data.columns}
        start = 0
        for col in self.columns:
            spec = self.domain[col]
            base = 1 if spec["type"] == "numeric" else len(spec["categories"])
            width = base + int(spec.get("missing", False))
            self.slices[col] = slice(start, start + width)
            start += width
        self.dim = start
        return self

    def transform(self, data: pd.DataFrame) -> np.ndarray:
        """Records -> float32 array in ``[0, 1]^d`` (numeric values clipped to the domain's range)."""
        n = len(data)
        out = np.zeros((n, self.dim), dtype=np.float32)
        for col in self.columns:
            spec, sl = self.domain[col], self.slices[col]  # type: ignore[index]
            s = data[col]
            if spec["type"] == "numeric":
                lo, hi = float(spec["min"]), float(spec["max"])
                v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
                miss = np.isnan(v)
                scaled = np.clip((v - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.full(n, 0.5)
                out[:, sl.start] = np.where(miss, 0.0, scaled)
                if spec.get("missing", False):
                    out[:, sl.start + 1] = miss
            else:
                cats = list(spec["categories"]) + ([MISSING] if spec.get("missing", False) else [])
                index = {c: i for i, c in enumerate(cats)}
                keys = s.astype(object).where(s.notna(), MISSING).map(lambda x: x if x == MISSING else str(x))
                codes = keys.map(index)
                if MISSING in index:  # a category outside the domain is read as missing
                    codes = codes.fillna(index[MISSING])
                ok = codes.notna().to_numpy()
                rows = np.flatnonzero(ok)
                out[rows, sl.start + codes[ok].to_numpy(dtype=int)] = 1.0
        return out

    def inverse_transform(self, x: np.ndarray, *, rng: np.random.Generator | None = None) -> pd.DataFrame:
        """Array in ``[0, 1]^d`` -> table: numeric values rescaled, rounded for integer columns, missing
        where the indicator exceeds 1/2; per categorical block a category drawn with ``rng`` from the block
        read as probabilities (a generator's softmax), or its largest coordinate without ``rng``."""
        x = np.asarray(x, dtype=float)
        cols: dict[str, Any] = {}
        for col in self.columns:
            spec, sl = self.domain[col], self.slices[col]  # type: ignore[index]
            if spec["type"] == "numeric":
                lo, hi = float(spec["min"]), float(spec["max"])
                v = lo + np.clip(x[:, sl.start], 0.0, 1.0) * (hi - lo)
                if spec.get("integer", False):
                    v = np.rint(v)
                if spec.get("missing", False):
                    v = np.where(x[:, sl.start + 1] > 0.5, np.nan, v)
                series = pd.Series(v)
                dtype = self.dtypes.get(col)
                integral = spec.get("integer", False) and not np.isnan(v).any()
                if integral and dtype is not None and pd.api.types.is_integer_dtype(dtype):
                    series = series.astype(dtype)
                cols[col] = series
            else:
                cats = list(spec["categories"]) + ([MISSING] if spec.get("missing", False) else [])
                pick = np.asarray(cats, dtype=object)[_choose(x[:, sl], rng)]
                pick = np.where(pick == MISSING, None, pick)
                series = pd.Series(pick, dtype=object)
                cols[col] = _restore_dtype(series, self.dtypes.get(col))
        return pd.DataFrame(cols)

    def simplices(self) -> list[slice]:
        """The coordinates of each categorical column: a one-hot block, on the probability simplex."""
        return [self.slices[c] for c in self.columns if self.domain[c]["type"] == "categorical"]  # type: ignore[index]

    def categories(self) -> dict[str, list[str]]:
        """Categorical columns -> their categories (the domain's)."""
        return {
            c: list(self.domain[c]["categories"])  # type: ignore[index]
            for c in self.columns
            if self.domain[c]["type"] == "categorical"  # type: ignore[index]
        }


def _choose(block: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """Per row, the index of a category: drawn from the row's weights (clipped at 0, normalised; uniform
    where they are all 0) with ``rng``, or the largest weight without it."""
    if rng is None:
        return np.argmax(block, axis=1)
    w = np.clip(block, 0.0, None)
    total = w.sum(axis=1, keepdims=True)
    p = np.where(total > 0.0, w / np.where(total > 0.0, total, 1.0), 1.0 / block.shape[1])
    cum = np.cumsum(p, axis=1)
    u = rng.random((block.shape[0], 1)) * cum[:, -1:]
    return np.minimum((cum <= u).sum(axis=1), block.shape[1] - 1)


def _restore_dtype(series: pd.Series, dtype: Any) -> pd.Series:
    if dtype is None or pd.api.types.is_object_dtype(dtype):
        return series
    if pd.api.types.is_string_dtype(dtype):
        return series.astype(dtype)
    if pd.api.types.is_bool_dtype(dtype):
        return series.map({"True": True, "False": False})
    try:
        return series.astype(dtype)
    except (TypeError, ValueError):
        return series


def check_domain(domain: Mapping, data: pd.DataFrame) -> dict[str, dict]:
    """A public domain checked against the table's columns (one-line errors); the specs normalised.

    Nothing is read from the records but what a refusal needs: a column with missing values whose spec does
    not declare ``"missing": true``, or with values outside its ``"categories"`` (read as missing where the
    spec declares ``"missing": true``), is refused; numeric values outside ``[min, max]`` are clipped.
    """
    dom = validate_domain(domain)
    if data.shape[0] == 0:
        raise MipkitValueError("The table is empty (0 rows).")
    out: dict[str, dict] = {}
    missing_cols = [str(c) for c in data.columns if str(c) not in dom]
    if missing_cols:
        raise MipkitValueError(f"The domain has no entry for the columns {missing_cols}.")
    for col in data.columns:
        name = str(col)
        spec = dict(dom[name])
        kind = spec["type"]
        if data[col].isna().all():
            raise MipkitValueError(
                f"The column {name!r} is empty or all missing; drop it before synthesizing."
            )
        if kind == "numeric" and not pd.api.types.is_numeric_dtype(data[col]):
            raise MipkitValueError(
                f"The domain declares {name!r} numeric but the column holds text; declare it categorical."
            )
        n_missing = int(data[col].isna().sum())
        if n_missing and not spec["missing"]:
            raise MipkitValueError(
                f"The column {name!r} has {n_missing} missing values but its domain does not declare "
                '"missing": true; declare it, or fill or drop those records.'
            )
        if kind == "categorical" and not spec["missing"]:
            outside = int((~data[col].dropna().map(str).isin(spec["categories"])).sum())
            if outside:
                raise MipkitValueError(
                    f"The column {name!r} has {outside} values not among its domain's categories; list them, "
                    'or declare "missing": true to read them as missing.'
                )
        out[name] = spec
    return out


def conform(data: pd.DataFrame, domain: Mapping, fill: Mapping | None = None) -> pd.DataFrame:
    """The records mapped into ``domain``: a category outside it and a missing value where the domain has no
    missing to ``fill[column]`` (categorical: to missing where the domain has it); numeric values clipped
    to ``[min, max]``. A record-by-record map: neighbouring tables stay neighbours."""
    fill = dict(fill or {})
    out = data.copy()
    for col in data.columns:
        name = str(col)
        spec, s = domain[name], data[col]
        if spec["type"] == "numeric":
            v = pd.to_numeric(s, errors="coerce").astype(float)
            v = v.clip(float(spec["min"]), float(spec["max"]))
            if not spec.get("missing", False) and v.isna().any():
                v = v.fillna(float(fill.get(name, (float(spec["min"]) + float(spec["max"])) / 2.0)))
            out[col] = v
        else:
            cats = set(spec["categories"])
            keys = s.astype(object).where(s.notna(), None).map(lambda x: None if x is None else str(x))
            inside = keys.isin(cats)
            other = None if spec.get("missing", False) else fill.get(name, spec["categories"][0])
            out[col] = keys.where(inside, other).astype(object)
    return out
