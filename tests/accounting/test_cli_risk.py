"""``mipkit risk``: JSON contract, human output, figure, and exit code 2 with one line on bad input."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from mipkit.cli import main


def _run_json(capsys, args: list[str]) -> dict:
    code = main(["risk", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count("\n") == 1, "--json prints exactly one line: one JSON object"
    return json.loads(out)


def test_risk_epsilon_delta_json(capsys) -> None:
    res = _run_json(capsys, ["--epsilon", "8", "--delta", "1e-5", "--neighbours", "replace_one"])
    for key in ("mechanism", "eta", "advantage", "tpr_at_fpr", "success_bound", "epsilon", "delta"):
        assert key in res and (key == "mechanism" or key == "delta" or f"{key}_lower" in res)
    assert res["mechanism"] == {
        "name": "approx_dp",
        "epsilon": 8.0,
        "delta": 1e-5,
        "neighbours": "replace_one",
    }
    assert res["relation_of"]["eta"] == "replace_one" and res["neighbours"] == "replace_one"
    # Thm 4 of Izzo et al. (a replace-one guarantee): delta + (1 - delta)/(1 + e^-eps) - 1/2
    eta = 1e-5 + (1 - 1e-5) / (1 + math.exp(-8)) - 0.5
    assert res["eta"] == pytest.approx(eta, abs=1e-14) and res["eta_lower"] == res["eta"]
    assert res["advantage"] == pytest.approx(2 * eta, abs=1e-14)
    assert res["epsilon"] == pytest.approx(8.0, rel=1e-9)
    assert set(res["tpr_at_fpr"]) == {"0.001", "0.01", "0.1"}
    # 1 - f(a) = delta + e^eps a on the first piece (a < (1-delta)/(1+e^eps) ~ 3.35e-4), else the second
    a = 0.001
    tpr = 1 - math.exp(-8) * (1 - 1e-5 - a)
    assert res["tpr_at_fpr"]["0.001"] == pytest.approx(tpr, rel=1e-12)
    assert set(res["precision_at_base_rate"]) == {"0.5", "0.0909091", "0.00990099", "0.000999001"}


def test_risk_mu_and_gaussian_sigma_agree(capsys) -> None:
    a = _run_json(capsys, ["--mu", "0.5", "--fpr", "0.05", "--baseline", "0.2", "--base-rate", "0.01"])
    b = _run_json(
        capsys,
        [
            "--gaussian-sigma",
            "4",
            "--sensitivity",
            "2",
            "--fpr",
            "0.05",
            "--baseline",
            "0.2",
            "--base-rate",
            "0.01",
        ],
    )
    assert a["mechanism"] == {"name": "gdp", "mu": 0.5, "neighbours": "add_remove"}
    assert b["mechanism"] == {
        "name": "gaussian",
        "sigma": 4.0,
        "sensitivity": 2.0,
        "neighbours": "add_remove",
    }
    assert b["curve"] == {
        "curve": "GaussianCurve", "neighbours": "add_remove", "mechanism": b["mechanism"], "mu": 0.5
    }  # fmt: skip
    for key in ("eta", "advantage", "tpr_at_fpr", "success_bound", "precision_at_base_rate"):
        assert a[key] == b[key]
    # add/remove 0.5-GDP: the MIP game replaces a record, which is 1-GDP (group privacy, exact for GDP)
    assert a["eta"] == pytest.approx(stats.norm.cdf(0.5) - 0.5)
    assert a["mip_curve"]["mu"] == 1.0 and a["advantage"] == pytest.approx(2 * stats.norm.cdf(0.25) - 1)
    assert a["tpr_at_fpr"] == {"0.05": pytest.approx(stats.norm.cdf(stats.norm.ppf(0.05) + 0.5))}
    assert set(a["success_bound"]) == {"0.2"}
    assert set(a["precision_at_base_rate"]) == {"0.01"}
    assert "epsilon" not in a


def test_risk_pure_epsilon_names_one_record(capsys) -> None:
    res = _run_json(capsys, ["--epsilon", "1"])
    assert res["mechanism"] == {"name": "pure_dp", "epsilon": 1.0, "neighbours": "add_remove"}
    assert res["curve"]["mechanism"] == res["mechanism"]
    assert res["epsilon"] == pytest.approx(1.0) and res["delta"] == 0.0  # reported at delta 0
    # add/remove (1, 0)-DP: group privacy for the replacement, eta = (1 - e^-1) / 2
    assert res["eta"] == pytest.approx((1 - math.exp(-1)) / 2, abs=1e-15)
    assert res["mip_curve"]["curve"] == "GroupPrivacyCurve"
    rep = _run_json(capsys, ["--epsilon", "1", "--neighbours", "replace_one"])
    assert rep["eta"] == pytest.approx(1 / (1 + math.exp(-1)) - 0.5, abs=1e-15)  # Thm 4


def test_risk_laplace(capsys) -> None:
    res = _run_json(capsys, ["--laplace-scale", "2", "--delta", "0"])
    assert res["mechanism"] == {
        "name": "laplace",
        "scale": 2.0,
        "sensitivity": 1.0,
        "neighbours": "add_remove",
    }
    assert res["curve"]["epsilon"] == 0.5
    assert res["advantage"] == pytest.approx(1 - math.exp(-0.25))
    assert res["epsilon"] == pytest.approx(0.5)


def test_risk_dpsgd(capsys) -> None:
    res = _run_json(
        capsys, ["--noise-multiplier", "2", "--sample-rate", "0.5", "--steps", "1", "--delta", "1e-5"]
    )
    assert res["mechanism"] == {
        "name": "subsampled_gaussian",
        "noise_multiplier": 2.0,
        "sample_rate": 0.5,
        "steps": 1,
        "neighbours": "add_remove",
    }
    assert res["curve"]["curve"] == "PLDCurve" and res["curve"]["mechanism"] == res["mechanism"]
    assert res["mip_curve"]["mechanism"]["neighbours"] == "replace_one" and res["exact"] is False
    # one step of the subsampled Gaussian is less risky than the unsubsampled Gaussian of the same relation
    assert 0 < res["advantage"] <= 2 * stats.norm.cdf(0.25) - 1 + 1e-6
    assert 0 < res["eta"] <= stats.norm.cdf(0.5) - 0.5 + 1e-6
    # two sides within the tolerance
    assert res["tolerance"] == 1e-4
    for key in ("eta", "advantage"):
        assert res[f"{key}_lower"] <= res[key] <= res[f"{key}_lower"] + 1e-4
    for fpr, v in res["tpr_at_fpr"].items():
        assert res["tpr_at_fpr_lower"][fpr] <= v <= res["tpr_at_fpr_lower"][fpr] + 1e-4
    assert res["epsilon"] is not None and res["epsilon_lower"] <= res["epsilon"]
    # the epsilon interval is refined to its own relative tolerance (default 1e-3), stated in the curve
    assert res["curve"]["epsilon_rtol"] == 1e-3
    assert res["epsilon"] - res["epsilon_lower"] <= 1e-3 * res["epsilon"]


def _blocks(out: str) -> tuple[str, str]:
    """The first printed block as one line of text, and the rest."""
    first, rest = out.split("\n\n", 1)
    return " ".join(first.split()), rest


def test_risk_human_output_starts_with_one_paragraph(capsys) -> None:
    """Release, headline, meaning and premise in one paragraph before any table; the two accuracies of
    add/remove (1, 0)-DP (in or out: 1/2 + adv/2 = e/(1+e) = 73.1%; the fixed-size game: 1/2 + eta =
    1 - e^-1/2 = 81.6%) are both given, with the reason they differ."""
    code = main(["risk", "--epsilon", "1"])
    out, _ = capsys.readouterr()
    assert code == 0
    para, rest = _blocks(out)
    assert not any(ch in para for ch in "┃│━") and "Certified risk" not in para
    starts = [para.index(w) for w in ("Released:", "Headline risk:", "What it means:", "Premise:")]
    assert starts[0] == 0 and starts == sorted(starts)
    assert "epsilon = 1 differential privacy (pure DP)" in para
    assert "added to or removed from the data" in para
    assert "right at most 73.1% of the time, against 50% by guessing; secondary figure: at most 81.6%" in para
    assert "81.6% if the attacker also knows how many records there are" in para
    assert "two changes, not one" in para
    assert "finds at most 2.72% of the members" in para and "at most 27.2% of the time with it" in para
    assert "Certified risk: pure_dp (epsilon=1; add_remove neighbours)" in " ".join(rest.split())
    rows = [r for r in _table_rows(rest) if r[0]]
    # the table's first row is the paragraph's headline; the secondary figure follows in the same words
    assert (
        rows[0][0].startswith("Accuracy telling whether a person is in the data") and rows[0][2] == "0.7311"
    )
    assert rows[1][0].startswith("Accuracy if the attacker also knows how many") and rows[1][2] == "0.8161"
    assert "replace_one" in rest and "Lower" not in rest  # the relation of every row; exact: one column


def _table_rows(out: str) -> list[list[str]]:
    """The table's rows, a label wrapped over several lines joined into its row."""
    rows: list[list[str]] = []
    for ln in out.splitlines():
        if not ln.startswith("│"):
            continue
        cells = [c.strip() for c in ln.split("│")[1:-1]]
        if rows and not any(cells[1:]):
            rows[-1][0] = f"{rows[-1][0]} {cells[0]}".strip()
        else:
            rows.append(cells)
    return rows


def test_risk_table_shows_each_figure_once(capsys) -> None:
    """Pure DP's precision is flat in the recall: one row per skew, not one per recall; a success bound
    at a baseline that is a reported FPR is that TPR (one row); the given epsilon is not echoed."""
    code = main(["risk", "--epsilon", "1"])
    out, _ = capsys.readouterr()
    assert code == 0
    rows = _table_rows(out)
    precision = [r for r in rows if r[0].startswith("Precision")]
    assert [r[0] for r in precision] == [
        f"Precision, 1 in {n}, recall 0.01 to 0.5" for n in ("2", "11", "101", "1001")
    ]
    assert len({r[2] for r in precision}) == len(precision)
    # e/(1+e) = 0.7311 at 1:1; pi e / (pi e + 1 - pi) at 1:10
    assert precision[0][2] == "0.7311" and precision[1][2] == format(math.e / (math.e + 10), ".4g")
    # the headline accuracy of pure DP, e/(1+e), is also the precision at 1:1: two questions, one number
    values = [(r[1], r[2]) for r in rows[1:]]
    assert len(values) == len(set(values)), rows
    assert not any(r[0].startswith("Epsilon") for r in rows)
    flat = " ".join(" ".join(r[0] for r in rows).split())
    assert (
        "Members found at 1% false alarms (TPR at FPR 0.01); also: success of an attack that succeeds 1%"
        in flat
    )


def test_risk_table_keeps_distinct_precisions(capsys) -> None:
    """DP-SGD's precision falls with the recall: every recall keeps its row."""
    args = ["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"]
    code = main(["risk", *args])
    out, _ = capsys.readouterr()
    assert code == 0
    para, rest = _blocks(out)
    assert para.startswith("Released: a result computed under DP-SGD with noise multiplier 1, sampling rate")
    assert "upper end of an interval" in para
    labels = [r[0] for r in _table_rows(rest) if r[0]]
    assert sum(lab.startswith("Precision") for lab in labels) == 12
    assert any(lab.startswith("Epsilon at delta 1e-05") for lab in labels)


def test_risk_human_title_shows_derived_parameters(capsys) -> None:
    code = main(["risk", "--gaussian-sigma", "4", "--sensitivity", "2"])
    out, _ = capsys.readouterr()
    assert code == 0
    flat = " ".join(out.split())
    assert "Certified risk: gaussian (sigma=4, sensitivity=2, mu=0.5; add_remove neighbours)" in flat


def test_risk_human_output_shows_the_lower_side_of_a_pld(capsys) -> None:
    """Lower beside Bound only where the two differ as printed; a coarse PLD shows it, a fine one not."""
    code = main(["risk", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10"])
    out, _ = capsys.readouterr()
    assert code == 0 and "Lower" not in out
    rows = [r for r in _table_rows(out) if r[0]]
    assert all(len(r) == 3 for r in rows)


def test_risk_rho_is_zcdp(capsys) -> None:
    res = _run_json(capsys, ["--rho", "0.125", "--delta", "1e-5"])
    assert res["mechanism"] == {"name": "zcdp", "rho": 0.125, "neighbours": "add_remove"}
    # rho-zCDP with rho = mu^2 / 2 is implied by mu-GDP: the RDP conversion is looser than 0.5-GDP's epsilon
    assert res["epsilon"] > 0 and res["advantage"] >= 2 * stats.norm.cdf(0.25) - 1 - 1e-9


def test_risk_plot(tmp_path, capsys) -> None:
    target = tmp_path / "risk.png"
    res = _run_json(capsys, ["--mu", "1", "--plot", str(target)])
    assert res["eta"] > 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_risk_plot_title_names_the_mechanism_not_the_accountant() -> None:
    """A figure's title states the mechanism in words, never the accountant's internal settings."""
    from mipkit.accounting import GDP, SubsampledGaussian, plot_tradeoff, tradeoff_curve

    pld = tradeoff_curve(SubsampledGaussian(1.1, 0.008, 100), value_discretization_interval=1e-3)
    assert "value_discretization_interval" in pld.describe()  # the curve records it; the title must not
    titles = [plot_tradeoff(c).get_suptitle() for c in (pld, tradeoff_curve(GDP(0.5)))]
    assert titles == [
        "Certified risk of DP-SGD with noise multiplier 1.1, sampling rate 0.008 and 100 steps "
        "(add_remove neighbours)",
        "Certified risk of mu = 0.5 Gaussian differential privacy (add_remove neighbours)",
    ]
    for title in titles:
        assert not any(w in title for w in ("value_discretization_interval", "tolerance", "side", "width"))


@pytest.mark.parametrize(
    "args",
    [
        [],  # no mechanism
        ["--epsilon", "1", "--mu", "1"],  # two mechanisms
        ["--gaussian-sigma", "1", "--laplace-scale", "1"],
        ["--epsilon", "-1"],
        ["--epsilon", "1", "--delta", "1"],
        ["--epsilon", "1", "--delta", "-0.1"],
        ["--mu", "-1"],
        ["--gaussian-sigma", "0"],
        ["--laplace-scale", "-2"],
        ["--mu", "1", "--sensitivity", "2"],
        ["--noise-multiplier", "1", "--sample-rate", "0", "--steps", "10"],
        ["--noise-multiplier", "1", "--sample-rate", "1.5", "--steps", "10"],
        ["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "0"],
        ["--noise-multiplier", "1", "--sample-rate", "0.1"],  # steps missing
        ["--sample-rate", "0.1", "--steps", "10"],  # noise multiplier missing
        ["--epsilon", "1", "--fpr", "0"],
        ["--epsilon", "1", "--fpr", "1"],
        ["--epsilon", "1", "--fpr", "1.5"],
        ["--epsilon", "1", "--base-rate", "0"],
        ["--epsilon", "1", "--baseline", "2"],
        ["--epsilon", "abc"],
        ["--epsilon", "1", "--neighbours", "swap"],
        ["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--tolerance", "0"],
        ["--rho", "-1"],
    ],
)
def test_risk_bad_input_exit_2(capsys, args: list[str]) -> None:
    code = main(["risk", *args])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert lines, "an error message is printed"
    if not args or args[-1] != "abc":  # our own errors: exactly one line
        assert len(lines) == 1 and lines[0].startswith("mipkit: error: ")


def test_risk_takes_dpsgd_as_batch_size_epochs_and_records(capsys) -> None:
    """Opacus's terms give the record DPSGDClassifier trains and accounts: q = B / N, T = E ceil(N / B)."""
    from mipkit.accounting import dpsgd_schedule
    from mipkit.trainers import DPSGDClassifier

    opacus = ["--noise-multiplier", "1.1", "--batch-size", "64", "--epochs", "30", "--n-records", "8000"]
    direct = ["--noise-multiplier", "1.1", "--sample-rate", "0.008", "--steps", "3750"]
    res = _run_json(capsys, opacus)
    assert res == _run_json(capsys, direct)
    assert res["mechanism"]["sample_rate"] == 0.008 and res["mechanism"]["steps"] == 3750
    # an uneven last batch: ceil(1000 / 64) = 16 steps an epoch, as the trainer plans them
    uneven = _run_json(capsys, [*opacus[:2], "--batch-size", "64", "--epochs", "3", "--n-records", "1000"])
    plan = DPSGDClassifier(batch_size=64, epochs=3, noise_multiplier=1.1).plan(1000)
    assert (uneven["mechanism"]["sample_rate"], uneven["mechanism"]["steps"]) == (0.064, 48)
    assert (plan["sample_rate"], plan["steps"]) == (0.064, 48) == dpsgd_schedule(64, 3, 1000)
