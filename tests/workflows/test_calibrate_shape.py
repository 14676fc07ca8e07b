"""``mipkit.calibrate(NoiseFamily, CalibrateConfig) -> CalibrateResult``: the family and the config refuse
each bad value when built, the result's paragraph, dict, frame and files agree, and the noise found meets
the target against the optimal attack."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from mipkit import MipkitValueError
from mipkit.accounting import gaussian_family
from mipkit.workflows.calibrate import CalibrateConfig, CalibrateResult, NoiseFamily, calibrate


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"target": "accuracy"}, "must be one of"),
        ({"target": "eta", "value": 0.6}, "eta"),
        ({"target": "advantage", "value": 0.0}, "must be in \\(0, 1\\)"),
        ({"target": "tpr-at-fpr", "value": 0.1}, "needs fpr"),
        ({"target": "advantage", "value": 0.1, "fpr": 0.01}, "fpr applies only to target tpr-at-fpr"),
        ({"target": "epsilon", "value": 1.0}, "needs delta"),
        ({"target": "precision", "value": 0.5, "base_rate": 0.01}, "needs recall"),
        ({"tolerance": 0.0}, "'tolerance'"),
        ({"tolerance": 0.5}, "'tolerance'"),
    ],
)
def test_config_refuses_each_bad_setting_when_built_and_replaced(changes, words):
    with pytest.raises(MipkitValueError, match=words):
        CalibrateConfig(**changes)
    with pytest.raises(MipkitValueError, match=words):
        CalibrateConfig().replace(**changes)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"mechanism": "uniform"}, "'mechanism'"),
        ({"mechanism": "gaussian", "steps": 10}, "steps applies only to the dpsgd mechanism"),
        ({"mechanism": "laplace", "batch_size": 64}, "batch_size applies only"),
        ({"mechanism": "dpsgd", "steps": 10}, "missing sample_rate"),
        ({"mechanism": "dpsgd", "sample_rate": 0.1, "steps": 10, "sensitivity": 2.0}, "sensitivity does not"),
        ({"mechanism": "dpsgd", "sample_rate": 1.5, "steps": 10}, "sample_rate"),
        ({"mechanism": "dpsgd", "batch_size": 64, "epochs": 2}, "missing n_records"),
        ({"mechanism": "gaussian", "sensitivity": -1.0}, "sensitivity"),
        ({"mechanism": "gaussian", "neighbours": "swap"}, "neighbours"),
    ],
)
def test_family_refuses_each_bad_parameter_when_built(fields, words):
    with pytest.raises(MipkitValueError, match=words):
        NoiseFamily(**fields)


def test_dpsgd_in_opacus_terms_is_the_family_of_its_sample_rate_and_steps():
    family = NoiseFamily("dpsgd", batch_size=64, epochs=30, n_records=8000).family()
    assert family.params == {"sample_rate": 0.008, "steps": 3750, "neighbours": "add_remove"}


def test_calibrate_agrees_across_summary_dict_frame_and_files(tmp_path):
    config = CalibrateConfig(target="tpr-at-fpr", value=0.5, fpr=0.01)
    result = calibrate(NoiseFamily("gaussian", sensitivity=2.0), config)
    assert isinstance(result, CalibrateResult)
    d = result.to_dict()
    # Phi(Phi^-1(0.01) + 2 / sigma) = 0.5: sigma = 2 / -Phi^-1(0.01)
    assert d["noise"] == pytest.approx(2 / -stats.norm.ppf(0.01), rel=1e-10)
    assert d["mechanism"]["sigma"] == d["noise"] and d["details"]["fpr"] == 0.01
    assert result.summary().startswith(f"Use Gaussian noise standard deviation sigma = {d['noise']:.6g}")
    figures = result.to_frame().set_index("quantity")["value"]
    for key in ("noise", "target_value", "achieved", "achieved_fine", "seconds"):
        assert figures[key] == d[key]
    assert figures["fpr"] == d["details"]["fpr"] and figures["sensitivity"] == 2.0
    folder = result.write(tmp_path / "out")
    assert json.loads((folder / "calibration.json").read_text()) == json.loads(json.dumps(d))
    [table] = result.tables()
    assert table.title == "Calibration: gaussian, target tpr-at-fpr"
    assert table.rows[0] == ("Calibrated sigma", f"{d['noise']:.6g}")


def test_the_noise_found_meets_the_target_against_the_optimal_attack():
    """The attack: the likelihood-ratio test between N(0, sigma^2) and N(1, sigma^2) has advantage
    2 Phi(1 / (2 sigma)) - 1. At the calibrated sigma it is at most the target; a hair less noise breaks it.
    A family given as a MechanismFamily calibrates to the same noise."""
    config = CalibrateConfig(target="advantage", value=0.1)
    sigma = calibrate(NoiseFamily("gaussian"), config).calibration.noise

    def advantage(s: float) -> float:
        return 2 * stats.norm.cdf(1 / (2 * s)) - 1

    assert advantage(sigma) <= 0.1 < advantage(sigma * (1 - 1e-6))
    direct = calibrate(gaussian_family(), config)
    assert direct.calibration.noise == sigma and direct.family == "the Gaussian mechanism"
