"""The issue's must-show at reduced size: deterministic trainers give LTU privacy 0 (benchmarks/ltu_digits.py
runs it at full size)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "ltu_digits.py"


@pytest.fixture(scope="module")
def ltu_digits():
    spec = importlib.util.spec_from_file_location("ltu_digits_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_deterministic_models_have_zero_ltu_privacy_on_digits(ltu_digits):
    deterministic = {
        name: ltu_digits.MODELS[name]
        for name in ("logistic regression", "ridge classifier", "Gaussian naive Bayes", "SVC")
    }
    rows = ltu_digits.run(
        models=deterministic,
        scenarios=("original",),
        n_defender=80,
        n_reserve=80,
        n_rounds=6,
        n_jobs=1,
        with_loss=False,
    )
    assert len(rows) == 4
    for row in rows:
        assert row["privacy"] == 0.0, row
        assert row["exact_matches"] == 6  # the true member's retrained model IS the defender's model
        assert row["test_accuracy"] > 0.6
    table = ltu_digits.markdown_table(rows)
    assert table.count("\n") == 1 + len(rows)
