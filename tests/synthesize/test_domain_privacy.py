"""``synthesize`` copies nothing it should not: the domain is public or estimated with DP (a category held by
one record and a planted extreme never reach the synthetic table), identifier columns are refused, integers
stay integers, infinite values are refused, and the outputs say where the domain came from."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.cli import main

RARE = [f"rare{i}" for i in range(6)]
EXTREME = 987654.25


def _leaky_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Three common cities and six each held by one record; ``x`` around 50 with one planted extreme."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["a", "b", "c"], n).astype(object)
    city[: len(RARE)] = RARE
    x = rng.normal(50, 10, n).round(2)
    x[10] = EXTREME
    return pd.DataFrame({"age": rng.integers(18, 80, n), "city": city, "x": x})


def _assert_nothing_copied(syn: pd.DataFrame) -> None:
    assert not set(syn["city"].dropna().astype(str)) & set(RARE)
    assert set(syn["city"].dropna().astype(str)) <= {"a", "b", "c"}
    assert not np.isclose(syn["x"], EXTREME).any() and syn["x"].max() < 1000  # nowhere near the extreme
    assert pd.api.types.is_integer_dtype(syn["age"])


def test_stability_histogram_keeps_a_singleton_with_probability_at_most_delta():
    """The attack on one level: a record's own category is released with probability <= delta."""
    from mipkit.synthesizers.dpdomain import stable_levels

    rng = np.random.default_rng(0)
    s = pd.Series(["common"] * 400 + ["mine"])
    trials, eps, delta = 4000, 1.0, 0.1
    kept = sum("mine" in stable_levels(s, epsilon=eps, delta=delta, rng=rng)[0] for _ in range(trials))
    assert kept / trials <= delta + 3 * np.sqrt(delta * (1 - delta) / trials)
    levels, missing, _ = stable_levels(s, epsilon=eps, delta=1e-6, rng=rng)
    assert levels == ["common"] and not missing


def test_estimated_range_is_grid_points_not_the_records_extremes():
    from mipkit.synthesizers.dpdomain import estimate_domain, numeric_edges

    rng = np.random.default_rng(1)
    df = _leaky_table()
    grid = set(numeric_edges().tolist())
    for _ in range(20):
        est = estimate_domain(df, epsilon=0.1, delta=1e-6, rng=rng)
        x, age = est.domain["x"], est.domain["age"]
        assert x["min"] in grid and x["max"] in grid and 16 <= x["min"] < x["max"] <= 128
        assert age["integer"] and not x["integer"] and float(age["min"]).is_integer()
        assert est.domain["city"]["categories"] == ["a", "b", "c"]
    assert est.record().to_dict() == {
        "name": "approx_dp",
        "epsilon": 0.1,
        "delta": 1e-6,
        "neighbours": "add_remove",
    }
    with pytest.raises(MipkitValueError, match="--domain FILE"):  # 30 records cannot pay for a category
        estimate_domain(df.head(30), epsilon=0.1, delta=1e-6, rng=rng)


@pytest.mark.parametrize("method", ["mst", "aim", "dpwgan-gp"])
def test_no_rare_category_or_extreme_without_a_public_domain(method):
    """The attack: MST with a domain read from the data put 15 of 19 singleton levels into synthetic.csv.
    Without a public domain the domain is estimated privately, and the certificate composes its share."""
    from mipkit.workflows.synthesize import SynthesizeConfig, synthesize

    if method == "dpwgan-gp":
        pytest.importorskip("torch")
        opts = {"n_generator": 3, "n_critic": 2, "critic_hidden": [8], "sample_rate": 0.1}
    else:
        pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")
        opts = {"iters": 50} if method == "mst" else {"iters": 50, "round_iters": 20, "rounds": 3}
    res = synthesize(
        _leaky_table(), SynthesizeConfig(method=method, epsilon=1.0, rows=3000, random_state=0, params=opts)
    )
    _assert_nothing_copied(res.synthetic)
    cert = res.certificate
    assert cert.details["domain"]["source"] == "dp-estimated" and cert.details["domain"]["epsilon"] == 0.1
    assert cert.epsilon["add_remove"] <= 1.0 + 1e-9 and cert.delta == pytest.approx(1e-5)
    if method == "dpwgan-gp":  # the domain's guarantee composed with the training's (PLD)
        parts = [m["name"] for m in cert.mechanism["mechanisms"]]
        assert parts == ["approx_dp", "heterogeneous_subsampled_gaussian"]
    else:
        assert cert.epsilon["add_remove"] == pytest.approx(1.0)
        assert cert.details["domain"]["synthesizer"]["epsilon"] == pytest.approx(0.9)


def test_cli_json_and_certificate_say_where_the_domain_came_from(tmp_path, capsys):
    pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")
    data = tmp_path / "d.csv"
    _leaky_table().to_csv(data, index=False)
    argv = [
        "synthesize",
        "--data",
        str(data),
        "--method",
        "mst",
        "--epsilon",
        "1",
        "--params",
        '{"iters": 50}',
    ]
    assert main([*argv, "--out", str(tmp_path / "o"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["domain"]["source"] == "dp-estimated" and res["domain"]["share"] == 0.1
    assert res["domain"]["epsilon"] == pytest.approx(0.1) and res["epsilon"] == pytest.approx(1.0)
    stored = json.loads((tmp_path / "o" / "certificate.json").read_text())
    assert stored["details"]["domain"] == res["domain"]
    syn = pd.read_csv(tmp_path / "o" / "synthetic.csv")
    _assert_nothing_copied(syn)
    # a public domain is used as is, at no cost; one that lists a rare level lets it appear
    dom = {
        "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
        "city": {"type": "categorical", "categories": ["a", "b", "c", *RARE]},
        "x": {"type": "numeric", "min": 0, "max": 100},
    }
    (tmp_path / "dom.json").write_text(json.dumps(dom))
    assert main([*argv, "--domain", str(tmp_path / "dom.json"), "--out", str(tmp_path / "p"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["domain"] == {"source": "public file", "epsilon": 0.0}
    assert res["epsilon"] == pytest.approx(1.0)
    assert main([*argv, "--domain-share", "0.5", "--out", str(tmp_path / "q")]) == 0
    assert "Domain: estimated with differential privacy (epsilon 0.5" in capsys.readouterr().out


def _write(tmp_path, df: pd.DataFrame, name: str = "d.csv") -> str:
    p = tmp_path / name
    df.to_csv(p, index=False)
    return str(p)


def _one_line_exit_2(argv, capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("mipkit: error:"), err
    return err


def test_patient_id_is_refused_and_dropped_on_request(tmp_path, capsys):
    pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"patient_id": np.arange(1000, 1100), "age": rng.integers(18, 80, 100)})
    data = _write(tmp_path, df)
    dom = tmp_path / "dom.json"
    dom.write_text(json.dumps({"age": {"type": "numeric", "min": 18, "max": 79, "integer": True}}))
    argv = ["synthesize", "--data", data, "--method", "mst", "--epsilon", "1", "--domain", str(dom)]
    argv += ["--params", '{"iters": 50}']
    err = _one_line_exit_2([*argv, "--out", str(tmp_path / "o")], capsys)
    assert "'patient_id'" in err and "--drop patient_id" in err
    assert main([*argv, "--drop", "patient_id", "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    text = (tmp_path / "o" / "synthetic.csv").read_text()
    assert text.splitlines()[0] == "age" and ".0" not in text  # integers written as integers
    err = _one_line_exit_2([*argv, "--drop", "nope", "--out", str(tmp_path / "o2")], capsys)
    assert "'nope'" in err


def test_identifier_rules():
    from mipkit.synthesizers.tablecheck import find_identifiers

    n = 40
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "PatientId": rng.integers(0, 5, n),
            "uuid": ["x"] * n,
            "SSN": rng.integers(0, 5, n),
            "record_no": rng.integers(0, 5, n),
            "code": rng.permutation(10_000)[:n],  # every value distinct: a code
            "email": [f"p{i}@x.org" for i in range(n)],
            "as_float": np.arange(n, dtype=float),  # integral floats (ids read with missing values)
            "weight": rng.normal(70, 10, n),  # distinct measurements: never flagged by uniqueness
            "patient_age": rng.integers(18, 80, n),
            "paid": rng.integers(0, 5, n),
            "valid": rng.choice(["y", "n"], n),
        }
    )
    expected = ["PatientId", "uuid", "SSN", "record_no", "code", "email", "as_float"]
    assert find_identifiers(df) == expected
    assert find_identifiers(df, declared=["code", "uuid"]) == [
        c for c in expected if c not in ("code", "uuid")
    ]
    assert find_identifiers(df.head(10)[["code", "weight"]]) == []  # too few values to judge


def test_infinite_values_are_refused_before_fitting(tmp_path, capsys):
    df = pd.DataFrame({"a": [1.5, np.inf, 2.5, -np.inf], "b": ["u", "v", "u", "v"], "c": [np.inf, 1, 2, 3]})
    argv = ["synthesize", "--data", _write(tmp_path, df), "--method", "mst", "--epsilon", "1"]
    err = _one_line_exit_2([*argv, "--out", str(tmp_path / "o")], capsys)
    assert "'a' (2)" in err and "'c' (1)" in err and "inf" in err


def test_public_domain_does_not_read_missing_values_from_the_data(tmp_path, capsys):
    df = pd.DataFrame({"a": [1.0, None, 2.0, 3.0] * 10, "b": ["u", "v", "u", None] * 10})
    dom = {
        "a": {"type": "numeric", "min": 0, "max": 5},
        "b": {"type": "categorical", "categories": ["u", "v"]},
    }
    (tmp_path / "dom.json").write_text(json.dumps(dom))
    argv = ["synthesize", "--data", _write(tmp_path, df), "--method", "mst", "--out", str(tmp_path / "o")]
    err = _one_line_exit_2([*argv, "--epsilon", "1", "--domain", str(tmp_path / "dom.json")], capsys)
    assert "'a' has 10 missing values" in err and '"missing": true' in err
    # a risk target cannot pay for a private domain estimate: refused, naming the public domain
    err = _one_line_exit_2([*argv, "--target-risk", "eta=0.2"], capsys)
    assert "--domain FILE" in err
    dom_argv = [*argv, "--epsilon", "1", "--domain", str(tmp_path / "dom.json"), "--domain-share", "0.2"]
    assert "not both" in _one_line_exit_2(dom_argv, capsys)
    assert "--domain-share must be in (0, 1)" in _one_line_exit_2(
        [*argv, "--epsilon", "1", "--domain-share", "1"], capsys
    )


def test_types_come_back():
    from mipkit.synthesizers.tablecheck import restore_types

    dtypes = {
        "n": np.dtype("int64"),
        "f": np.dtype("bool"),
        "m": np.dtype("float64"),
        "x": np.dtype("float64"),
    }
    dom = {"m": {"type": "numeric", "min": 0, "max": 9, "integer": True}, "x": {"type": "numeric"}}
    syn = pd.DataFrame({"n": [49.0, 3.0], "f": ["True", "False"], "m": [4.0, np.nan], "x": [1.5, 2.0]})
    out = restore_types(syn, dtypes, dom)
    assert out["n"].dtype == np.int64 and out["f"].dtype == bool and list(out["f"]) == [True, False]
    assert str(out["m"].dtype) == "Int64" and out["x"].dtype == float
    assert out.to_csv(index=False).splitlines()[1] == "49,True,4,1.5"


def test_integer_and_bool_columns_keep_their_types():
    """MST wrote an integer column as "49.0" and a bool column as text."""
    pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {"n": rng.integers(0, 9, 200), "flag": rng.random(200) < 0.5, "m": rng.integers(0, 5, 200)}
    )
    df["m"] = df["m"].astype(float).where(rng.random(200) > 0.3)  # an integer column with missing values
    dom = {
        "n": {"type": "numeric", "min": 0, "max": 8, "integer": True},
        "flag": {"type": "categorical", "categories": [True, False]},
        "m": {"type": "numeric", "min": 0, "max": 4, "integer": True, "missing": True},
    }
    syn = synthesize(
        PrivateTable(df, dom),
        SynthesizeConfig(method="mst", epsilon=5.0, random_state=0, params={"iters": 50}),
    ).synthetic
    assert syn["n"].dtype == df["n"].dtype and syn["flag"].dtype == bool and str(syn["m"].dtype) == "Int64"
    assert syn["m"].isna().any() and not any(".0" in line for line in syn.to_csv(index=False).splitlines())
