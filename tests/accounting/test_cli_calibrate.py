"""``mipkit calibrate``: JSON contract, human output, and exit code 2 with one line on bad input."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from mipkit.accounting import SubsampledGaussian, mechanism_from_dict
from mipkit.cli import main


def _run_json(capsys, args: list[str]) -> dict:
    code = main(["calibrate", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count("\n") == 1, "--json prints exactly one line: one JSON object"
    return json.loads(out)


def test_gaussian_advantage_json(capsys):
    res = _run_json(capsys, ["--mechanism", "gaussian", "--target", "advantage", "--value", "0.1"])
    for key in ("noise", "achieved", "seconds", "target", "mechanism", "converged", "target_value"):
        assert key in res
    assert res["mechanism"] == {
        "name": "gaussian", "sigma": res["noise"], "sensitivity": 1.0, "neighbours": "add_remove"
    }  # fmt: skip
    assert res["target"] == "advantage" and res["converged"] is True and res["minimal"] is True
    # 2 Phi(1/(2 sigma)) - 1 = 0.1
    assert res["noise"] == pytest.approx(1 / (2 * stats.norm.ppf(0.55)), rel=1e-10)
    assert res["achieved"] <= 0.1 and res["achieved_fine"] <= 0.1


def test_gaussian_tpr_with_sensitivity_json(capsys):
    res = _run_json(
        capsys,
        ["--mechanism", "gaussian", "--sensitivity", "2", "--target", "tpr-at-fpr", "--value", "0.5"]
        + ["--fpr", "0.01"],
    )
    # Phi(Phi^-1(0.01) + 2/sigma) = 0.5  <=>  sigma = 2 / (0 - Phi^-1(0.01))
    assert res["noise"] == pytest.approx(2 / -stats.norm.ppf(0.01), rel=1e-10)
    assert res["details"]["fpr"] == 0.01 and res["details"]["sensitivity"] == 2.0


def test_laplace_and_precision_json(capsys):
    res = _run_json(
        capsys,
        ["--mechanism", "laplace", "--target", "precision", "--value", "0.5", "--base-rate", "0.01"]
        + ["--recall", "0.1"],
    )
    assert res["parameter_name"] == "scale" and res["achieved"] <= 0.5
    assert res["mechanism"]["name"] == "laplace" and res["mechanism"]["scale"] == res["noise"]
    assert res["details"]["base_rate"] == 0.01 and res["details"]["recall"] == 0.1


def test_dpsgd_json(capsys):
    res = _run_json(
        capsys,
        [
            "--mechanism",
            "dpsgd",
            "--sample-rate",
            "0.1",
            "--steps",
            "10",
            "--target",
            "eta",
            "--value",
            "0.05",
        ],
    )
    assert res["parameter_name"] == "noise_multiplier"
    assert res["mechanism"] == {
        "name": "subsampled_gaussian",
        "noise_multiplier": res["noise"],
        "sample_rate": 0.1,
        "steps": 10,
        "neighbours": "add_remove",
    }
    assert mechanism_from_dict(res["mechanism"]) == SubsampledGaussian(res["noise"], 0.1, 10)
    assert res["achieved"] <= 0.05 and res["achieved_fine"] <= 0.05 and res["converged"] is True
    assert res["details"]["sample_rate"] == 0.1 and res["details"]["steps"] == 10
    # eta concerns the membership game (replace-one); minimal within the default 0.5%
    assert res["neighbours"] == "replace_one" and res["minimal"] is True and res["tolerance"] == 0.005
    assert res["noise_lower"] == pytest.approx(res["noise"] / 1.005) and res["achieved_lower"] <= 0.05


def test_dpsgd_takes_batch_size_epochs_and_records(capsys):
    """--batch-size 64 --epochs 30 --n-records 8000 calibrates the run of --sample-rate 0.008 --steps 3750."""
    head = ["--mechanism", "dpsgd", "--target", "tpr-at-fpr", "--value", "0.05", "--fpr", "0.01"]
    opacus = _run_json(capsys, [*head, "--batch-size", "64", "--epochs", "30", "--n-records", "8000"])
    direct = _run_json(capsys, [*head, "--sample-rate", "0.008", "--steps", "3750"])
    opacus.pop("seconds"), direct.pop("seconds"), opacus["details"].pop("evaluations", None)
    direct["details"].pop("evaluations", None)
    assert opacus == direct
    assert opacus["mechanism"]["sample_rate"] == 0.008 and opacus["mechanism"]["steps"] == 3750


def test_gaussian_epsilon_at_small_values_is_confirmed(capsys):
    """Was: exit 2, 'could not confirm the calibration on the safe side', for every epsilon <= 0.2."""
    res = _run_json(
        capsys, ["--mechanism", "gaussian", "--target", "epsilon", "--value", "0.2", "--delta", "1e-5"]
    )
    assert res["converged"] is True and res["achieved_fine"] <= 0.2
    assert res["noise"] == pytest.approx(16.3041, rel=1e-5)


def test_dpsgd_tiny_advantage_is_not_refused(capsys):
    """Was: 'unreachable even at 1000' (the fixed 1e-3 grid); about 126 reaches it."""
    res = _run_json(
        capsys,
        ["--mechanism", "dpsgd", "--sample-rate", "0.01", "--steps", "1000", "--target", "advantage"]
        + ["--value", "0.001"],
    )
    assert 100 < res["noise"] < 150 and res["minimal"] is True and res["achieved_fine"] <= 0.001


def test_tolerance_and_neighbours_flags(capsys):
    loose = _run_json(
        capsys,
        ["--mechanism", "dpsgd", "--sample-rate", "0.1", "--steps", "10", "--target", "advantage"]
        + ["--value", "0.1", "--tolerance", "0.02"],
    )
    assert loose["tolerance"] == 0.02 and loose["noise_lower"] == pytest.approx(loose["noise"] / 1.02)
    rep = _run_json(
        capsys,
        ["--mechanism", "gaussian", "--target", "advantage", "--value", "0.1", "--neighbours", "replace_one"],
    )
    assert rep["mechanism"]["neighbours"] == "replace_one" and rep["neighbours"] == "replace_one"


def test_human_output(capsys):
    code = main(
        ["calibrate", "--mechanism", "gaussian", "--target", "epsilon", "--value", "1", "--delta", "1e-5"]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Calibrated sigma" in out and "Use Gaussian noise standard deviation sigma" in out
    assert "(1, 1e-05)-DP" in " ".join(out.split())


def test_human_output_starts_with_one_paragraph(capsys):
    """The answer opens with one paragraph (noise, guarantee, premise) before any table."""
    code = main(["calibrate", "--mechanism", "dpsgd", "--sample-rate", "0.01", "--steps", "100",
                 "--target", "eta", "--value", "0.1"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    first, rest = out.split("\n\n", 1)
    para = " ".join(first.split())
    assert para.startswith("Use DP-SGD noise multiplier = ") and "Premise:" in para
    assert "added to or removed from the data" in para and "membership game" in para
    assert not any(ch in first for ch in "┃│━") and "Calibrated noise_multiplier" in rest


@pytest.mark.parametrize(
    "args",
    [
        ["--mechanism", "gaussian", "--target", "eta", "--value", "0.6"],  # eta outside (0, 1/2)
        ["--mechanism", "gaussian", "--target", "eta", "--value", "0"],
        ["--mechanism", "gaussian", "--target", "epsilon", "--value", "-1", "--delta", "1e-5"],
        ["--mechanism", "gaussian", "--target", "epsilon", "--value", "1", "--delta", "1"],
        ["--mechanism", "gaussian", "--target", "epsilon", "--value", "1", "--delta", "0"],  # unreachable
        ["--mechanism", "gaussian", "--target", "epsilon", "--value", "1"],  # missing --delta
        ["--mechanism", "gaussian", "--target", "tpr-at-fpr", "--value", "0.1"],  # missing --fpr
        ["--mechanism", "gaussian", "--target", "tpr-at-fpr", "--value", "0.01", "--fpr", "0.05"],
        ["--mechanism", "gaussian", "--target", "advantage", "--value", "1"],  # unreachable
        ["--mechanism", "gaussian", "--target", "advantage", "--value", "0.1", "--fpr", "0.01"],  # stray
        ["--mechanism", "gaussian", "--target", "advantage", "--value", "0.1", "--steps", "10"],
        [
            "--mechanism",
            "dpsgd",
            "--sample-rate",
            "0",
            "--steps",
            "10",
            "--target",
            "advantage",
            "--value",
            "0.1",
        ],
        [
            "--mechanism",
            "dpsgd",
            "--sample-rate",
            "1.5",
            "--steps",
            "10",
            "--target",
            "advantage",
            "--value",
            "0.1",
        ],
        [
            "--mechanism",
            "dpsgd",
            "--sample-rate",
            "0.1",
            "--steps",
            "0",
            "--target",
            "advantage",
            "--value",
            "0.1",
        ],
        [
            "--mechanism",
            "dpsgd",
            "--steps",
            "10",
            "--target",
            "advantage",
            "--value",
            "0.1",
        ],  # no --sample-rate
        ["--mechanism", "dpsgd", "--sample-rate", "0.1", "--steps", "10", "--sensitivity", "2"]
        + ["--target", "advantage", "--value", "0.1"],
        ["--mechanism", "uniform", "--target", "advantage", "--value", "0.1"],
        ["--mechanism", "gaussian", "--target", "accuracy", "--value", "0.1"],
        ["--mechanism", "gaussian", "--target", "advantage"],  # missing --value
        ["--mechanism", "gaussian", "--target", "advantage", "--value", "abc"],
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args):
    code = main(["calibrate", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    if "Usage:" not in err:  # usage errors (missing/unparsable option) are click's; ours are one line
        assert len(err.strip().splitlines()) == 1 and err.startswith("mipkit: error:")


def test_plain_language_helpers():
    from mipkit.report.plain_language import format_risk, pct, skew

    # a risk a hair below its target is not printed as the target itself
    assert format_risk(0.5 - 1.5e-12, 0.5) == "0.5 - 1.5e-12"
    assert format_risk(0.0999421, 0.1) == "0.0999421"
    assert (pct(1.0), pct(0.99971), pct(0.1234), pct(0.004)) == ("100%", "99.97%", "12.3%", "0.4%")
    assert skew(1 / 11) == "1 in 11 (1:10)"
