"""`mipkit audit-synthetic --fail-above`: exit 1 on a finding with one line naming it, 0 otherwise; the
policy's flags refuse bad values with exit 2; the same attacks as the library through --attacks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main


def _table(n, rng):
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.integers(10, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    orig, hold = _table(200, rng), _table(200, rng)
    leaky = pd.concat([orig.iloc[:150], _table(250, rng)], ignore_index=True)
    fresh = _table(400, rng)
    paths = {}
    for name, df in (("orig", orig), ("hold", hold), ("leaky", leaky), ("fresh", fresh)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def _argv(files, syn, out, *extra):
    return [
        "audit-synthetic",
        "--original",
        str(files["orig"]),
        "--synthetic",
        str(files[syn]),
        "--holdout",
        str(files["hold"]),
        "--out",
        str(out),
        "--json",
        *extra,
    ]


def test_finding_exits_1_with_one_line_and_writes_the_run(files, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(_argv(files, "leaky", out, "--fail-above", "0.6", "--fail-metric", "dcr_auc"))
    assert code == 1
    captured = capsys.readouterr()
    err = [line for line in captured.err.strip().splitlines() if line]
    assert len(err) == 1 and err[0].startswith("mipkit: finding: DCR attack AUC")
    assert "--fail-above 0.6" in err[0] and "--fail-metric dcr_auc" in err[0]
    printed = json.loads(captured.out)
    assert printed["verdict"]["status"] == "finding" and printed["verdict"]["interval"][0] > 0.6
    saved = json.loads((out / "results.json").read_text())
    assert saved["verdict"]["status"] == "finding" and (out / "report.html").is_file()
    assert saved["inputs"]["sources"]["original"].startswith("orig.csv (sha256 ")


def test_pass_and_no_policy_exit_0(files, tmp_path, capsys):
    assert main(_argv(files, "fresh", tmp_path / "a", "--fail-above", "0.3")) == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["status"] == "pass"
    assert main(_argv(files, "leaky", tmp_path / "b")) == 0  # no policy: measurements only
    assert json.loads(capsys.readouterr().out)["verdict"]["status"] == "no policy"


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--fail-above", "nan"], "--fail-above"),
        (["--fail-above", "2"], "--fail-above"),
        (["--fail-metric", "eta"], "--fail-metric"),
        (["--attacks", "nearest,forest"], "--attacks"),
    ],
)
def test_bad_policy_flags_exit_2(files, tmp_path, capsys, extra, needle):
    out = tmp_path / "r"
    assert main(_argv(files, "fresh", out, *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mipkit: error:") and needle in err[0]
    assert not (out / "results.json").exists()


def test_attacks_flag_runs_the_library_s_attacks(files, tmp_path, capsys):
    argv = _argv(
        files, "leaky", tmp_path / "n", "--secret", "sex", "--attacks", "nearest", "--n-attacks", "50"
    )
    assert main([*argv, "--no-non-member-baseline"]) == 0
    saved = json.loads((tmp_path / "n" / "results.json").read_text())
    inf = saved["inference"]["sex"]
    assert list(inf["attacks"]) == ["nearest"] and list(inf["baselines"]) == ["most_frequent"]
    assert inf["pairs"]["nearest"]["baseline"] == "most_frequent"
    assert saved["inputs"]["attacks"] == ["nearest"] and saved["inputs"]["non_member_baseline"] is False
    capsys.readouterr()
    assert main([*_argv(files, "fresh", tmp_path / "d"), "--include-data-summary"]) == 0
    cols = json.loads((tmp_path / "d" / "results.json").read_text())["inputs"]["columns"]
    assert cols["numeric_min"] == [
        float(pd.read_csv(files["orig"])["age"].min()),
        float(pd.read_csv(files["orig"])["hours"].min()),
    ]
