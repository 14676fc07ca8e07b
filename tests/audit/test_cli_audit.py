"""``mipkit audit`` and ``mipkit report`` through ``mipkit.cli.main``: JSON contract, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from mipkit.cli import main


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    X, y = make_classification(120, 5, n_informative=3, random_state=2)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    df["label"] = np.where(y == 1, "yes", "no")
    df.to_csv(d / "tiny.csv", index=False)
    cat = df.copy()
    cat["colour"] = ["red", "green", "blue"] * 40
    cat.to_csv(d / "cat.csv", index=False)
    few = df.copy()
    few.loc[:, "label"] = "no"
    few.loc[:2, "label"] = "yes"  # 3 records of one class
    few.to_csv(d / "few.csv", index=False)
    return d


def _audit_args(data, out, *extra):
    return [
        "audit",
        "--data",
        str(data),
        "--target",
        "label",
        "--model",
        "sklearn.ensemble.RandomForestClassifier",
        "--params",
        '{"n_estimators": 8}',
        "--models",
        "4",
        "--seed",
        "1",
        "--n-jobs",
        "1",
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def json_run(table, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return out, _audit_args(table / "tiny.csv", out, "--attacks", "loss,lira,rmia,ltu", "--json")


def test_json_contract(json_run, capsys):
    out, args = json_run
    assert main(args) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)  # exactly one JSON object on stdout
    for key in ("auc", "tpr_at_fpr", "eta", "eta_ci", "attacks"):
        assert key in payload
    assert set(payload["tpr_at_fpr"]) == {"0.001", "0.01", "0.1"}
    for name in ("loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"):
        a = payload["attacks"][name]
        for key in ("auc", "tpr_at_fpr", "eta", "eta_ci", "balanced_accuracy", "precision_at_base_rate"):
            assert key in a
    assert "ltu" in payload["attacks"]
    assert payload["eta"] == max(a["eta"] for a in payload["attacks"].values() if a["eta"] is not None)
    assert (out / "report.html").is_file()


def test_report_rerenders(json_run, capsys):
    out, args = json_run
    if not (out / "results.json").exists():
        assert main(args) == 0
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").stat().st_size > 10_000
    assert "report.html" in capsys.readouterr().out


def test_report_on_a_folder_without_results(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "results.json" in err


def test_fail_above_gives_exit_1(json_run, table, capsys):
    out, _ = json_run
    # same folder, data, trainer and seed as the JSON run: the fits come from the ledger
    args = _audit_args(
        table / "tiny.csv", out, "--attacks", "loss", "--no-report", "--json", "--fail-above", "0.0"
    )
    assert main(args) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["eta"] > 0.0
    assert "exceeds" in captured.err
    args[-1] = "0.49"
    assert main(args) == 0


@pytest.mark.parametrize(
    ("case", "expect"),
    [
        ("missing-target", "not found"),
        ("non-numeric", "Non-numeric"),
        ("few-per-class", "at least 4 records"),
        ("not-a-trainer", "not a trainer"),
        ("odd-models", "even integer"),
        ("bad-attack", "subset of"),
        ("bad-params", "--params"),
        ("missing-file", "No such file"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(case, expect, table, tmp_path, capsys):
    args = _audit_args(table / "tiny.csv", tmp_path / "bad")
    if case == "missing-target":
        args[args.index("label")] = "income"
    elif case == "non-numeric":
        args[args.index("--data") + 1] = str(table / "cat.csv")
    elif case == "few-per-class":
        args[args.index("--data") + 1] = str(table / "few.csv")
    elif case == "not-a-trainer":
        args[args.index("--model") + 1] = "collections.OrderedDict"
    elif case == "odd-models":
        args[args.index("--models") + 1] = "5"
    elif case == "bad-attack":
        args += ["--attacks", "loss,shadow"]
    elif case == "bad-params":
        args[args.index("--params") + 1] = "{n_estimators: 8"
    elif case == "missing-file":
        args[args.index("--data") + 1] = str(tmp_path / "nope.csv")
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert expect in err
    assert "Traceback" not in err


def test_encode_onehot_accepts_categoricals(table, tmp_path, capsys):
    args = _audit_args(
        table / "cat.csv", tmp_path / "cat", "--encode", "onehot", "--attacks", "loss", "--json"
    )
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["game"]["n_features"] == 5 + 3


def test_config_file_and_flags(table, tmp_path, capsys):
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(
        f"data: {table / 'tiny.csv'}\ntarget: label\nmodel: sklearn.linear_model.LogisticRegression\n"
        "n_models: 4\nattacks: [loss]\nn_jobs: 1\nmax_records: 60\n"
    )
    args = [
        "audit",
        "--config",
        str(cfg),
        "--out",
        str(tmp_path / "c"),
        "--json",
        "--seed",
        "4",
        "--no-report",
    ]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["game"]["n_records"] == 60 and list(payload["attacks"]) == ["loss"]
    cfg.write_text("nonsense_key: 1\n")
    assert main(["audit", "--config", str(cfg)]) == 2
    assert "Unknown config key" in capsys.readouterr().err
