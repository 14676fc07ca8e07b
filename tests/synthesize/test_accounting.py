"""The accounting composes exactly the steps that ran: checked against dp_accounting called directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dp_accounting import privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from mipkit.accounting import (
    Composed,
    EpsilonTarget,
    EtaTarget,
    SubsampledGaussian,
    eta_from_curve,
    tradeoff_curve,
)
from mipkit.accounting.heterogeneous import (
    HeterogeneousSubsampledGaussian,
    group_steps,
    heterogeneous_curve,
    heterogeneous_pld,
)
from mipkit.synthesizers.plan import Schedule, plan_run, schedule_weights

REL = privacy_accountant.NeighboringRelation


def _direct(ratios, q, relation, d=1e-3):
    """One dp_accounting PLD per step, composed step by step (no grouping)."""
    rel = REL.REPLACE_ONE if relation == "replace_one" else REL.ADD_OR_REMOVE_ONE
    out = None
    for z in ratios:
        one = pld_lib.from_gaussian_mechanism(
            standard_deviation=z,
            sensitivity=1.0,
            sampling_prob=q,
            value_discretization_interval=d,
            neighboring_relation=rel,
        )
        out = one if out is None else out.compose(one)
    return out


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_heterogeneous_record_matches_direct_composition(relation):
    ratios = [1.5, 1.5, 1.2, 1.2, 1.2, 0.9]
    rec = HeterogeneousSubsampledGaussian(groups=group_steps(ratios, sample_rate=0.2), neighbours=relation)
    assert rec.groups == ((1.5, 0.2, 2), (1.2, 0.2, 3), (0.9, 0.2, 1)) and rec.steps == 6
    ours, direct = heterogeneous_pld(rec), _direct(ratios, 0.2, relation)
    for eps in (0.0, 0.5, 1.0, 2.0):
        assert ours.get_delta_for_epsilon(eps) == pytest.approx(
            direct.get_delta_for_epsilon(eps), rel=1e-6, abs=1e-12
        )
    assert ours.get_epsilon_for_delta(1e-5) == pytest.approx(direct.get_epsilon_for_delta(1e-5), rel=1e-6)


def test_add_remove_record_equals_mipkit_dpsgd_composition():
    rec = HeterogeneousSubsampledGaussian(groups=((2.0, 0.1, 30), (1.5, 0.1, 20)))
    ours = heterogeneous_curve(rec)
    parts = [
        SubsampledGaussian(noise_multiplier=2.0, sample_rate=0.1, steps=30),
        SubsampledGaussian(noise_multiplier=1.5, sample_rate=0.1, steps=20),
    ]
    mine = tradeoff_curve(Composed(mechanisms=parts), value_discretization_interval=1e-3)
    assert ours.epsilon_for_delta(1e-5) == pytest.approx(mine.epsilon_for_delta(1e-5), rel=1e-9)
    assert ours.advantage() == pytest.approx(mine.advantage(), rel=1e-9)


def test_replace_one_is_riskier_than_add_remove():
    rec = HeterogeneousSubsampledGaussian(groups=((1.0, 0.05, 100),))
    add = heterogeneous_curve(rec, neighbours="add_remove")
    rep = heterogeneous_curve(rec, neighbours="replace_one")
    assert rep.epsilon_for_delta(1e-5) > add.epsilon_for_delta(1e-5)
    assert rep.advantage() > add.advantage()
    # MIP eta is always the replace-one curve's (the game replaces a record)
    assert eta_from_curve(rep) == pytest.approx(rep.advantage() / 2)


def test_record_round_trip_and_validation():
    rec = HeterogeneousSubsampledGaussian(groups=((2.0, 0.1, 3),), neighbours="replace_one")
    assert HeterogeneousSubsampledGaussian.from_dict(rec.to_dict()) == rec
    with pytest.raises(ValueError, match="noise_multiplier"):
        HeterogeneousSubsampledGaussian(groups=((0.0, 0.1, 3),))
    with pytest.raises(ValueError, match="neighbours"):
        HeterogeneousSubsampledGaussian(groups=((1.0, 0.1, 3),), neighbours="swap")


def test_schedule_and_plan_meet_the_target():
    w = schedule_weights(10, noise_decay=0.5, groups=5)
    assert w[0] == 1.0 and w[-1] == pytest.approx(0.5) and np.all(np.diff(w) <= 0)
    schedule = Schedule(delta=1e-5, neighbours="add_remove", sample_rate=0.1, steps=40, noise_decay=0.5)
    plan = plan_run(schedule, epsilon=2.0, target=None)
    rec = plan.record_for(40)
    assert rec.steps == 40 and len(rec.groups) == 8
    eps = heterogeneous_curve(rec).epsilon_for_delta(1e-5)
    assert eps <= 2.0 and eps > 1.9  # calibrated: meets the target, not far below it
    # fewer steps ran: the certificate composes only those
    assert heterogeneous_curve(plan.record_for(10)).epsilon_for_delta(1e-5) < eps


def test_eta_target_is_met_for_replace_one():
    schedule = Schedule(delta=1e-5, neighbours="add_remove", sample_rate=0.2, steps=20)
    plan = plan_run(schedule, epsilon=None, target=EtaTarget(0.1))
    assert plan.neighbours == "replace_one"
    eta = eta_from_curve(heterogeneous_curve(plan.record_for(20), neighbours="replace_one"))
    assert 0.095 < eta <= 0.1


@pytest.mark.torch
def test_tiny_run_certificate_composes_the_steps_that_ran():
    pytest.importorskip("torch")
    from mipkit.synthesizers.dpwgan import DPWGANGP

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.choice(["x", "y", "z"], size=60)})
    m = DPWGANGP(
        epsilon=2.0, n_generator=3, n_critic=2, sample_rate=0.25, critic_hidden=(8, 8), noise_decay=0.5,
        schedule_groups=3, random_state=1,
    ).fit(df)  # fmt: skip
    cert = m.certificate_
    ratios = np.repeat([1.0, 0.5**0.5, 0.5], 2) * cert.calibration["noise"]
    direct = _direct(ratios, 0.25, "add_remove")
    assert cert.epsilon["add_remove"] == pytest.approx(direct.get_epsilon_for_delta(1e-5), rel=1e-6)
    assert cert.epsilon["add_remove"] <= 2.0
    rep = _direct(ratios, 0.25, "replace_one")
    assert cert.epsilon["replace_one"] == pytest.approx(rep.get_epsilon_for_delta(1e-5), rel=1e-6)
    assert cert.details["steps_run"] == 6 and len(m.history_["sensitivity"]) == 6
    assert EpsilonTarget(delta=1e-5, value=2.0).name == cert.calibration["target"]
