"""CLI `mipkit audit-synthetic`: bad input exits 2 with one line; a small end-to-end run."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mipkit.cli.audit_synthetic as cli_module
from mipkit.cli import main


@pytest.fixture()
def trio(tmp_path, make_small_mixed_table):
    _table = make_small_mixed_table
    rng = np.random.default_rng(0)
    orig = _table(240, rng)
    syn = pd.concat([orig.sample(120, random_state=1), _table(120, rng)], ignore_index=True)  # half copies
    ctl = _table(120, rng)
    paths = {}
    for name, df in (("orig", orig), ("syn", syn), ("ctl", ctl)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def test_end_to_end_json(trio, tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "audit-synthetic",
        "--original",
        str(trio["orig"]),
        "--synthetic",
        str(trio["syn"]),
        "--control",
        str(trio["ctl"]),
        "--secret",
        "sex",
        "--secret",
        "income",
        "--n-attacks",
        "60",
        "--seed",
        "3",
        "--out",
        str(out),
        "--json",
    ]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res["nnaa"]) >= {"train", "test", "privacy_loss"}
    # half of the synthetic rows are copies of training rows: the NNAA and DCR see it
    assert res["nnaa"]["privacy_loss"] > 0.05
    assert res["dcr"]["auc"] > 0.6
    for s in ("sex", "income"):
        r = res["inference"][s]
        assert {"precision", "coverage", "baseline_precision", "precision_improvement"} <= set(r)
        assert 0 <= r["precision"] <= 1 and r["coverage"] == 1.0
    for f in ("results.json", "scores.parquet", "report.html"):
        assert (out / f).is_file()
    saved = json.loads((out / "results.json").read_text())
    assert saved["kind"] == "audit-synthetic"
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == 240 + 120
    # the printed summary is the saved results' summary
    assert res["nnaa"]["privacy_loss"] == saved["nnaa"]["privacy_loss"]
    assert res["dcr"]["baseline_protection"] == saved["dcr"]["baseline_protection"]["score"]
    assert res["inference"]["sex"]["control_risk"] == saved["inference"]["sex"]["control"]["risk"]["value"]
    assert res["run_dir"] == str(out)
    # same seed -> same numbers
    assert main([*argv[:-3], "--out", str(tmp_path / "run2"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["nnaa"] == res["nnaa"] and again["inference"] == res["inference"]
    # without --json: a table, the plain-language summary and the report's path on stdout
    assert main([*argv[:-3], "--out", str(tmp_path / "run3")]) == 0
    text = capsys.readouterr().out
    assert "Synthetic data audit" in text and "inference sex: precision/baseline/gain" in text
    assert f"{res['nnaa']['privacy_loss']:.3f}" in text
    assert "Inferring 'income'" in text and str(tmp_path / "run3" / "report.html") in text.replace("\n", "")


def test_command_module_imports_only_typer_at_top():
    # `mipkit --help` stays fast: the audit's heavy modules are imported inside the command (the shared
    # flags of mipkit.cli.options import only Typer)
    tree = ast.parse(Path(cli_module.__file__).read_text(encoding="utf-8"))
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            top.add(node.module)
    assert top == {"__future__", "typing", "typer", "mipkit.cli.options"}


def _err_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    return err[0]


def test_mismatched_columns_exit_2(trio, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.read_csv(trio["syn"]).rename(columns={"city": "town"}).to_csv(bad, index=False)
    code = main(
        [
            "audit-synthetic",
            "--original",
            str(trio["orig"]),
            "--synthetic",
            str(bad),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    line = _err_line(capsys)
    assert "'city'" in line and "'town'" in line


def test_all_missing_column_exit_2(trio, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    df = pd.read_csv(trio["syn"])
    df["age"] = np.nan
    df.to_csv(bad, index=False)
    code = main(
        [
            "audit-synthetic",
            "--original",
            str(trio["orig"]),
            "--synthetic",
            str(bad),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "'age'" in _err_line(capsys)


def test_secret_not_in_table_exit_2(trio, tmp_path, capsys):
    code = main(
        [
            "audit-synthetic",
            "--original",
            str(trio["orig"]),
            "--synthetic",
            str(trio["syn"]),
            "--secret",
            "salary",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "'salary'" in _err_line(capsys)


def test_empty_synthetic_file_exit_2(trio, tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code = main(
        [
            "audit-synthetic",
            "--original",
            str(trio["orig"]),
            "--synthetic",
            str(empty),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "empty" in _err_line(capsys)
    header_only = tmp_path / "header.csv"
    header_only.write_text("age,income,sex,city\n")
    assert (
        main(
            [
                "audit-synthetic",
                "--original",
                str(trio["orig"]),
                "--synthetic",
                str(header_only),
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    assert _err_line(capsys)


def test_numeric_column_with_text_exit_2(trio, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    df = pd.read_csv(trio["syn"]).astype({"age": object})
    df.loc[0, "age"] = "old"
    df.to_csv(bad, index=False)
    code = main(
        [
            "audit-synthetic",
            "--original",
            str(trio["orig"]),
            "--synthetic",
            str(bad),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "'age'" in _err_line(capsys)
