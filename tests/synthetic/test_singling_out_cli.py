"""`mipkit audit-synthetic --singling-out / --linkability`: off by default, results.json blocks, frame rows,
report section, and bad input -> one line, exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic


@pytest.fixture()
def trio(tmp_path, make_small_mixed_table):
    _table = make_small_mixed_table
    rng = np.random.default_rng(0)
    orig, ctl = _table(200, rng), _table(200, rng)
    syn = pd.concat([orig.sample(100, random_state=1), _table(100, rng)], ignore_index=True)  # half copies
    paths = {}
    for name, df in (("orig", orig), ("syn", syn), ("ctl", ctl)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def _argv(trio, out, *extra):
    return [
        "audit-synthetic", "--original", str(trio["orig"]), "--synthetic", str(trio["syn"]),
        "--control", str(trio["ctl"]), "--checks", "inference", "--n-attacks", "80", "--seed", "1",
        "--out", str(out), *extra,
    ]  # fmt: skip


def test_both_attacks_end_to_end(trio, tmp_path, capsys):
    out = tmp_path / "run"
    extra = ["--singling-out", "30", "--linkability", "age,sex;income,city", "--linkability-neighbors", "2"]
    assert main([*_argv(trio, out, *extra), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "results.json").read_text())
    assert set(saved["singling_out"]) == {"univariate", "multivariate"}
    for mode, r in saved["singling_out"].items():
        assert r["n_predicates"] <= 30 and r["attack_success"]["trials"] == r["n_predicates"]
        a, c = r["equal_size"]["attack_success"], r["equal_size"]["control_success"]
        assert r["risk"]["value"] == pytest.approx((a - c) / (1 - c), abs=0.05)  # Wilson centres
        assert printed["singling_out"][mode]["risk"] == r["risk"]["value"]
    lk = saved["linkability"]
    assert lk["aux_cols"] == [["age", "sex"], ["income", "city"]] and lk["n_neighbors"] == 2
    assert lk["attack_success"]["trials"] == 80 and lk["control_success"]["trials"] == 80
    # half of the synthetic rows copy training rows: their halves meet on the copy
    assert lk["attack_success"]["value"] > lk["control_success"]["value"]
    assert printed["linkability"]["risk"] == lk["risk"]["value"]
    assert saved["inputs"]["singling_out"] == {"n_predicates": 30, "n_cols": 3}
    html = (out / "report.html").read_text()
    assert "Singling out and linkability" in html
    assert main(_argv(trio, tmp_path / "run2", *extra)) == 0
    text = capsys.readouterr().out
    assert "singling out (multivariate)" in text and "Linkability (age + sex | income + city" in text


def test_off_by_default_and_frame_rows(trio, make_small_mixed_table):
    _table = make_small_mixed_table
    rng = np.random.default_rng(2)
    orig, syn, ctl = _table(150, rng), _table(150, rng), _table(150, rng)
    plain = audit_synthetic(
        SyntheticRelease(orig, syn, control=ctl), AuditSyntheticConfig(checks=("inference",), random_state=0)
    )
    assert "singling_out" not in plain.to_dict() and "linkability" not in plain.to_dict()
    assert set(plain.to_frame()["section"]) <= {"nnaa", "dcr", "inference"}
    both = audit_synthetic(
        SyntheticRelease(orig, syn, control=ctl),
        AuditSyntheticConfig(
            checks=("inference",),
            random_state=0,
            singling_out=20,
            linkability=(["age"], ["sex", "city"]),
            n_attacks=50,
        ),
    )
    frame = both.to_frame()
    so = frame[frame["section"] == "singling_out"]
    assert set(so["attack"]) == {"univariate", "multivariate"}
    assert set(so["measure"]) == {
        "attack_success", "attack_success_equal_size", "control_success_equal_size", "risk",
        "risk_training_size_lowest", "risk_training_size_highest",
    }  # fmt: skip
    lk = frame[frame["section"] == "linkability"]
    assert {"risk", "precision_at_1:10"} <= set(lk["measure"])
    risk = both.to_dict()["linkability"]["risk"]
    row = lk[lk["measure"] == "risk"].iloc[0]
    assert (row["value"], row["ci_low"], row["ci_high"]) == (risk["value"], *risk["ci"])
    # the other numbers do not move when the new attacks are turned on
    assert plain.to_dict()["inference"] == both.to_dict()["inference"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--singling-out", "0"], "--singling-out must be at least 1"),
        (["--singling-out", "5", "--singling-out-cols", "9"], "--singling-out-cols must be at most 4"),
        (["--linkability", "age,sex"], "--linkability must be two"),
        (["--linkability", "age;"], "--linkability must be two"),
        (["--linkability", "age;nope"], "'nope' not found"),
        (["--linkability", "age;age,sex"], "share 'age'"),
        (["--linkability", "age;sex", "--linkability-neighbors", "0"], "--linkability-neighbors must be"),
    ],
)
def test_bad_input_exit_2(trio, tmp_path, capsys, extra, needle):
    assert main(_argv(trio, tmp_path / "r", *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
