"""``audit_noise(data, config) -> AuditNoiseResult``: every rule of the config, the result's four views
agreeing, and the paragraph for a DPIA (the measured accuracy of the optimal attack against the bound)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from mipkit._validation import MipkitValueError
from mipkit.report.dpia import audit_noise_paragraph
from mipkit.workflows.audit_noise import AuditNoiseConfig, AuditNoiseResult, audit_noise

SMALL = {"model": LinearRegression(), "eta": 0.2, "n_reference": 8, "n_releases": 6, "n_targets": 2}
SMALL["seed"] = 4


def _pool(n: int = 24) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 2))
    return X, X @ np.array([1.0, -1.0]) + rng.normal(size=n)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"n_reference": 1}, "n_reference"),
        ({"n_releases": 0}, "n_releases"),
        ({"n_targets": 0}, "n_targets"),
        ({"n_boot": 1}, "n_boot"),
        ({"targets": []}, "targets"),
        ({"targets": [-1]}, "targets"),
        ({"targets": "ab"}, "targets"),
        ({"eta": 0.6}, "eta"),
        ({"calibration": "magic"}, "calibration"),
        ({"sigma": "x"}, "sigma"),
        ({"attributes": ""}, "attributes"),
        ({"seed": -3}, "seed"),
        ({"model": "subprocess.Popen"}, "subprocess.Popen"),
    ],
)
def test_each_rule_of_the_config_refuses_a_bad_value(changes, match):
    with pytest.raises(MipkitValueError, match=match):
        AuditNoiseConfig(**changes)


def test_replace_checks_again_and_targets_are_normalised():
    config = AuditNoiseConfig(targets=np.array([3, 1]))
    assert config.targets == (3, 1)
    with pytest.raises(MipkitValueError, match="n_releases"):
        config.replace(n_releases=0)


@pytest.mark.parametrize(
    ("changes", "match"),
    [({"n_targets": 25}, "at most the 24 records"), ({"targets": (24,)}, "names row 24")],
)
def test_the_targets_must_be_records_of_the_pool(changes, match):
    with pytest.raises(MipkitValueError, match=match):
        audit_noise(_pool(), AuditNoiseConfig(**{**SMALL, **changes}))


def test_the_views_agree_and_write_saves_the_results(tmp_path):
    result = audit_noise(_pool(), AuditNoiseConfig(**SMALL))
    assert isinstance(result, AuditNoiseResult)
    d = result.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["summary"] == result.summary() and d["n_records"] == 24
    assert d["certificate"]["estimates_withheld"] is True and d["certificate"]["sigma"] is None
    frame = result.to_frame().set_index("target")
    game = d["game"]
    assert frame.loc["all", "accuracy"] == game["accuracy"] and frame.loc["all", "trials"] == 12
    assert [frame.loc["all", "cluster_ci_low"], frame.loc["all", "cluster_ci_high"]] == d["intervals"][
        "accuracy_ci"
    ]
    for row in game["per_target"]:
        assert frame.loc[str(row["target"]), "correct"] == row["correct"]
    folder = result.write(tmp_path / "run")
    saved = json.loads((folder / "results.json").read_text())
    assert saved["kind"] == "audit-noise" and saved["game"] == game and saved["summary"] == d["summary"]


def test_the_paragraph_sets_the_measurement_against_the_bound():
    result = audit_noise(_pool(), AuditNoiseConfig(**SMALL))
    text = result.summary()
    iv = result.intervals
    assert text.startswith("Audited: MIP noise (mipkit-gaussian, eta = 0.2) on a LinearRegression model")
    assert "6 releases" in text and "the 2 most exposed records" in text
    lo, hi = iv["accuracy_ci"]
    assert f"95% interval {100 * lo:.3g}% to {100 * hi:.3g}%" in text
    assert "against the certificate's bound of 70% and 50% by guessing" in text
    assert "the measurement is within the bound" in text
    premise = text.split("Premise: ", 1)[1]
    assert premise.startswith("sigma, the spread of the parameters that the noise is calibrated to, was")
    assert "can show the calibration wrong but not prove it right" in premise

    above = result.to_dict()
    above["intervals"] = {**iv, "accuracy": 0.9, "accuracy_ci": [0.8, 0.95], "verdict": "above the bound"}
    assert "the measurement is ABOVE the bound" in audit_noise_paragraph(above)
    exact = AuditNoiseConfig(**{**SMALL, "sigma": 0.5})
    assert "given a priori" in audit_noise(_pool(), exact).summary().split("Premise: ", 1)[1][:40]


def test_the_command_prints_the_paragraph_first(tmp_path, capsys):
    from mipkit.cli import main

    X, y = _pool(40)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(tmp_path / "t.csv", index=False)
    args = ["audit-noise", "--data", str(tmp_path / "t.csv"), "--target", "y", "--eta", "0.2"]
    args += ["--model", "sklearn.linear_model.LinearRegression", "--n-reference", "8", "--n-releases", "6"]
    args += ["--n-targets", "2", "--seed", "0"]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Audited: MIP noise (mipkit-gaussian, eta = 0.2) on a LinearRegression model")
    assert out.index("Premise:") < out.index("Optimal attack on MIP noise")
