"""The attack on ``mipkit protect``'s outputs: look for the statistics of the private data it computed.

With the default ``train_on="all"`` sigma is estimated from fits on halves of the private table. The same
``--seed`` reproduces those fits here, so every estimate is known: the per-coordinate sigma, the norm-level
``sigma_1``, the noise scale and standard deviations (sigma times a constant) and the fits themselves. Each is
searched for in the plain output, the ``--json`` output and the saved model file (as printed numbers and as
the bytes of a float64, both byte orders). The certificate must state first that the guarantee is
approximate because sigma was estimated from the private data, and the plain paragraph puts that premise
first; the values only with ``--include-estimates``.
"""

from __future__ import annotations

import json
import struct

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from mipkit.cli import main
from mipkit.mechanisms import MIPNoise

SEED, FITS = 5, 12


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(1).choice(len(X), 150, replace=False)
    df = pd.DataFrame(X[rows][:, :5], columns=list("abcde"))
    df = (df - df.mean()) / df.std()
    df["label"] = y[rows]
    path = tmp_path_factory.mktemp("leak") / "t.csv"
    df.to_csv(path, index=False)
    return path, df


def _estimates(df):
    """The statistics of the private data that ``protect --seed SEED`` computes (same fits and bootstrap)."""
    X, y = df[list("abcde")].to_numpy(), df["label"].to_numpy()
    m = MIPNoise(LogisticRegression(), eta=0.1, n_estimates=FITS, random_state=SEED, noise_seed=0).fit(X, y)
    c = m.certificate_
    assert c.estimated and not c.exact
    scalars = [c.sigma_1, c.noise_scale, c.noise_std_rms]
    return np.r_[c.sigma, c.noise_std, scalars, m.half_outputs_.ravel()], np.r_[c.sigma, c.noise_std, scalars]


def _printed(values, text):
    forms = ("{!r}", "{:.4g}", "{:.6g}")
    return [v for v in values if any(f.format(float(v)) in text for f in forms)]


def _in_bytes(values, blob):
    return [v for v in values if struct.pack("<d", v) in blob or struct.pack(">d", v) in blob]


def _run(table_path, tmp_path, capsys, *extra):
    out = tmp_path / "m.joblib"
    argv = [
        "protect", "--data", str(table_path), "--target", "label",
        "--model", "sklearn.linear_model.LogisticRegression", "--eta", "0.1",
        "--n-estimates", str(FITS), "--seed", str(SEED), "--out", str(out), *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    return capsys.readouterr().out, out.read_bytes(), joblib.load(out)


def test_default_outputs_hold_no_estimate_and_say_the_premise_first(table, tmp_path, capsys):
    path, df = table
    every, shown = _estimates(df)
    plain, blob, model = _run(path, tmp_path, capsys)
    assert plain.lstrip().startswith("Released: a LogisticRegression model trained on 150 records")
    premise = " ".join(plain.split()).split("Premise: ", 1)[1]
    assert premise.startswith("sigma, the spread of the parameters that the noise is calibrated to, was")
    assert "a heuristic, not a guarantee" in premise.split(";")[1]  # train_on="all": fits on training rows
    assert "withheld" in plain
    assert not _printed(shown, plain), "estimates printed"
    assert not _in_bytes(every, blob), "estimates or fits on halves in the saved model"
    for name in ("half_outputs_", "half_masks_", "train_indices_", "noise_"):
        assert not hasattr(model, name), name
    assert model.certificate_.estimates_withheld and model.certificate_.sigma is None
    assert model.predict(df[list("abcde")].to_numpy()).shape == (150,)

    text, blob, _ = _run(path, tmp_path, capsys, "--json")
    cert = json.loads(text)
    assert cert["guarantee"].startswith("Approximate, because sigma was estimated from the private data")
    assert "heuristic" in cert["guarantee"]  # train_on="all": the fits ran on the training data itself
    assert cert["estimates_withheld"] is True and cert["sigma"] is None and cert["noise_std"] is None
    assert not _printed(shown, text) and not _in_bytes(every, blob)


def test_estimates_only_when_asked(table, tmp_path, capsys):
    path, df = table
    every, shown = _estimates(df)
    text, blob, model = _run(path, tmp_path, capsys, "--json", "--include-estimates")
    cert = json.loads(text)
    assert cert["estimates_withheld"] is False
    assert np.allclose(cert["sigma"], shown[:6])
    fits = every[len(shown) :]
    assert not _in_bytes(fits, blob)  # the fits on halves never leave the process
    assert not hasattr(model, "half_outputs_") and not hasattr(model, "train_indices_")


def test_a_priori_sigma_withholds_nothing(table, tmp_path, capsys):
    path, _ = table
    text, _, model = _run(path, tmp_path, capsys, "--json", "--sigma", "0.5", "--train-on", "half")
    cert = json.loads(text)
    assert cert["exact"] and cert["estimates_withheld"] is False and cert["sigma"] == [0.5] * 6
    assert not hasattr(model, "train_indices_")  # the secret half is not published


def _noise_audit(path, capsys, *extra):
    argv = [
        "audit-noise", "--data", str(path), "--target", "label",
        "--model", "sklearn.linear_model.LogisticRegression", "--eta", "0.2", "--n-reference", str(FITS),
        "--n-releases", "5", "--n-targets", "2", "--seed", str(SEED), "--json", *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    return capsys.readouterr().out


def test_audit_noise_json_holds_no_estimate_unless_asked(table, capsys):
    """``audit-noise --seed SEED`` estimates sigma from fits on halves of the private table; the same seed
    reproduces every estimate (the library's verb, asked to keep them). The default JSON holds none of
    them; ``--include-estimates`` prints them."""
    from mipkit.workflows.audit_noise import AuditNoiseConfig, audit_noise

    path, df = table
    config = AuditNoiseConfig(
        eta=0.2, n_reference=FITS, n_releases=5, n_targets=2, seed=SEED, include_estimates=True
    )
    c = audit_noise((df[list("abcde")].to_numpy(), df["label"].to_numpy()), config).certificate
    assert c.estimated and not c.exact
    shown = np.r_[c.sigma, c.noise_std, [c.sigma_1, c.noise_scale, c.noise_std_rms]]

    text = _noise_audit(path, capsys)
    cert = json.loads(text)["certificate"]
    assert cert["estimates_withheld"] is True and cert["sigma"] is None and cert["noise_std"] is None
    assert cert["noise_law"]["scale"] is None
    assert not _printed(shown, text), "estimates printed"

    asked = json.loads(_noise_audit(path, capsys, "--include-estimates"))["certificate"]
    assert asked["estimates_withheld"] is False
    np.testing.assert_allclose(asked["sigma"], c.sigma)
