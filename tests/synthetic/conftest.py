"""Fixtures shared by the exact neighbour-search tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mipkit.data.neighbors.screening as screening


@pytest.fixture(params=["one_chunk", "many_chunks"])
def chunking(request, monkeypatch):
    """Small blocks, chunks and tiles, so that tile selection, column thresholds, merges and remainders run.

    A test module may set ``SCREEN_ROWS`` to choose the query-block height of the small configuration.
    """
    if request.param == "many_chunks":
        monkeypatch.setattr(screening, "_SCREEN_COLS", 96)
        monkeypatch.setattr(screening, "_TILE", 8)
        monkeypatch.setattr(screening, "_SCREEN_ROWS", getattr(request.module, "SCREEN_ROWS", 7))
    return request.param


def discrete_mixed_table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Two numeric and two categorical columns with few levels and 10% missing: many exact ties."""
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 26, n).astype(float),
            "hours": rng.choice([20.0, 40.0, 60.0], n),
            "c1": rng.choice(["a", "b", "c"], n),
            "c2": rng.choice(["p", "q"], n),
        }
    )
    df.loc[rng.random(n) < 0.1, "hours"] = np.nan
    df.loc[rng.random(n) < 0.1, "c1"] = None
    return df


@pytest.fixture
def make_discrete_mixed_table():
    """The generator :func:`discrete_mixed_table`, for tests that need tied mixed-type tables."""
    return discrete_mixed_table


def small_mixed_table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Integer age, one-decimal income and two categorical columns: the CLI tests' tables."""
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 10, n).round(1),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.fixture
def make_small_mixed_table():
    """The generator :func:`small_mixed_table`."""
    return small_mixed_table
