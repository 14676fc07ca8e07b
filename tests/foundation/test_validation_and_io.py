"""Validation messages, the RNG helper, table reading with clear errors, results.json and the HTML report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit import MipkitValueError
from mipkit._random import check_random_state, spawn_seeds
from mipkit._validation import (
    check_delta,
    check_epsilon,
    check_eta,
    check_positive_int,
    check_sample_rate,
)
from mipkit.cli import main
from mipkit.data import features_target, read_table
from mipkit.report import Section, read_results, write_html_report, write_results


@pytest.mark.parametrize("bad", [0, 0.5, 0.7, -0.1, float("nan"), "x", None, True])
def test_eta_outside_open_interval(bad):
    with pytest.raises(MipkitValueError, match="'eta' parameter"):
        check_eta(bad, owner="MIPNoise")


def test_message_form():
    with pytest.raises(MipkitValueError) as info:
        check_eta(0.7, owner="MIPNoise")
    assert str(info.value) == "The 'eta' parameter of MIPNoise must be in (0, 0.5). Got 0.7 instead."


def test_other_checks():
    assert check_epsilon(0) == 0.0
    assert check_delta(0) == 0.0
    assert check_sample_rate(1) == 1.0
    for fn, bad in [
        (check_epsilon, -1),
        (check_delta, 1.0),
        (check_sample_rate, 0),
        (check_sample_rate, 1.1),
    ]:
        with pytest.raises(MipkitValueError):
            fn(bad)
    assert check_positive_int("steps", 3.0) == 3
    with pytest.raises(MipkitValueError):
        check_positive_int("steps", 0)
    with pytest.raises(MipkitValueError):
        check_positive_int("steps", 2.5)


def test_random_state_reproducible():
    a = check_random_state(7).normal(size=5)
    b = check_random_state(7).normal(size=5)
    assert np.array_equal(a, b)
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    assert spawn_seeds(3, 4) == spawn_seeds(3, 4)
    with pytest.raises(MipkitValueError):
        check_random_state("seed")


def test_read_table_errors(tmp_path):
    with pytest.raises(MipkitValueError, match="No such file"):
        read_table(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(MipkitValueError, match="empty"):
        read_table(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n")
    with pytest.raises(MipkitValueError, match="no rows"):
        read_table(header_only)


def test_features_target(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("age, city, label\n30, A, yes\n40, B, no\n50, ?, yes\n")
    df = read_table(path)
    assert list(df.columns) == ["age", "city", "label"]
    with pytest.raises(MipkitValueError, match="Non-numeric feature"):
        features_target(df, "label")
    with pytest.raises(MipkitValueError, match="'income' not found"):
        features_target(df, "income")
    ds = features_target(df, "label", encode="onehot")
    assert ds.X.shape[0] == 3 and list(ds.classes) == ["no", "yes"]
    assert list(ds.y) == [1, 0, 1]
    nan_df = pd.DataFrame({"x": [1.0, np.nan], "y": [0, 1]})
    with pytest.raises(MipkitValueError, match="Missing values"):
        features_target(nan_df, "y")
    assert features_target(nan_df, "y", dropna=True).X.shape == (1, 1)


def test_results_roundtrip_and_report(tmp_path):
    write_results(
        tmp_path, {"eta": np.float64(0.1), "ci": np.array([0.0, 0.2]), "nan": float("nan")}, kind="x"
    )
    data = read_results(tmp_path)
    assert data["schema_version"].startswith("1.")
    assert data["eta"] == 0.1 and data["ci"] == [0.0, 0.2] and data["nan"] is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text(json.dumps({"a": 1}))
    with pytest.raises(MipkitValueError):
        read_results(tmp_path / "bad")
    path = write_html_report(
        tmp_path, title="T", summary=["<b>escaped</b>"], sections=[Section("S", text=["p"])]
    )
    html = path.read_text()
    assert "&lt;b&gt;escaped&lt;/b&gt;" in html and "<h2>S</h2>" in html


def test_cli_version_and_usage(capsys):
    assert main(["--version"]) == 0
    assert "mipkit" in capsys.readouterr().out
    assert main(["--no-such-option"]) == 2
