"""The column domain estimated with differential privacy, a share of the budget (docs/synthesize.md).

A synthesizer needs each column's domain: the categories of a categorical column, the range of a numeric
one. Read from the private table they copy what single records hold (a category held by one person, the
largest income); :func:`estimate_domain` releases them with differential privacy instead, for add/remove
neighbours:

* **categories**: the stability-based histogram (Korolova et al. 2009; Bun, Nissim & Stemmer 2016): the count
  of every level present, plus Laplace noise of scale ``1 / eps``, and only the levels whose noisy count
  exceeds ``tau = 1 + log(1 / (2 delta)) / eps``. A level held by one record is kept with probability at most
  ``delta``; the histogram is ``(eps, delta)``-DP. Missing values count as a level of their own.
* **numeric ranges**: a Laplace histogram (scale ``1 / eps``: a record falls in one cell, so ``eps``-DP)
  over a public, data-independent partition of the real line (:func:`numeric_edges`: cells between signed
  powers of 2 and their midpoints, plus a cell for missing values); cells whose noisy count is below
  ``log(50 m) / eps`` (``m`` cells: an empty cell passes with probability ``1 / (100 m)``) count as empty,
  and the range runs from the cell holding the noisy 1st percentile to the cell holding the 99th (their
  edges: grid points, never a record's value). Integer-ness comes from the column's dtype (schema, not data).

The budget ``(epsilon, delta)`` is split evenly over the columns (``delta`` over the categorical ones only: a
numeric histogram needs none), so the estimate is ``(epsilon, delta)``-DP by basic composition. Records
outside the estimated domain are mapped into it (:func:`mipkit.synthesizers.preprocess.conform`): a rare level
to missing (or, when missing is not in the domain, to the level with the largest noisy count), a value out of
range clipped to it, a missing numeric value (missing not in the domain) to the range's midpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError

__all__ = ["DEFAULT_SHARE", "DomainEstimate", "estimate_domain", "numeric_edges", "stable_levels"]

#: Share of ``epsilon`` (and of ``delta``) spent on the domain when none is given.
DEFAULT_SHARE = 0.1
#: The quantiles of a numeric column that its estimated range spans.
QUANTILES = (0.01, 0.99)
_MISSING = object()  # the missing-value level of a histogram (no string can equal it)


def numeric_edges(low: int = -20, high: int = 62) -> np.ndarray:
    """Public cell edges of a numeric column: ``0``, ``+-2^k``, ``+-1.5 * 2^k`` for ``low <= k <= high``."""
    pos = np.sort(np.concatenate([2.0 ** np.arange(low, high + 1), 1.5 * 2.0 ** np.arange(low, high + 1)]))
    return np.concatenate([-pos[::-1], [0.0], pos])


def stable_levels(
    values: pd.Series, *, epsilon: float, delta: float, rng: np.random.Generator
) -> tuple[list[str], bool, dict[str, float]]:
    """The levels of a categorical column released by the stability-based histogram (module docstring).

    Returns
    -------
    levels : list of str
        The kept levels, sorted (missing values are not one of them).
    missing : bool
        Whether the missing-value level was kept.
    noisy : dict
        Kept level -> its noisy count (post-processing of the release).
    """
    keys = values.astype(object).where(values.notna(), None).map(lambda x: None if x is None else str(x))
    counts = keys.value_counts(dropna=False)
    noisy = counts.to_numpy(dtype=float) + rng.laplace(0.0, 1.0 / epsilon, counts.size)
    tau = 1.0 + math.log(1.0 / (2.0 * delta)) / epsilon
    kept = {k: float(v) for k, v in zip(counts.index, noisy, strict=True) if v > tau}
    missing = any(k is None or (isinstance(k, float) and math.isnan(k)) for k in kept)
    levels = {str(k): v for k, v in kept.items() if isinstance(k, str)}
    return sorted(levels), missing, levels


def numeric_range(
    values: pd.Series, *, epsilon: float, integer: bool, rng: np.random.Generator
) -> tuple[float, float, bool] | None:
    """``(min, max, missing)`` of a numeric column from its noisy histogram (module docstring), or None when
    no cell of values passes the threshold."""
    edges = numeric_edges()
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    miss = np.isnan(v)
    cells = np.clip(np.searchsorted(edges, v[~miss], side="right") - 1, 0, edges.size - 2)
    counts = np.append(np.bincount(cells, minlength=edges.size - 1), miss.sum()).astype(float)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, counts.size)
    noisy = np.where(noisy > math.log(50.0 * counts.size) / epsilon, noisy, 0.0)
    missing, hist = bool(noisy[-1] > 0.0), noisy[:-1]
    if not hist.any():
        return None
    cum = np.cumsum(hist) / hist.sum()
    first = int(np.searchsorted(cum, QUANTILES[0], side="right"))
    last = int(np.searchsorted(cum, QUANTILES[1], side="left"))
    lo, hi = float(edges[first]), float(edges[min(last, edges.size - 2) + 1])
    if integer:  # the integers in [lo, hi): the cells are half-open
        lo, hi = float(math.ceil(lo)), float(math.ceil(hi) - 1.0)
        hi = max(hi, lo)
    return lo, hi, missing


@dataclass(frozen=True)
class DomainEstimate:
    """A domain released with differential privacy, and what it cost.

    Attributes
    ----------
    domain : dict
        Column -> spec (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`'s format).
    fill : dict
        Column -> the value that records outside the domain take where missing is not in it (a categorical
        column's most frequent noisy level, a numeric column's midpoint).
    epsilon, delta : float
        The estimate's guarantee, ``(epsilon, delta)``-DP for add/remove neighbours (``delta`` 0 when every
        column is numeric).
    share : float
        The share of the run's budget it took.
    """

    domain: dict[str, dict]
    fill: dict[str, Any] = field(default_factory=dict)
    epsilon: float = 0.0
    delta: float = 0.0
    share: float = DEFAULT_SHARE

    def record(self) -> Any:
        """The mechanism record of the estimate: ``ApproxDP``, or ``PureDP`` when ``delta`` is 0."""
        from mipkit.accounting import ApproxDP, PureDP

        if self.delta > 0.0:
            return ApproxDP(epsilon=self.epsilon, delta=self.delta)
        return PureDP(epsilon=self.epsilon)

    def summary(self) -> dict:
        """``{"source": "dp-estimated", "epsilon", "delta", "share"}``."""
        return {"source": "dp-estimated", "epsilon": self.epsilon, "delta": self.delta, "share": self.share}


def estimate_domain(
    data: pd.DataFrame,
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    share: float = DEFAULT_SHARE,
) -> DomainEstimate:
    """The domain of ``data`` released with ``(epsilon, delta)``-DP (module docstring).

    Parameters
    ----------
    data : DataFrame
        The private table (checked: not empty, no all-missing column).
    epsilon, delta : float
        The estimate's budget, split evenly over the columns (``delta`` over the categorical ones).
    rng : Generator
        The noise.
    share : float
        Recorded in the estimate (the share of the run's budget ``epsilon`` is).

    Raises
    ------
    MipkitValueError
        A column none of whose values is held by enough records to be released (one line naming it).
    """
    from mipkit.synthesizers.preprocess import _is_numeric

    cols = [str(c) for c in data.columns]
    numeric = {c: _is_numeric(data[c]) for c in cols}
    n_cat = sum(not v for v in numeric.values())
    eps_c = epsilon / len(cols)
    delta_c = delta / n_cat if n_cat else 0.0
    domain: dict[str, dict] = {}
    fill: dict[str, Any] = {}
    for c in cols:
        s = data[c]
        if numeric[c]:
            integer = pd.api.types.is_integer_dtype(s.dtype)
            found = numeric_range(s, epsilon=eps_c, integer=integer, rng=rng)
            if found is None:
                _refuse(c, eps_c, math.log(50.0 * numeric_edges().size) / eps_c, "value range")
            lo, hi, missing = found  # type: ignore[misc]
            domain[c] = {"type": "numeric", "min": lo, "max": hi, "integer": integer, "missing": missing}
            mid = (lo + hi) / 2.0
            fill[c] = float(math.floor(mid)) if integer else mid
        else:
            levels, missing, noisy = stable_levels(s, epsilon=eps_c, delta=delta_c, rng=rng)
            if not levels:
                _refuse(c, eps_c, 1.0 + math.log(1.0 / (2.0 * delta_c)) / eps_c, "category")
            domain[c] = {"type": "categorical", "categories": levels, "missing": missing}
            fill[c] = max(levels, key=lambda k: noisy[k])
    return DomainEstimate(domain=domain, fill=fill, epsilon=float(epsilon), delta=float(delta), share=share)


def _refuse(column: str, eps: float, records: float, what: str) -> None:
    raise MipkitValueError(
        f"No {what} of the column {column!r} is held by enough records to be estimated privately (about "
        f"{records:.0f} needed at epsilon {eps:.3g} per column): give the public domain with --domain FILE, "
        f"raise --domain-share, or --drop {column}."
    )
