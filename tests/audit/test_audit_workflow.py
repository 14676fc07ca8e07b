"""End-to-end model audit on tiny data: the run folder, the result object, leak detection, resume, per-record
table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from mipkit import MipkitValueError
from mipkit.attacks import ltu_loss_game
from mipkit.data.io import Dataset
from mipkit.game.trainers import register_trainer
from mipkit.report import read_results
from mipkit.stats import clopper_pearson
from mipkit.workflows.audit import AuditConfig, audit
from mipkit.workflows.audit.measure import read_certificate
from mipkit.workflows.audit.result import vulnerability_table
from mipkit.workflows.audit.run import independent_halves


def tiny(n=120, seed=0) -> Dataset:
    X, y = make_classification(n, 6, n_informative=4, random_state=seed)
    return Dataset(X=X, y=y, feature_names=[f"x{i}" for i in range(6)], classes=np.array([0, 1]))


FOREST = {"model": "sklearn.ensemble.RandomForestClassifier", "params": {"n_estimators": 10}}
STRONG_L2 = {"model": "sklearn.linear_model.LogisticRegression", "params": {"C": 1e-4}}


@pytest.fixture(scope="module")
def forest_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("forest")
    cfg = AuditConfig(**FOREST, attacks=("loss", "lira", "rmia", "ltu"), n_models=4, seed=0, n_jobs=1)
    return out, audit(tiny(), cfg, run_dir=out)


def test_run_folder_and_schema(forest_run):
    out, res = forest_run
    for name in ("config.json", "results.json", "scores.parquet", "ledger.sqlite", "report.html"):
        assert (out / name).is_file(), name
    stored = read_results(out)
    assert stored["kind"] == "audit" and stored["schema_version"].startswith("1.")
    for key in ("auc", "tpr_at_fpr", "eta", "eta_ci", "attacks", "strongest_attack", "utility", "game"):
        assert key in stored
    assert set(stored["attacks"]) == {
        "loss",
        "lira-online",
        "lira-offline",
        "rmia-online",
        "rmia-offline",
        "ltu",
    }
    for name, a in stored["attacks"].items():
        if name == "ltu":
            assert 0 <= a["accuracy"] <= 1 and a["rounds"] > 0
            continue
        assert set(a["tpr_at_fpr"]) == {"0.001", "0.01", "0.1"}
        assert a["eta_ci"][0] <= a["eta"] <= a["eta_ci"][1]
        assert set(a["precision_at_base_rate"]) == {"1:1", "1:10", "1:100", "1:1000"}
    assert stored["game"]["trials"] == 4 * 120
    # top-level eta is the strongest attack's
    best = stored["attacks"][stored["strongest_attack"]]
    assert (
        stored["eta"]
        == best["eta"]
        == max(a["eta"] for a in stored["attacks"].values() if a["eta"] is not None)
    )
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "In plain words" in html
    assert json.loads((out / "config.json").read_text())["n_models"] == 4


def test_memorising_model_leaks_and_regularised_one_leaks_less(forest_run, tmp_path):
    _, forest = forest_run
    assert forest.auc > 0.6
    assert forest.eta_ci[0] > 0
    cfg = AuditConfig(**STRONG_L2, attacks=("loss", "lira", "rmia"), n_models=4, seed=0, n_jobs=1)
    weak = audit(tiny(), cfg, run_dir=tmp_path, report=False)
    assert weak.eta < forest.eta
    assert weak.eta_ci[0] < 0.08  # a heavily regularised model is close to chance


def test_utility_matches_direct_refit(forest_run):
    """Held-out accuracy is above chance and not above training accuracy (a random forest memorises)."""
    _, res = forest_run
    assert 0.5 < res.utility["accuracy_nonmembers"] <= res.utility["accuracy_members"] <= 1.0


def test_resume_reuses_every_fit(tmp_path):
    log = tmp_path / "fits.log"
    cfg = AuditConfig(
        model="mipkit.game.testing.SlowTrainer",
        params={"log_path": str(log), "C": 10.0},
        attacks=("loss",),
        n_models=4,
        seed=3,
        n_jobs=1,
    )
    first = audit(tiny(), cfg, run_dir=tmp_path / "run", report=False)
    assert len(log.read_text().splitlines()) == 4
    second = audit(tiny(), cfg, run_dir=tmp_path / "run", report=False)
    assert len(log.read_text().splitlines()) == 4  # nothing refitted
    assert second.eta == first.eta and second.auc == first.auc
    a, b = first.to_dict(), second.to_dict()
    assert a["provenance"].pop("date") <= b["provenance"].pop("date")  # when it ran; everything else equal
    assert a == b


def test_vulnerability_table_against_loops(forest_run):
    out, res = forest_run
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == 120 and scores["record"].tolist() == list(range(120))
    # recompute the membership of the targets and check one record's numbers by hand
    ss = np.random.SeedSequence(0)
    in_mask = independent_halves(120, 4, random_state=np.random.default_rng(ss.spawn(3)[0]))
    np.testing.assert_array_equal(scores["n_member_trials"], in_mask.sum(axis=0))
    assert (in_mask.sum(axis=1) == 60).all()
    s = np.arange(8.0).reshape(2, 4)
    m = np.array([[True, False, True, False], [True, True, False, False]])

    class _S:
        tpr_at_fpr = ()

    tab = vulnerability_table({"a": s}, {"a": _S()}, m, np.zeros(4, int), np.array(["c"]))
    assert tab.loc[0, "a_mean_in"] == 2.0  # record 0 member of both targets: (0 + 4) / 2
    assert tab.loc[1, "a_mean_in"] == 5.0 and tab.loc[1, "a_mean_out"] == 1.0
    assert np.isnan(tab.loc[3, "a_mean_in"]) and tab.loc[3, "a_mean_out"] == 5.0


def test_reference_set_does_not_reveal_the_target_membership():
    """Under leave-one-out, the number of IN references of a record must not depend on the target's label.

    Monte Carlo over 4000 records: the mean IN-reference count among members and among non-members of the
    target agree within 4 standard errors (with LiRA's balanced design they differ by exactly 1).
    """
    m = independent_halves(4000, 8, random_state=0)
    refs_in = m[1:].sum(axis=0)
    a, b = refs_in[m[0]], refs_in[~m[0]]
    se = np.sqrt(a.var() / a.size + b.var() / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se


def test_ltu_on_the_audit_fits_closed_cases():
    """The audit's LTU row comes from attacks.ltu.ltu_loss_game: a loss that separates members exactly gives
    accuracy 1 (privacy 0), the inverted one accuracy 0 (privacy 1); min(#members, #non-members) rounds."""
    in_mask = np.array([[True, True, False, False, True, False]])
    perfect = np.where(in_mask, 0.1, 2.0)
    res = ltu_loss_game(perfect, in_mask, random_state=0)
    assert res.accuracy.value == 1.0 and res.privacy == 0.0 and res.accuracy.trials == 3
    inverted = np.where(in_mask, 2.0, 0.1)
    res = ltu_loss_game(inverted, in_mask, random_state=0)
    assert res.accuracy.value == 0.0 and res.privacy == 1.0


def test_ltu_row_of_the_run_matches_its_game(forest_run):
    """results.json's ltu row is the game's pair accuracy with its exact interval, from raw counts."""
    out, res = forest_run
    row = read_results(out)["attacks"]["ltu"]
    game = res.games["ltu"]
    assert row["correct"] == game.accuracy.successes and row["rounds"] == game.accuracy.trials
    assert row["accuracy"] == row["correct"] / row["rounds"]
    assert row["accuracy_ci"] == list(clopper_pearson(row["correct"], row["rounds"], 0.95))
    # every pair is one member and one non-member of the same target model, each record used once per model
    table = game.per_record
    assert (res.in_mask[table["model"], table["defender"]]).all()
    assert (~res.in_mask[table["model"], table["reserve"]]).all()
    assert not table.duplicated(["model", "defender"]).any()
    assert row["rounds"] == sum(min(m.sum(), (~m).sum()) for m in res.in_mask[: res.config.n_targets])


@register_trainer
class CertifiedTrainer(ClassifierMixin, BaseEstimator):
    """A logistic regression that carries a (pretend) MIP certificate, for the certificate plumbing."""

    def __init__(self, eta=0.2, random_state=None):
        self.eta = eta
        self.random_state = random_state

    def fit(self, X, y):
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_

        class _Cert:
            eta = self.eta
            exact = False

        self.certificate_ = _Cert()
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


@register_trainer
class CurveCertifiedTrainer(CertifiedTrainer):
    """The certificate protocol with an f-DP trade-off curve: ``certificate_.to_dict()`` and
    ``certificate_.tradeoff_curve`` (mu-GDP)."""

    def __init__(self, eta=0.2, mu=1.0, random_state=None):
        super().__init__(eta=eta, random_state=random_state)
        self.mu = mu

    def fit(self, X, y):
        from mipkit.accounting import GaussianCurve

        super().fit(X, y)
        eta, curve = self.eta, GaussianCurve(self.mu)

        class _Cert:
            tradeoff_curve = curve

            def to_dict(self):
                return {"eta": eta, "exact": True, "relation": "replace-one"}

        self.certificate_ = _Cert()
        return self


def test_certificate_protocol_with_a_tradeoff_curve():
    from scipy.stats import norm

    from mipkit.game.trainers import resolve_trainer
    from mipkit.workflows.audit.measure import annotate_certificate

    spec = resolve_trainer(f"{__name__}.CurveCertifiedTrainer", {"eta": 0.3, "mu": 1.0})
    cert = read_certificate(spec, tiny(), np.arange(60), 0, (0.001, 0.01))
    assert cert["exact"] is True and cert["relation"] == "replace-one" and cert["tradeoff"] == "GaussianCurve"
    for f in (0.001, 0.01):  # 1 - f(alpha) = 1 - Phi(Phi^-1(1 - alpha) - mu)
        assert cert["tpr_bound"][f"{f:g}"] == pytest.approx(1 - norm.cdf(norm.ppf(1 - f) - 1.0), rel=1e-9)
    cert = annotate_certificate(cert, 120, (0.001, 0.01))
    assert "random half of a pool of 120 records" in cert["premise"] and cert["exactness"].startswith("exact")
    # without a curve the bound is FPR + 2 eta, and an estimated-sigma certificate says it is approximate
    plain = annotate_certificate({"eta": 0.1, "exact": False}, 50, (0.01,))
    assert plain["tpr_bound"]["0.01"] == pytest.approx(0.21) and plain["exactness"].startswith("approximate")


def test_certificate_is_read_from_the_trainer():
    from mipkit.game.trainers import resolve_trainer

    spec = resolve_trainer(f"{__name__}.CertifiedTrainer", {"eta": 0.15})
    ds = tiny()
    cert = read_certificate(spec, ds, np.arange(60), 0, (0.01,))
    assert cert["eta"] == 0.15 and cert["source"] == "CertifiedTrainer" and cert["exact"] is False
    # a plain trainer carries none (and is not even fitted for the probe)
    assert (
        read_certificate(resolve_trainer("sklearn.linear_model.LogisticRegression"), ds, np.arange(60), 0, ())
        is None
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("n_models", 5), ("n_models", 2), ("attacks", ("loss", "nope")), ("n_targets", 9), ("backend", "spark")],
)
def test_bad_config_is_refused(field, value):
    kwargs = {**FOREST, "n_models": 8, field: value}
    with pytest.raises(MipkitValueError):
        AuditConfig(**kwargs)


def test_too_few_records_per_class(tmp_path):
    ds = tiny()
    y = np.zeros(120, int)
    y[:3] = 1
    bad = Dataset(X=ds.X, y=y, feature_names=ds.feature_names, classes=np.array([0, 1]))
    with pytest.raises(MipkitValueError, match="at least 4 records"):
        audit(bad, AuditConfig(**FOREST, n_models=4, n_jobs=1), run_dir=tmp_path)
