"""A utility report of a synthetic table, in SDMetrics' terms, over NumPy and pandas.

SDMetrics itself is not a dependency: it requires plotly and copulas (docs/synthesize.md). The measures, all
distances (0: the synthetic table reproduces the real one; larger: further from it):

* column shapes: per column, the Kolmogorov-Smirnov statistic of a numeric column, the total-variation
  distance of a categorical one (:mod:`mipkit.synthesizers.quality`'s TVD);
* pair trends: per pair of columns, half the absolute difference of the Pearson correlations of two numeric
  columns, otherwise the total-variation distance of their contingency tables (numeric columns in equal
  bins of the real range);
* train on synthetic, test on real (where a two-class target is named): the AUC on real records of a model
  trained on the synthetic table, beside the same model trained on real records.

The report reads the real records: its figures are not covered by the synthesizer's privacy certificate.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError
from mipkit.synthesizers.quality import MISSING, _discretise, _numeric, _tvd, utility_auc

__all__ = ["column_shapes", "pair_trends", "quality_report", "train_synthetic_test_real"]

NOT_CERTIFIED = (
    "computed from the real records and not covered by the privacy certificate; share them "
    "only where the real data may be described"
)


def _ks(a: pd.Series, b: pd.Series) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical CDFs
    (scipy's ``ks_2samp(x, y).statistic``, without importing scipy.stats)."""
    x = np.sort(pd.to_numeric(a, errors="coerce").dropna().to_numpy(dtype=float))
    y = np.sort(pd.to_numeric(b, errors="coerce").dropna().to_numpy(dtype=float))
    if x.size == 0 or y.size == 0:
        return float(x.size != y.size)
    points = np.concatenate([x, y])
    gap = (
        np.searchsorted(x, points, side="right") / x.size - np.searchsorted(y, points, side="right") / y.size
    )
    return float(np.max(np.abs(gap)))


def _as_labels(s: pd.Series) -> pd.Series:
    return s.astype(object).where(s.notna(), MISSING).astype(str)


def column_shapes(real: pd.DataFrame, synth: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """``{column: {"measure": "KS" or "TVD", "distance": d}}``: 0 where the column's distribution is the
    real one's, up to 1."""
    out = {}
    for c in real.columns:
        if _numeric(real[c]):
            out[str(c)] = {"measure": "KS", "distance": _ks(real[c], synth[c])}
        else:
            out[str(c)] = {"measure": "TVD", "distance": _tvd(_as_labels(real[c]), _as_labels(synth[c]))}
    return out


def _correlation(df: pd.DataFrame, a: str, b: str) -> float:
    x, y = df[a].to_numpy(dtype=float), df[b].to_numpy(dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 2 or np.std(x[ok]) == 0 or np.std(y[ok]) == 0:
        return 0.0
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def pair_trends(real: pd.DataFrame, synth: pd.DataFrame, *, bins: int = 20) -> dict[str, dict[str, Any]]:
    """``{"a / b": {"measure": "correlation" or "contingency", "distance": d}}`` for every pair of columns:
    half the difference of the Pearson correlations of two numeric columns, else the TVD of the pair's
    contingency table; 0 where the pair's relation is the real one's, up to 1."""
    dr, ds = _discretise(real, synth, bins)
    out = {}
    for a, b in itertools.combinations(real.columns, 2):
        if _numeric(real[a]) and _numeric(real[b]):
            d = abs(_correlation(real, a, b) - _correlation(synth, a, b)) / 2
            out[f"{a} / {b}"] = {"measure": "correlation", "distance": float(d)}
        else:
            d = _tvd(dr[a] + "|" + dr[b], ds[a] + "|" + ds[b])
            out[f"{a} / {b}"] = {"measure": "contingency", "distance": float(d)}
    return out


def train_synthetic_test_real(
    real_train: pd.DataFrame, synth: pd.DataFrame, real_test: pd.DataFrame, *, target: str, seed: int = 0
) -> dict[str, Any]:
    """AUC on ``real_test`` of a gradient-boosting model trained on ``synth`` (``tstr_auc``) and of the same
    model trained on ``real_train`` (``trtr_auc``), for a two-class ``target``."""
    classes = real_train[target].dropna().astype(str).value_counts()
    if len(classes) != 2:
        raise MipkitValueError(
            f"The quality target {target!r} must have two classes in the real table (it has {len(classes)})."
        )
    positive = str(classes.index[-1])  # the rarer class
    return {
        "target": target,
        "positive": positive,
        "tstr_auc": utility_auc(synth, real_test, target=target, positive=positive, seed=seed),
        "trtr_auc": utility_auc(real_train, real_test, target=target, positive=positive, seed=seed),
        "test_rows": int(len(real_test)),
    }


def quality_report(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    target: str | None = None,
    test: pd.DataFrame | None = None,
    max_rows: int | None = 20_000,
    seed: int = 0,
) -> dict[str, Any]:
    """The utility report of ``synth`` against ``real`` (module docstring), as a JSON-ready dict.

    Parameters
    ----------
    real, synth : DataFrame
        The real table and the synthetic one, with the same columns.
    target : str, optional
        A two-class column: adds train-on-synthetic / test-on-real.
    test : DataFrame, optional
        Real records the synthesizer did not see, to test on; without it, a seeded half of ``real`` (which
        the synthesizer saw) is the test set and the other half trains the real baseline.
    max_rows : int or None
        Seeded subsample of each table for the shapes and trends.
    seed : int
    """
    cols = [str(c) for c in real.columns]
    missing = [c for c in cols if c not in synth.columns]
    if missing:
        raise MipkitValueError(f"The synthetic table lacks the real table's columns {missing}.")
    if target is not None and target not in cols:
        raise MipkitValueError(f"The quality target {target!r} is not a column of the table.")
    synth = synth[cols]
    rng = np.random.default_rng(seed)

    def sample(df: pd.DataFrame) -> pd.DataFrame:
        if max_rows is None or len(df) <= max_rows:
            return df
        return df.iloc[np.sort(rng.permutation(len(df))[:max_rows])]

    r, s = sample(real), sample(synth)
    shapes, trends = column_shapes(r, s), pair_trends(r, s)
    out: dict[str, Any] = {
        "column_shapes": float(np.mean([v["distance"] for v in shapes.values()])),
        "pair_trends": float(np.mean([v["distance"] for v in trends.values()])) if trends else 0.0,
        "columns": shapes,
        "pairs": trends,
        "note": NOT_CERTIFIED,
    }
    if target is not None:
        if test is None:
            order = np.random.default_rng(seed).permutation(len(real))
            half = len(real) // 2
            train, held = real.iloc[order[:half]], real.iloc[order[half:]]
            where = "a seeded half of the real table (the synthesizer saw it: optimistic)"
        else:
            train, held, where = real, test[cols], "real records the synthesizer did not see"
        out["train_synthetic_test_real"] = {
            **train_synthetic_test_real(train, synth, held, target=target, seed=seed),
            "tested_on": where,
        }
    return out
