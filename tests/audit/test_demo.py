"""``mipkit demo --fast``: runs end to end and writes a before/after report whose numbers are consistent.

The work is :func:`mipkit.workflows.demo.run_demo` (it prints nothing; stages and fits go to callbacks);
``mipkit demo`` only parses flags, draws and prints.
"""

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
    # ... and says what eta alone allows, its premise and that it is approximate (sigma estimated)
    assert any("up to 20% of the members with zero false alarms" in line for line in demo["summary"])
    assert after["certificate"]["exactness"].startswith("approximate")
    assert "random half of a pool" in after["certificate"]["premise"]
    assert "approximate certificate" in html and "No attack can lie above" not in html
    # what the demo teaches: the unprotected random forest leaks measurably (its eta interval excludes 0);
    # the protected model shows no leak an audit can tell from chance, cannot be measured above its
    # certificate, and costs a few points of test accuracy (the noise is drawn from OS entropy: every run)
    assert before["eta_ci"][0] > 0.05 and payload["eta_before_ci"] == before["eta_ci"]
    assert after["eta_ci"][0] <= 0 and after["eta_ci"][0] <= demo["certified_eta"]
    assert after["eta"] < before["eta_ci"][0]
    cost = payload["test_accuracy_before"] - payload["test_accuracy_after"]
    assert 0.9 <= payload["test_accuracy_before"] <= 1.0 and cost <= 0.06
    # the answer is one paragraph first, saying all of it
    headline = demo["summary"][0]
    assert headline.startswith("Audited: ") and "a measurable leak (its 95% interval excludes 0)" in headline
    assert "within its certificate eta <= 0.1" in headline and "Premise:" in headline
    # rebuilding re-renders from the stored files
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.html").is_file()


def test_protected_trainer_adds_the_fixed_noise():
    """The demo's trainer releases coefficients whose spread over seeds matches the certificate's noise."""
    from sklearn.datasets import load_breast_cancer

    from mipkit.workflows.demo import ProtectedLogisticRegression

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


def test_workflow_reports_through_callbacks_and_prints_nothing(tmp_path, capsys):
    from mipkit.report.plain_language import demo_guarantee_sentence
    from mipkit.workflows.demo import DEMO_ETA, DemoResult, run_demo

    said, fits = [], []
    res = run_demo(
        tmp_path / "d",
        fast=True,
        n_models=4,
        seed=1,
        progress=lambda s, d, t: said.append(s) if t == 0 else fits.append((s, d, t)),
    )
    assert capsys.readouterr() == ("", "")  # the library draws nothing
    assert isinstance(res, DemoResult) and res.report == tmp_path / "d" / "report.html"
    # four stages announced; the first is the eps = 1 sentence: eta = tanh(1/2) / 2 (docs/theory.md s. 3)
    assert len(said) == 4 and said[0] == res.summary[1] and res.summary[0].startswith("Audited: ")
    # eps = 1 DP under the usual add/remove relation: the MIP game's replacement is a removal and an addition,
    # eta = (1 - e^-1) / 2 (docs/theory.md sections 1 and 3; replace-one DP would give tanh(1/2) / 2 = 0.231)
    eta_eps1 = (1 - np.exp(-1.0)) / 2
    assert said[0] == demo_guarantee_sentence(1.0, eta_eps1)
    assert "81.6%" in said[0] and "0.316" in said[0]
    # each audit reports its 4 fits: (0, 4) first, (4, 4) last
    audit_fits = [(d, t) for s, d, t in fits if s == "model fits"]
    assert audit_fits.count((0, 4)) == 2 and audit_fits.count((4, 4)) == 2
    assert all(t == 4 for _, t in audit_fits)
    halves = [(d, t) for s, d, t in fits if s == "fits on random halves"]  # the spread's estimate
    assert halves[0] == (0, 20) and halves[-1] == (20, 20)
    stored = read_results(tmp_path / "d")
    for key in ("summary", "eta_before", "eta_after", "certified_eta", "n_models", "n_targets"):
        assert stored[key] == res.results[key]
    assert res.to_dict()["report"] == str(res.report) and stored["certified_eta"] == DEMO_ETA
    assert stored["n_models"] == 4 and stored["n_targets"] == 4
    assert "docs/theory.md" in res.summary[-1] and "MATH.md" not in " ".join(res.summary)
    assert "eta_before=" in repr(res)


def test_demo_refuses_zero_models(tmp_path, capsys):
    """``--models 0`` is bad input (exit 2, one line), refused before anything is written."""
    assert main(["demo", "--models", "0", "--out", str(tmp_path / "z"), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mipkit: error: ") and err.count("\n") == 1
    assert not (tmp_path / "z").exists()  # refused before anything was written
