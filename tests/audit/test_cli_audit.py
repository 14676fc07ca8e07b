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
    view = json.loads(captured.out)
    assert view["eta"] > 0.0 and view["verdict"]["status"] == "finding"
    assert view["verdict"]["policy"] == {"metric": "eta", "fail_above": 0.0}
    assert "finding" in captured.err and "lies above the limit 0" in captured.err
    assert view["eta_ci"][0] > 0.0  # a finding needs the whole simultaneous interval above the limit
    args[-1] = "0.49"
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["status"] == "pass"
    # a limit inside the interval is inconclusive: exit 0, and the verdict says so
    args[-1] = f"{(view['eta_ci'][0] + view['eta_ci'][1]) / 2:.4f}"
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["status"] == "inconclusive"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_fail_above_must_be_finite(value, table, tmp_path, capsys):
    args = _audit_args(table / "tiny.csv", tmp_path / "run", "--fail-above", value)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "finite" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "results.json").exists()


def test_fail_metric_is_checked(table, tmp_path, capsys):
    base = _audit_args(table / "tiny.csv", tmp_path / "run", "--fail-above", "0.1")
    assert main([*base, "--fail-metric", "tpr@0.05"]) == 2  # an FPR the audit does not measure
    assert "does not measure" in capsys.readouterr().err
    assert main([*base, "--fail-metric", "precision"]) == 2
    assert "tpr@<fpr>" in capsys.readouterr().err


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
    assert json.loads((tmp_path / "c" / "config.json").read_text())["seed"] == 4  # the flag won
    cfg.write_text("nonsense_key: 1\n")
    assert main(["audit", "--config", str(cfg)]) == 2
    assert "Unknown config key" in capsys.readouterr().err


# ------------------------------------------------------------------------------- flags and config keys


class _Captured:
    """A stand-in for audit's result: what the command prints, with the verdict of its config's policy
    (the workflow's :func:`verdict` on an eta of 0.3 with simultaneous interval [0.2, 0.4])."""

    eta = 0.3
    strongest_attack = "loss"

    def __init__(self, config=None):
        from mipkit.workflows.audit.verdict import verdict

        stats = {
            "headline": {"attack": "loss", "eta": 0.3, "eta_ci": [0.2, 0.4]},
            "attacks": {},
            "confidence": 0.95,
        }
        limit = None if config is None else config.fail_above
        self.verdict = verdict(stats, fail_metric="eta", fail_above=limit)

    def summary(self):
        from mipkit.report.dpia import audit_paragraph

        return audit_paragraph(self.to_dict())

    def to_dict(self):
        return {
            "auc": 0.6,
            "tpr_at_fpr": {"0.01": 0.02},
            "eta": 0.3,
            "eta_ci": [0.2, 0.4],
            "strongest_attack": "loss",
            "balanced_accuracy": 0.8,
            "attacks": {},
            "certificate": None,
            "utility": None,
            "game": None,
        }


@pytest.fixture
def captured(monkeypatch, tmp_path):
    """Replace the workflow by a recorder: what the command hands to audit, without fitting anything.

    Runs in its own working folder: the default run folder is relative (``runs/audit``), and two pytest
    workers sharing one would find it locked by the other."""
    monkeypatch.chdir(tmp_path)
    calls = []

    def fake_audit(data, config, *, run_dir=None, progress=None, report=True):
        calls.append(
            {
                "data": data,
                "config": config,
                "out": str(run_dir),
                "progress_shown": bool(getattr(progress, "enabled", False)),
                "write_report": report,
            }
        )
        return _Captured(config)

    monkeypatch.setattr("mipkit.workflows.audit.run.audit", fake_audit)
    return calls


# flag arguments, then the same setting as config-file keys (every flag has one; AuditConfig names too)
FLAG_CASES = [
    (["--data", "x.csv"], [{"data": "x.csv"}]),
    (["--target", "income"], [{"target": "income"}]),
    (["--params", '{"C": 2}'], [{"params": {"C": 2}}, {"params": '{"C": 2}'}]),
    (["--attacks", "loss,ltu"], [{"attacks": ["loss", "ltu"]}, {"attacks": "loss,ltu"}]),
    (["--models", "6"], [{"models": 6}, {"n_models": 6}]),
    (["--targets", "3"], [{"targets": 3}, {"n_targets": 3}]),
    (["--seed", "5"], [{"seed": 5}]),
    (["--out", "elsewhere"], [{"out": "elsewhere"}]),
    (["--backend", "ray"], [{"backend": "ray"}]),
    (["--address", "auto"], [{"address": "auto"}]),
    (["--n-jobs", "2"], [{"n-jobs": 2}, {"n_jobs": 2}]),
    (["--encode", "onehot"], [{"encode": "onehot"}]),
    (["--dropna"], [{"dropna": True}]),
    (["--drop", "id,name"], [{"drop": ["id", "name"]}]),
    (["--id-column", "pid"], [{"id-column": "pid"}, {"id_column": "pid"}]),
    (["--slice-by", "sex,age"], [{"slice-by": ["sex", "age"]}, {"slice_by": "sex,age"}]),
    (["--max-records", "50"], [{"max-records": 50}, {"max_records": 50}]),
    (["--fprs", "0.05,0.2"], [{"fprs": [0.05, 0.2]}]),
    (["--base-rates", "0.5,1:3"], [{"base_rates": [0.5, 0.25]}, {"base-rates": "0.5,1:3"}]),
    (["--ltu-strategy", "retrain"], [{"ltu_strategy": "retrain"}]),
    (["--ltu-rounds", "7"], [{"ltu_rounds": 7}]),
    (["--certified-eta", "0.1"], [{"certified_eta": 0.1}]),
    (["--confidence", "0.9"], [{"confidence": 0.9}]),
    (["--fail-above", "0.2"], [{"fail_above": 0.2}, {"fail-above": 0.2}]),
    (["--fail-metric", "auc"], [{"fail_metric": "auc"}, {"fail-metric": "auc"}]),
    (["--scale"], [{"scale": True}]),
    (["--include-labels"], [{"include_labels": True}, {"include-labels": True}]),
    (["--n-boot", "200"], [{"n_boot": 200}, {"n-boot": 200}]),
    (["--quiet"], [{"quiet": True}]),
    (["--no-report"], [{"no_report": True}, {"no-report": True}]),
]


BASE = ["audit", "--model", "pkg.Model", "--data", "d.csv", "--target", "y"]
"""The flags every audit needs; a case of ``--data`` or ``--target`` gives that flag itself."""


@pytest.mark.parametrize(("flag", "keys"), FLAG_CASES, ids=[c[0][0] for c in FLAG_CASES])
def test_every_flag_has_a_config_key(flag, keys, captured, tmp_path):
    required = flag[0] in ("--data", "--target")
    base = BASE[:-4] + (BASE[-2:] if flag[0] == "--data" else BASE[-4:-2]) if required else BASE
    assert main(base) == (2 if required else 0)  # the data and its label column are required
    assert main([*base, *flag]) == 0
    from_flag = captured[-1]
    if not required:
        assert from_flag != captured[-2]  # the flag changes what the workflow receives
    for i, key in enumerate(keys):
        cfg = tmp_path / f"c{i}.yaml"
        cfg.write_text(json.dumps(key))  # JSON is YAML
        assert main([*base, "--config", str(cfg)]) == 0
        assert captured[-1] == from_flag, key


def test_model_json_and_fail_above_keys(captured, tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: pkg.FromFile\njson: true\nfail-above: 0.1\ndata: d.csv\ntarget: y\n")
    assert main(["audit", "--config", str(cfg)]) == 1  # --model satisfied by the file; eta 0.3 > 0.1
    out = capsys.readouterr()
    assert json.loads(out.out)["eta"] == 0.3 and "lies above the limit 0.1" in out.err
    assert captured[-1]["config"].model == "pkg.FromFile"
    # flags given on the command line override the file
    assert main(["audit", "--config", str(cfg), "--model", "pkg.Flag", "--fail-above", "0.4"]) == 0
    assert captured[-1]["config"].model == "pkg.Flag"


def test_cli_defaults_are_the_config_defaults(captured):
    from mipkit.workflows.audit import AuditConfig, LabelledTable

    assert main([*BASE, "--quiet"]) == 0
    got = captured[-1]
    assert got["config"] == AuditConfig(model="pkg.Model")
    assert got["data"] == LabelledTable("d.csv", target="y")
    assert got["out"] == "runs/audit" and got["write_report"] is True


def test_model_is_required_and_help_shows_defaults(capsys):
    assert main(["audit", "--data", "x.csv"]) == 2
    assert "--model" in capsys.readouterr().err
    assert main(["audit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "[required]" in text
    for default in ("loss,lira,rmia", "16", "runs/audit", "0.001,0.01,0.1", "1:1,1:10,1:100,1:1000"):
        assert f"[default: {default}]" in text.replace("│ ", "").replace(" │", ""), default


def test_unknown_config_key_lists_the_known_ones(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: pkg.Model\nmodel_count: 4\n")
    assert main(["audit", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "Unknown config key(s): model_count" in err and "models" in err and len(err.splitlines()) == 1


def test_command_module_imports_nothing_heavy():
    """``mipkit --help`` must not pay for pandas, scikit-learn or the workflow: the audit command module
    imports them inside the command function only."""
    import ast
    import inspect

    import mipkit.cli.audit as module

    tree = ast.parse(inspect.getsource(module))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in top if isinstance(n, ast.ImportFrom)}
    assert names <= {"__future__", "pathlib", "typer", "mipkit.cli.options"}, names


def test_library_messages_name_no_cli_flag():
    """The command line translates; the library under it never tells a user to pass ``--something``."""
    import ast
    import re
    from pathlib import Path

    import mipkit

    root = Path(mipkit.__file__).parent
    files = [
        *root.glob("workflows/audit_*.py"),
        *(root / "attacks" / f"{m}.py" for m in ("loss", "lira", "rmia", "ltu", "signals", "registry")),
        *(root / "metrics" / f"{m}.py" for m in ("roc", "attack_summary")),
        root / "stats.py",
        *(root / "report" / f"{m}.py" for m in ("audit_report", "results", "html")),
    ]
    flag = re.compile(r"(^|[\s(`'\"])--[a-z]")
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(n) is not None
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert not flag.search(node.value), f"{path.name}: {node.value!r}"
