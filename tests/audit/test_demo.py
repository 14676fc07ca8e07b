"""``mipkit demo --fast``: runs end to end and writes a before/after report whose numbers are consistent."""

from __future__ import annotations

import json

import numpy as np

from mipkit.cli import main
from mipkit.report import read_results


def test_demo_fast_writes_report(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--fast", "--models", "4", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (out / "report.html").is_file()
    html = (out / "report.html").read_text()
    assert "Before protection" in html and "After MIP noise" in html and "data:image/png;base64," in html
    demo = read_results(out)
    assert demo["kind"] == "demo"
    before, after = read_results(out / "before"), read_results(out / "after")
    assert payload["eta_before"] == before["eta"] and payload["eta_after"] == after["eta"]
    # the protected trainer carries its certificate, and the audit draws it
    assert after["certificate"]["eta"] == demo["certified_eta"] == 0.1
    assert before["certificate"] is None
    # the noisy model cannot be measured clearly above its certificate
    assert after["eta_ci"][0] <= 0.1
    assert 0.5 < payload["test_accuracy_before"] <= 1.0
    # rebuilding re-renders from the stored files
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.html").is_file()


def test_protected_trainer_adds_the_fixed_noise():
    """The demo's trainer releases coefficients whose spread over seeds matches the certificate's noise."""
    from sklearn.datasets import load_breast_cancer

    from mipkit.cli.demo import ProtectedLogisticRegression

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    sigma = [0.5] * (X.shape[1] + 1)
    fits = [
        ProtectedLogisticRegression(C=1.0, eta=0.1, sigma=sigma, random_state=s).fit(X, y) for s in range(30)
    ]
    released = np.array([np.r_[f.mip_.estimator_.coef_.ravel(), f.mip_.estimator_.intercept_] for f in fits])
    expected_sd = np.asarray(fits[0].certificate_.noise_std)
    # LogisticRegression (lbfgs) is deterministic, so the whole spread over seeds is the noise
    ratio = released.std(axis=0, ddof=1) / expected_sd
    assert 0.7 < np.median(ratio) < 1.3
    assert fits[0].certificate_.eta == 0.1
