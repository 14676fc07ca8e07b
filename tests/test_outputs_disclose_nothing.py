"""The attack on outputs: unique marker values planted in the input tables appear in no file a command writes
(nor on its stdout), and no output column tells the inference targets' secret.

The markers: a category level held by one record (``ZZMARKERLEVEL``), a numeric extreme (``987654.25``)
and a two-valued secret column. Every file of each run folder is read whole (Parquet files decoded) and
searched.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main

LEVEL = "ZZMARKERLEVEL"
EXTREME = 987654.25
MARKERS = (LEVEL, "987654", "9.87654e+05", "9.877e+05")


def _texts(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` as text (Parquet decoded to CSV, others as bytes read as latin-1)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            if p.suffix == ".parquet":
                out[str(p)] = pd.read_parquet(p).to_csv()
            else:
                out[str(p)] = p.read_bytes().decode("latin-1")
    return out


def _assert_no_marker(texts: dict[str, str]) -> None:
    found = [(name, m) for name, text in texts.items() for m in MARKERS if m in text]
    assert not found, f"record values disclosed: {found}"


@pytest.fixture()
def tables(tmp_path):
    rng = np.random.default_rng(0)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 80, n),
                "income": rng.normal(50, 10, n).round(2),
                "city": rng.choice(["a", "b", "c"], n),
                "flag": rng.choice(["yes", "no"], n),
                "label": rng.integers(0, 2, n),
            }
        )

    orig = table(240)
    orig.loc[5, "city"] = LEVEL
    orig.loc[7, "income"] = EXTREME
    syn = pd.concat([orig.drop(index=[5, 7]).sample(120, random_state=1), table(120)], ignore_index=True)
    paths = {"orig": tmp_path / "orig.csv", "syn": tmp_path / "syn.csv", "ctl": tmp_path / "ctl.csv"}
    orig.to_csv(paths["orig"], index=False)
    syn.to_csv(paths["syn"], index=False)
    table(120).to_csv(paths["ctl"], index=False)
    return paths, orig


def test_audit_synthetic_writes_no_record_value_and_no_secret(tables, tmp_path, capsys):
    paths, orig = tables
    out = tmp_path / "run"
    argv = [
        "audit-synthetic", "--original", str(paths["orig"]), "--synthetic", str(paths["syn"]),
        "--control", str(paths["ctl"]), "--secret", "flag", "--secret", "city", "--n-attacks", "80",
        "--singling-out", "20", "--linkability", "age,city;income,flag", "--out", str(out), "--json",
    ]  # fmt: skip
    assert main(argv) == 0
    texts = _texts(out)
    texts["stdout"] = capsys.readouterr().out
    assert {Path(p).name for p in texts} >= {"results.json", "report.html", "inference.parquet"}
    _assert_no_marker(texts)
    # whether each guess was right tells a two-valued secret: no column of inference.parquet equals it
    targets = pd.read_parquet(out / "inference.parquet")
    flag = targets[targets["secret"] == "flag"]
    truth = (orig["flag"].to_numpy()[flag["row"].to_numpy()] == "yes").astype(int)
    assert 0 < truth.sum() < truth.size
    for column in flag.columns:
        values = pd.to_numeric(flag[column], errors="coerce").to_numpy()
        assert not np.array_equal(values, truth) and not np.array_equal(values, 1 - truth), column
    # the outcomes only on request
    assert main([*argv, "--include-target-outcomes"]) == 0
    capsys.readouterr()
    assert "baseline_most_frequent_correct" in pd.read_parquet(out / "inference.parquet").columns


def test_model_audits_write_no_record_value(tables, tmp_path, capsys):
    paths, _ = tables
    data = str(paths["orig"])
    domain = str(tmp_path / "domain.json")  # a public domain: ranges and levels from a code book
    Path(domain).write_text(
        json.dumps(
            {
                "age": {"type": "numeric", "min": 0, "max": 120, "integer": True},
                "income": {"type": "numeric", "min": -1e6, "max": 1e6},
                "flag": {"type": "categorical", "categories": ["yes", "no"]},
            }
        )
    )
    runs = {
        "audit": [
            "audit", "--data", data, "--target", "label", "--encode", "onehot", "--models", "4",
            "--model", "sklearn.linear_model.LogisticRegression",
            "--attacks", "loss", "--n-jobs", "1", "--n-boot", "100", "--slice-by", "city,income,age",
            "--quiet", "--json",
        ],
        "train": [
            "train-private", "--data", data, "--target", "label", "--drop", "city", "--domain", domain,
            "--noise-multiplier", "1.0", "--epochs", "1", "--batch-size", "32", "--json",
        ],
        "one-run": [
            "audit-one-run", "--data", data, "--target", "label", "--encode", "onehot", "--canaries", "20",
            "--params", '{"noise_multiplier": 1.0, "epochs": 1, "batch_size": 32}', "--json",
        ],
    }  # fmt: skip
    for name, argv in runs.items():
        out = tmp_path / name
        assert main([*argv, "--out", str(out)]) == 0, name
        texts = _texts(out)
        texts[f"{name} stdout"] = capsys.readouterr().out
        _assert_no_marker(texts)
    slices = json.loads((tmp_path / "audit" / "results.json").read_text())["slices"]["groups"]
    assert "(rarer values)" in {g["group"] for g in slices}  # the level of one record, pooled
