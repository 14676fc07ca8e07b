"""Every verb reports to the one progress protocol: ``progress(stage, done, total)`` with a named stage,
``0 <= done <= total``, ``done`` never falling within a run of a stage and a last call with ``done == total``
(an uncounted stage is announced once with ``done == total == 0``). ``train_private``'s DP-SGD steps:
``tests/trainers/test_train_progress.py``; ``mipkit demo``'s stages: ``tests/audit/test_demo.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mipkit
from mipkit.data import Dataset


class Recorder:
    """A :class:`mipkit._progress.Progress` that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        return [s for s, _, _ in self.calls]


def check_protocol(rec: Recorder, *expected: str) -> None:
    """The calls obey the protocol, run by run of a stage, and the ``expected`` stages were reported."""
    assert rec.calls, "progress was never called"
    runs: list[list[tuple[str, int, int]]] = []
    for call in rec.calls:
        stage, done, total = call
        assert isinstance(stage, str) and stage.strip(), call
        assert isinstance(done, int | np.integer) and isinstance(total, int | np.integer), call
        assert 0 <= done <= total, call
        if runs and runs[-1][-1][0] == stage and done >= runs[-1][-1][1] and total == runs[-1][-1][2]:
            runs[-1].append(call)
        else:
            runs.append([call])
    for run in runs:
        assert run[-1][1] == run[-1][2], f"the stage {run[0][0]!r} ends at {run[-1]}, not at its total"
    for stage in expected:
        assert stage in rec.stages(), (stage, sorted(set(rec.stages())))


def _arrays(n: int = 60, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return Dataset(X=X, y=y, feature_names=["a", "b", "c"], classes=np.array(["no", "yes"]))


def test_audit_counts_its_model_fits(tmp_path):
    rec = Recorder()
    config = mipkit.AuditConfig(
        model="sklearn.linear_model.LogisticRegression", attacks=("loss",), n_models=4, n_jobs=1, n_boot=100
    )
    mipkit.audit(_arrays(), config, run_dir=tmp_path / "run", progress=rec, report=False)
    check_protocol(rec, "model fits")
    assert rec.calls[-1] == ("model fits", 4, 4)


def test_audit_fitted_counts_its_reference_fits(tmp_path):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(80, 3)), columns=list("abc"))
    df["label"] = (df.a + rng.normal(size=80) > 0).astype(int)
    model = LogisticRegression().fit(df[:40][list("abc")], df[:40]["label"])
    rec = Recorder()
    config = mipkit.AuditFittedConfig(target="label", n_reference=2, n_jobs=1, n_boot=100)
    mipkit.audit_fitted(mipkit.FittedRelease(model, df[:40], df[40:]), config, progress=rec)
    check_protocol(rec, "reference fits")


def test_audit_noise_counts_reference_and_game_fits():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(24, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=24)
    rec = Recorder()
    config = mipkit.AuditNoiseConfig(
        model=LinearRegression(), eta=0.2, n_reference=6, n_releases=4, n_targets=2, n_boot=100, seed=4
    )
    mipkit.audit_noise((X, y), config, progress=rec)
    check_protocol(rec, "reference fits", "game fits")
    assert ("reference fits", 6, 6) in rec.calls and ("game fits", 4, 4) in rec.calls


def test_audit_one_run_reports_its_training_run():
    rec = Recorder()
    config = mipkit.AuditOneRunConfig(model="sklearn.tree.DecisionTreeClassifier", canaries=20, seed=1)
    mipkit.audit_one_run(_arrays(200), config, progress=rec)
    check_protocol(rec, "training run")


def test_audit_scores_counts_its_steps():
    from mipkit.workflows.audit_scores import ModelOutputs, Predictions

    rng = np.random.default_rng(0)
    member = rng.integers(0, 2, 100)
    p = np.clip(0.5 + 0.2 * member + rng.normal(0, 0.1, 100), 0.01, 0.99)
    data = Predictions(np.ones(100, int), member, ModelOutputs(proba=np.c_[1 - p, p]))
    rec = Recorder()
    mipkit.audit_scores(data, mipkit.AuditScoresConfig(n_boot=100), progress=rec)
    check_protocol(rec, "audit steps")
    assert rec.calls[-1] == ("audit steps", 3, 3)


def test_audit_synthetic_reports_each_stage():
    rng = np.random.default_rng(0)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({"age": rng.integers(18, 80, n), "sex": rng.choice(["F", "M"], n)})

    data = mipkit.SyntheticRelease(table(60), table(60), holdout=table(60))
    config = mipkit.AuditSyntheticConfig(secrets=["sex"], n_attacks=20, n_jobs=1, n_bootstrap=20)
    rec = Recorder()
    mipkit.audit_synthetic(data, config, progress=rec)
    check_protocol(rec, "NNAA neighbour searches", "DCR", "attribute inference")


def test_calibrate_and_risk_report_one_unit():
    rec = Recorder()
    mipkit.calibrate(mipkit.NoiseFamily("gaussian"), mipkit.CalibrateConfig(), progress=rec)
    mipkit.risk(mipkit.Guarantee(epsilon=1.0), mipkit.RiskConfig(), progress=rec)
    check_protocol(rec, "noise calibration", "risk accounting")


def test_protect_counts_its_fits_on_halves():
    data = _arrays()
    rec = Recorder()
    mipkit.protect((data.X, data.y), mipkit.ProtectConfig(eta=0.1, n_estimates=5, seed=1), progress=rec)
    check_protocol(rec, "fits on random halves")
    assert rec.calls[-1] == ("fits on random halves", 5, 5)


def test_synthesize_counts_the_optimisation_steps():
    pytest.importorskip("mbi")
    from mipkit.workflows.synthesize import PrivateTable

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(18, 80, 200), "city": rng.choice(["a", "b"], 200)})
    domain = {
        "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
        "city": {"type": "categorical", "categories": ["a", "b"]},
    }
    rec = Recorder()
    config = mipkit.SynthesizeConfig(epsilon=1.0, rows=20, params={"iters": 50})
    mipkit.synthesize(PrivateTable(table, domain), config, progress=rec)
    check_protocol(rec, "MST optimisation steps")


def test_the_checker_catches_a_stage_that_never_finishes_or_falls_back():
    """The attack on the protocol: a bar left at 2/3, or one that runs backwards, fails the check."""
    rec = Recorder()
    rec.calls = [("fits", 0, 3), ("fits", 2, 3)]
    with pytest.raises(AssertionError, match="not at its total"):
        check_protocol(rec)
    rec.calls = [("fits", 0, 3), ("fits", 4, 3)]
    with pytest.raises(AssertionError):
        check_protocol(rec)
