"""The utility report of a synthetic table: column shapes and pair trends are 0 for an identical table and
grow with a shifted one; train-on-synthetic / test-on-real matches the real baseline on a copy and falls on
scrambled labels; ``mipkit synthesize`` shows the report, ``audit-synthetic --quality-target`` adds its
page."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.cli import main
from mipkit.synthesizers.quality_report import quality_report


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    income = 20 + 0.8 * age + rng.normal(0, 5, n)
    city = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    label = np.where(income + 10 * (city == "a") + rng.normal(0, 5, n) > 60, "hi", "lo")
    return pd.DataFrame({"age": age, "income": income, "city": city, "label": label})


def _shifted(df: pd.DataFrame, k: float, seed: int = 1) -> pd.DataFrame:
    """``df`` moved by ``k``: ages shifted, income decorrelated from age, a share ``k`` of cities changed."""
    rng = np.random.default_rng(seed)
    out = df.copy()
    out["age"] = df["age"] + int(round(20 * k))
    mix = rng.permutation(df["income"].to_numpy())
    out["income"] = (1 - k) * df["income"] + k * mix
    change = rng.random(len(df)) < k
    out.loc[change, "city"] = "c"
    return out


def test_identical_table_scores_zero():
    df = _table()
    q = quality_report(df, df.copy())
    assert q["column_shapes"] == 0.0 and q["pair_trends"] == pytest.approx(0.0, abs=1e-12)
    assert {v["measure"] for v in q["columns"].values()} == {"KS", "TVD"}
    assert q["columns"]["city"]["measure"] == "TVD" and q["columns"]["age"]["measure"] == "KS"
    assert q["pairs"]["age / income"]["measure"] == "correlation"
    assert q["pairs"]["age / city"]["measure"] == "contingency"


def test_shapes_and_trends_grow_with_the_shift():
    df = _table()
    qs = [quality_report(df, _shifted(df, k)) for k in (0.1, 0.4, 0.8)]
    shapes = [q["column_shapes"] for q in qs]
    trends = [q["pair_trends"] for q in qs]
    assert 0 < shapes[0] < shapes[1] < shapes[2] <= 1
    assert 0 < trends[0] < trends[1] < trends[2] <= 1
    corr = [q["pairs"]["age / income"]["distance"] for q in qs]
    assert corr == sorted(corr) and corr[0] > 0
    assert qs[2]["columns"]["label"]["distance"] == 0.0  # an unchanged column stays at 0


def test_train_on_synthetic_falls_with_scrambled_labels():
    df, test = _table(seed=0), _table(seed=5)
    same = quality_report(df, df, target="label", test=test)["train_synthetic_test_real"]
    assert same["tstr_auc"] == pytest.approx(same["trtr_auc"]) and same["tstr_auc"] > 0.8
    scrambled = df.assign(label=np.random.default_rng(2).permutation(df["label"].to_numpy()))
    bad = quality_report(df, scrambled, target="label", test=test)["train_synthetic_test_real"]
    assert bad["tstr_auc"] < same["tstr_auc"] - 0.2
    assert bad["tested_on"] == "real records the synthesizer did not see"
    with pytest.raises(MipkitValueError, match="two classes"):
        quality_report(df, df, target="city")


def test_synthesize_shows_the_quality_block(tmp_path, capsys):
    pytest.importorskip("mbi")
    data = tmp_path / "data.csv"
    _table(300).assign(income=lambda d: d["income"].round(0)).to_csv(data, index=False)
    domain = {"age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
              "income": {"type": "numeric", "min": 0, "max": 120},
              "city": {"type": "categorical", "categories": ["a", "b", "c"]},
              "label": {"type": "categorical", "categories": ["hi", "lo"]}}  # fmt: skip
    (tmp_path / "domain.json").write_text(json.dumps(domain))
    argv = ["synthesize", "--data", str(data), "--domain", str(tmp_path / "domain.json"), "--method", "mst",
            "--epsilon", "5", "--seed", "0", "--quality-target", "label", "--out"]  # fmt: skip
    assert main([*argv, str(tmp_path / "o1"), "--json"]) == 0
    q = json.loads(capsys.readouterr().out)["quality"]
    assert 0 <= q["column_shapes"] <= 1 and 0 <= q["pair_trends"] <= 1
    assert set(q["columns"]) == {"age", "income", "city", "label"}
    assert q["train_synthetic_test_real"]["target"] == "label"
    assert "not covered by the privacy certificate" in q["note"]
    assert main([*argv, str(tmp_path / "o2")]) == 0
    out = capsys.readouterr().out
    assert "- Utility: Column shapes:" in out and "Train on synthetic, test on real" in out
    # statistics of the real records only when asked: no quality block by default
    plain = [a for a in argv if a not in ("--quality-target", "label")]
    assert main([*plain, str(tmp_path / "o3"), "--json"]) == 0
    assert "quality" not in json.loads(capsys.readouterr().out)
    assert main([*plain, str(tmp_path / "o4"), "--quality", "--json"]) == 0
    assert "column_shapes" in json.loads(capsys.readouterr().out)["quality"]


def test_audit_synthetic_quality_target_adds_a_page(tmp_path, capsys):
    real, synth, control = _table(300, 0), _shifted(_table(300, 0), 0.3), _table(200, 9)
    for name, df in (("real", real), ("synth", synth), ("control", control)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    argv = ["audit-synthetic", "--original", str(tmp_path / "real.csv"), "--synthetic",
            str(tmp_path / "synth.csv"), "--control", str(tmp_path / "control.csv"), "--checks", "dcr",
            "--quality-target", "label", "--no-report", "--n-jobs", "1",
            "--out", str(tmp_path / "run")]  # fmt: skip
    assert main([*argv, "--json"]) in (0, 1)
    q = json.loads(capsys.readouterr().out)["quality"]
    assert q["train_synthetic_test_real"]["test_rows"] == 200  # tested on the control records
    assert q == quality_report(real, synth, target="label", test=control)
    page = (tmp_path / "run" / "quality.html").read_text()
    assert "Utility of the synthetic data" in page and "Column shapes" in page
    bad = [a if a != "label" else "nope" for a in argv[:-1]] + [str(tmp_path / "r2")]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--quality-target 'nope' is not a column" in err
