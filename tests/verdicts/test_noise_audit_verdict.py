"""audit-noise intervals respect the design: guesses of one release share its noise draw and half, so the
interval is a cluster bootstrap over releases and targets (docs/theory.md section 11); the eta = 0 case (a
release independent of the data) raises few false alarms."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor

from mipkit.game.mip_game import mip_game
from mipkit.mechanisms.noise_samplers import ExpNormNoise
from mipkit.stats import clopper_pearson
from mipkit.workflows.audit_noise import AuditNoiseConfig, audit_noise
from mipkit.workflows.audit_noise.intervals import noise_intervals, replay_guesses


def test_replayed_rounds_match_mip_game():
    from mipkit.attacks.bayes import membership_posterior
    from mipkit.game.splits import random_halves

    rng = np.random.default_rng(0)
    halves = random_halves(12, 40, random_state=1)
    outputs = halves @ rng.normal(size=(12, 2)) / 6
    ref_h = random_halves(12, 60, random_state=2)
    ref_o = ref_h @ rng.normal(size=(12, 2)) / 6
    noise = ExpNormNoise(scale=0.4, weights=np.ones(2))
    targets = np.array([0, 3, 7])
    game = mip_game(
        outputs, halves, noise, attack=membership_posterior, targets=targets, n_releases=40,
        reference=(ref_o, ref_h), random_state=5, draw="sequential", batch_size=16,
    )  # fmt: skip
    correct = replay_guesses(
        outputs, halves, noise, targets=targets, n_releases=40, reference=(ref_o, ref_h),
        rng=np.random.default_rng(5), batch_size=16,
    )  # fmt: skip
    assert tuple(correct.sum(axis=0)) == game.correct


def test_cluster_interval_covers_when_releases_are_dependent():
    """Every release decides all targets at once (one shared coin): the pooled Clopper-Pearson interval on
    R * J guesses undercovers badly; the cluster interval keeps about its level."""
    rng = np.random.default_rng(0)
    R, J, reps = 60, 10, 120
    cover_cp = cover_cluster = 0
    for r in range(reps):
        shared = rng.random(R) < 0.5
        own = rng.random((R, J)) < 0.5
        correct = np.where(rng.random((R, J)) < 0.8, shared[:, None], own)  # accuracy 1/2, correlated rows
        lo, hi = clopper_pearson(int(correct.sum()), correct.size)
        cover_cp += lo <= 0.5 <= hi
        iv = noise_intervals(correct, n_boot=300, random_state=r)
        cover_cluster += iv["accuracy_ci"][0] <= 0.5 <= iv["accuracy_ci"][1]
        assert iv["design_effect"] > 2
    assert cover_cp / reps < 0.75
    assert cover_cluster / reps >= 0.88


N_NULL = 12


def test_eta_zero_release_false_alarms():
    """A release independent of the data (a constant model plus noise of an a-priori sigma): the attack's
    accuracy is 1/2, and the interval's lower end exceeds 1/2 in at most 2 of 12 audits (a 5% rate gives 2 or
    more with probability 0.12, 3 or more with 0.02)."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = X[:, 0]
    alarms = 0
    for seed in range(N_NULL):
        config = AuditNoiseConfig(
            model=DummyRegressor(strategy="constant", constant=0.0),
            eta=0.1,
            sigma=1.0,
            attributes=("constant_",),
            n_reference=20,
            n_releases=40,
            n_targets=4,
            seed=seed,
            n_boot=300,
        )
        out = audit_noise((X, y), config)
        iv = out.intervals
        assert iv["accuracy"] == pytest.approx(out.game.accuracy)
        alarms += iv["accuracy_ci"][0] > 0.5
        assert iv["verdict"] == "within the bound" and iv["bound"] == pytest.approx(0.6)
    assert alarms <= 2, alarms


def test_the_bootstrap_size_leaves_the_game_as_it_is():
    X = np.random.default_rng(1).normal(size=(24, 2))
    y = X @ np.array([1.0, -1.0]) + np.random.default_rng(2).normal(size=24)
    from sklearn.linear_model import LinearRegression

    config = AuditNoiseConfig(
        model=LinearRegression(), eta=0.2, n_reference=10, n_releases=20, n_targets=3, seed=4
    )
    r1 = audit_noise((X, y), config)
    r2 = audit_noise((X, y), config.replace(n_boot=200))
    assert r1.game.correct == r2.game.correct and r1.game.targets == r2.game.targets
    lo, hi = r2.intervals["accuracy_ci"]
    assert lo <= r2.game.accuracy <= hi and r2.intervals["n_boot"] == 200


def test_cli_audit_noise_reports_the_cluster_interval(tmp_path, capsys):
    import json

    import pandas as pd
    from sklearn.datasets import make_regression

    from mipkit.cli import main

    X, y = make_regression(40, 2, noise=5.0, random_state=0)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(tmp_path / "t.csv", index=False)
    args = ["audit-noise", "--data", str(tmp_path / "t.csv"), "--target", "y"]
    args += ["--model", "sklearn.linear_model.LinearRegression", "--eta", "0.2", "--n-reference", "20"]
    args += ["--n-releases", "20", "--n-targets", "3", "--seed", "0"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    iv = out["intervals"]
    assert iv["accuracy"] == pytest.approx(out["game"]["accuracy"])
    assert iv["accuracy_ci"][0] <= iv["accuracy"] <= iv["accuracy_ci"][1] and iv["bound"] == pytest.approx(
        0.7
    )
    assert main(args) == 0
    assert "cluster bootstrap over releases and targets" in " ".join(capsys.readouterr().out.split())
