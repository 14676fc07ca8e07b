"""CLI `mipkit synthesize`: a small end-to-end run (--json fields, files), bad input exits 2 with one line,
a missing extra names it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main

TINY = '{"n_generator": 2, "n_critic": 2, "critic_hidden": [8], "sample_rate": 0.3}'


@pytest.fixture()
def table(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, 80),
            "city": rng.choice(["a", "b", "c"], 80),
            "income": rng.normal(50, 10, 80).round(1),
        }
    )
    p = tmp_path / "data.csv"
    df.to_csv(p, index=False)
    return p


#: The public domain of ``table`` (80 rows are far too few to estimate one privately).
DOMAIN = {
    "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
    "city": {"type": "categorical", "categories": ["a", "b", "c"]},
    "income": {"type": "numeric", "min": 0, "max": 100},
}


@pytest.fixture()
def domain(tmp_path):
    p = tmp_path / "domain.json"
    p.write_text(json.dumps(DOMAIN))
    return str(p)


@pytest.mark.torch
def test_end_to_end_json(table, domain, tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    argv = ["synthesize", "--data", str(table), "--method", "dpwgan-gp", "--epsilon", "2", "--delta", "1e-5"]
    argv += ["--domain", domain]
    argv += ["--rows", "30", "--seed", "1", "--out", str(out), "--params", TINY, "--json"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["method"] == "dpwgan-gp" and res["rows"] == 30 and res["delta"] == 1e-5
    assert 1.9 < res["epsilon"] <= 2.0 and res["seconds"] > 0
    cert = res["certified"]
    assert 0 < cert["eta"] < 0.5 and 0 < cert["advantage"] < 1 and set(cert["tpr_at_fpr"]) >= {"0.01"}
    syn = pd.read_csv(out / "synthetic.csv")
    assert list(syn.columns) == ["age", "city", "income"] and len(syn) == 30
    assert set(syn["city"]) <= {"a", "b", "c"} and syn["age"].between(18, 79).all()
    stored = json.loads((out / "certificate.json").read_text())
    assert stored["kind"] == "synthesis-certificate" and stored["eta"] == pytest.approx(cert["eta"])
    assert stored["mechanism"]["name"] == "heterogeneous_subsampled_gaussian"


@pytest.mark.torch
def test_target_risk(table, domain, tmp_path, capsys):
    pytest.importorskip("torch")
    argv = ["synthesize", "--data", str(table), "--method", "dpwgan-gp", "--target-risk", "eta=0.2"]
    argv += ["--domain", domain]
    argv += ["--out", str(tmp_path / "o"), "--params", TINY, "--json"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert 0.19 < res["certified"]["eta"] <= 0.2 and res["neighbours"] == "replace_one"


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--method", "dpwgan-gp", "--epsilon", "0"], "--epsilon must be > 0"),
        (["--method", "dpwgan-gp", "--epsilon", "-1"], "--epsilon must be > 0"),
        (["--method", "dpwgan-gp", "--epsilon", "1", "--delta", "1"], "--delta must be in (0, 1)"),
        (["--method", "dpwgan-gp", "--epsilon", "1", "--rows", "0"], "--rows must be at least 1"),
        (["--method", "magic", "--epsilon", "1"], "must be one of"),
        (["--method", "aim"], "needs --epsilon"),
        (["--method", "mst", "--epsilon", "1", "--target-risk", "eta=0.1"], "not both"),
        (["--method", "mst", "--target-risk", "eta"], "NAME=VALUE"),
        (["--method", "mst", "--target-risk", "risk=0.1"], "must start with one of"),
    ],
)
def test_bad_input_is_one_line_exit_2(table, tmp_path, capsys, extra, needle):
    code = main(["synthesize", "--data", str(table), "--out", str(tmp_path / "o"), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mipkit: error:") and needle in err


@pytest.mark.parametrize("column", ["empty", "allnan"])
def test_empty_or_all_missing_column(tmp_path, capsys, column):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "empty": [None, None, None], "allnan": [np.nan] * 3})
    df = df[["a", column]]
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    argv = ["synthesize", "--data", str(p), "--method", "mst", "--epsilon", "1", "--out", str(tmp_path / "o")]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "all missing" in err


def test_missing_extra_names_it(table, domain, tmp_path, capsys, monkeypatch):
    import importlib

    import mipkit.synthesizers._torch as opt

    real = importlib.import_module

    def fake(name, *a, **k):
        if name in ("mbi", "ctgan"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(opt.importlib, "import_module", fake)
    for method in ("mst", "ctgan"):
        argv = ["synthesize", "--data", str(table), "--method", method, "--epsilon", "1", "--domain", domain]
        code = main([*argv, "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "'synth' extra" in err and "pip install" in err


def test_audit_synthetic_reads_the_certificate(tmp_path, capsys):
    from mipkit.synthesizers.certificate import certificate_from_dp

    rng = np.random.default_rng(1)

    def tab(n):
        return pd.DataFrame({"age": rng.integers(18, 80, n), "sex": rng.choice(["F", "M"], n)})

    paths = {}
    for name, df in (("orig", tab(150)), ("syn", tab(150)), ("hold", tab(100))):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    cert = certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5).write(tmp_path / "certificate.json")
    out = tmp_path / "audit"
    argv = ["audit-synthetic", "--original", str(paths["orig"]), "--synthetic", str(paths["syn"])]
    argv += ["--holdout", str(paths["hold"]), "--secret", "sex", "--n-attacks", "40", "--out", str(out)]
    assert main([*argv, "--certificate", str(cert), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    certified = res["certified"]
    assert certified["certified"] and certified["method"] == "mst"
    assert set(certified["dcr"]["tpr_at_fpr"]) and "sex" in certified["inference"]
    row = certified["inference"]["sex"]
    assert row["certified_success"] > row["baseline_precision"]
    assert json.loads((out / "certified_bounds.json").read_text()) == certified
    # the certified ROC bound is the certificate's own curve, and the report draws and tabulates it
    from mipkit.synthesizers.certificate import SynthesisCertificate, certificate_curve

    curve = certificate_curve(SynthesisCertificate.read(cert), "add_remove")
    pts = certified["dcr"]["curve"]
    assert len(pts["fpr"]) == len(pts["tpr"]) > 20
    np.testing.assert_allclose(pts["tpr"], np.asarray(curve.tpr(np.asarray(pts["fpr"]))), rtol=1e-12)
    assert all(np.diff(pts["tpr"]) >= -1e-12) and pts["tpr"][-1] == pytest.approx(1.0)
    html = (out / "report.html").read_text()
    assert "Certified bounds" in html and "certified bound" in html.lower()
    assert "inference of sex" in html and "point above bound" in html  # the certified table
    code = main([*argv[:-1], str(tmp_path / "audit2"), "--certificate", str(tmp_path / "missing.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "missing.json" in err
    # --no-report: the same files but the report, which `mipkit report` then writes with the bounds drawn
    quiet = tmp_path / "audit3"
    assert main([*argv[:-1], str(quiet), "--certificate", str(cert), "--no-report"]) == 0
    assert "mipkit report" in capsys.readouterr().out.replace("\n", "")
    assert not (quiet / "report.html").exists()
    assert json.loads((quiet / "certified_bounds.json").read_text()) == certified
    assert main(["report", str(quiet)]) == 0
    capsys.readouterr()
    assert "Certified bounds" in (quiet / "report.html").read_text()


@pytest.mark.torch
def test_killed_run_resumes_from_its_checkpoint(table, domain, tmp_path, capsys):
    """A fit killed part-way leaves ``checkpoint`` in the output folder; the same command run again
    continues from it, says so, removes it, and writes what an uninterrupted run writes."""
    pytest.importorskip("torch")
    from mipkit.data.io import read_table
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    params = {"n_generator": 6, "n_critic": 2, "critic_hidden": [8], "sample_rate": 0.3}
    params["checkpoint_every"] = 2

    def argv(out):
        return ["synthesize", "--data", str(table), "--method", "dpwgan-gp", "--epsilon", "2", "--rows", "30",
                "--seed", "1", "--noise-seed", "2", "--out", str(out), "--params", json.dumps(params),
                "--domain", domain, "--json"]  # fmt: skip

    class Killed(Exception):
        pass

    def kill(stage, done, total):
        if done == 5:
            raise Killed

    out = tmp_path / "resumed"
    with pytest.raises(Killed):  # what a kill of `mipkit synthesize` at iteration 5 leaves behind
        synthesize(
            PrivateTable(read_table(table), DOMAIN),
            SynthesizeConfig(
                method="dpwgan-gp", epsilon=2.0, rows=30, random_state=1, noise_seed=2, params=params
            ),
            progress=kill,
            checkpoint=out / "checkpoint",
        )
    assert (out / "checkpoint").is_file() and not (out / "synthetic.csv").exists()
    assert main(argv(out)) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["resumed_from"] == 4 and not (out / "checkpoint").exists()
    assert main(argv(tmp_path / "whole")) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["resumed_from"] == 0
    assert (out / "synthetic.csv").read_text() == (tmp_path / "whole" / "synthetic.csv").read_text()
    assert resumed["certified"] == whole["certified"]


@pytest.mark.parametrize("method", ["aim", "mst"])
def test_marginal_methods_end_to_end(table, domain, tmp_path, capsys, method):
    pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")
    out = tmp_path / method
    params = '{"iters": 50}' if method == "mst" else '{"iters": 50, "round_iters": 20, "rounds": 3}'
    argv = ["synthesize", "--data", str(table), "--method", method, "--epsilon", "3", "--rows", "40"]
    argv += ["--domain", domain]
    assert main([*argv, "--out", str(out), "--params", params, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["method"] == method and res["rows"] == 40 and res["epsilon"] == pytest.approx(3.0)
    assert res["resumed_from"] == 0 and not (out / "checkpoint").exists()
    syn = pd.read_csv(out / "synthetic.csv")
    assert list(syn.columns) == ["age", "city", "income"] and set(syn["city"]) <= {"a", "b", "c"}
    assert syn["age"].dtype == np.int64  # written as "49", not "49.0"
