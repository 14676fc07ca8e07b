"""``mipkit.risk(Guarantee, RiskConfig) -> RiskResult``: the guarantee and the config refuse each bad value
when built, and the result's paragraph, dict, frame and files agree."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting import GDP, PureDP, SubsampledGaussian
from mipkit.workflows.risk import Guarantee, RiskConfig, RiskResult, risk


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"fprs": ()}, "at least one"),
        ({"fprs": (0.0,)}, "'fpr'"),
        ({"fprs": (0.01, 1.0)}, "'fpr'"),
        ({"baselines": (1.5,)}, "'baseline'"),
        ({"base_rates": (0.0,)}, "'base_rate'"),
        ({"recalls": (0.0,)}, "'recall'"),
        ({"tolerance": 0.0}, "'tolerance'"),
        ({"tolerance": 1.0}, "'tolerance'"),
        ({"tolerance": math.nan}, "'tolerance'"),
    ],
)
def test_config_refuses_each_bad_setting_when_built_and_replaced(changes, words):
    with pytest.raises(MipkitValueError, match=words):
        RiskConfig(**changes)
    with pytest.raises(MipkitValueError, match=words):
        RiskConfig().replace(**changes)  # replace() checks again


def test_config_normalises_lists_to_tuples():
    cfg = RiskConfig(fprs=[0.05], baselines=0.2)
    assert cfg.fprs == (0.05,) and cfg.baselines == (0.2,)
    assert cfg.to_dict()["fprs"] == [0.05]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({}, "Give one mechanism"),
        ({"epsilon": 1.0, "mu": 1.0}, "exactly one mechanism; got epsilon and mu"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "sensitivity": 2.0}, "sensitivity"),
        ({"gaussian_sigma": 0.0}, "sigma"),
        ({"mu": 1.0, "neighbours": "swap"}, "neighbours"),
        ({"noise_multiplier": 1.0, "sample_rate": 0.1}, "missing steps"),
        ({"sample_rate": 0.1, "steps": 10}, "needs noise_multiplier"),
        ({"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 10, "batch_size": 64}, "not both"),
        ({"noise_multiplier": 1.0, "batch_size": 64, "epochs": 3}, "missing n_records"),
        ({"noise_multiplier": 1.0, "batch_size": 64, "epochs": 3, "n_records": 10}, "at most the number"),
        ({"record": "GDP(1)"}, "mechanism record"),
        ({"record": GDP(1.0), "neighbours": "replace_one"}, "add_remove neighbours"),
    ],
)
def test_guarantee_refuses_each_bad_mechanism_when_built(fields, words):
    with pytest.raises(MipkitValueError, match=words):
        Guarantee(**fields)


def test_dpsgd_in_opacus_terms_is_the_record_of_its_sample_rate_and_steps():
    opacus = Guarantee(noise_multiplier=1.1, batch_size=64, epochs=30, n_records=8000)
    assert opacus.mechanism() == SubsampledGaussian(1.1, 0.008, 3750)
    assert opacus.mechanism() == Guarantee(noise_multiplier=1.1, sample_rate=0.008, steps=3750).mechanism()


def test_risk_of_a_guarantee_agrees_across_summary_dict_frame_and_files(tmp_path):
    result = risk(Guarantee(epsilon=1.0), RiskConfig(fprs=(0.01, 0.1)))
    assert isinstance(result, RiskResult) and result.mechanism == PureDP(1.0)
    d = result.to_dict()
    assert d["mechanism"] == {"name": "pure_dp", "epsilon": 1.0, "neighbours": "add_remove"}
    assert set(d["tpr_at_fpr"]) == {"0.01", "0.1"}
    # add/remove (1, 0)-DP: advantage (e - 1) / (e + 1), the in-or-out accuracy e / (1 + e) = 73.1%
    assert d["advantage"] == pytest.approx((math.e - 1) / (math.e + 1))
    assert "right at most 73.1% of the time" in result.summary()
    frame = result.to_frame().set_index("risk")
    assert list(frame.columns) == ["neighbours", "bound", "lower"]
    headline = f"Accuracy telling whether a person is in the data (advantage {d['advantage']:.4f})"
    assert frame.index[0] == headline and frame.loc[headline, "bound"] == 0.5 + d["advantage"] / 2
    secondary = f"Accuracy if the attacker also knows how many records there are (MIP eta {d['eta']:.4f})"
    assert frame.loc[secondary, "bound"] == d["accuracy"]
    tpr = (
        "Members found at 1% false alarms (TPR at FPR 0.01); also: success of an attack that succeeds 1% of "
        "the time without it"
    )
    assert frame.loc[tpr, "bound"] == d["tpr_at_fpr"]["0.01"]
    assert frame.loc[tpr, "neighbours"] == "add_remove"
    folder = result.write(tmp_path / "out")
    assert json.loads((folder / "risk.json").read_text()) == json.loads(json.dumps(d))
    assert (folder / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    [table] = result.tables()
    assert table.title == "Certified risk: pure_dp (epsilon=1; add_remove neighbours)"
    assert len(table.rows) == len(frame)


def test_a_mechanism_record_is_a_guarantee_and_the_bound_is_the_optimal_test():
    """The attack the bound is about: for mu-GDP the likelihood-ratio test between N(0, 1) and N(mu, 1)
    reaches TPR Phi(Phi^-1(a) + mu) at FPR a; the certified TPR is exactly that, never below it."""
    by_record = risk(GDP(0.5), RiskConfig(fprs=(0.01,)))
    by_fields = risk(Guarantee(mu=0.5), RiskConfig(fprs=(0.01,)))
    assert by_record.profile == by_fields.profile
    optimal = stats.norm.cdf(stats.norm.ppf(0.01) + 0.5)
    assert by_record.profile["tpr_at_fpr"]["0.01"] == pytest.approx(optimal, rel=1e-9)
