"""AIM as published: the horizon of 16 d rounds, the rounds ending only when the budget does (spent
exactly), the target workload, and the rounds recorded in the fitted attributes and the synthesize result."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.synthesizers.aim_plan import candidates, schedule, workload
from mipkit.synthesizers.peers_mbi import cdp_delta, cdp_rho

mbi = pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """``b`` copies ``a`` 90% of the time; ``y`` (the target) follows ``c`` 80% of the time."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], n)
    b = np.where(rng.random(n) < 0.9, a, rng.choice(["p", "q", "r"], n))
    c = rng.choice(["u", "v"], n)
    y = np.where(rng.random(n) < 0.8, c, rng.choice(["u", "v"], n))
    return pd.DataFrame({"a": a, "b": b, "c": c, "y": np.where(y == "u", "yes", "no")})


def _aim(**kw):
    from mipkit.synthesizers.aim import AIMSynthesizer

    base = {"epsilon": 2.0, "iters": 50, "round_iters": 20, "random_state": 0, "noise_seed": 3}
    return AIMSynthesizer(**{**base, **kw})


@pytest.mark.parametrize(("rounds", "d"), [(48, 3), (64, 4), (240, 15)])
def test_without_halvings_the_rounds_number_the_horizon_less_the_one_way_share(rounds, d):
    """Each round spends rho / T and the 1-way marginals 0.9 d rho / T; the last round is the first that
    finds less than two rounds' worth left (independently: the first t with T - 0.9 d - (t - 1) < 2)."""
    rho = 0.37
    plan = schedule(rho, rounds, d, halves=lambda t: False)
    assert len(plan) == math.floor(rounds - 0.9 * d - 1) + 1
    spent = d * 0.9 * rho / rounds + sum(0.5 / s**2 + e**2 / 8 for s, e in plan)
    assert spent == pytest.approx(rho, rel=1e-12)
    assert plan[0][0] == pytest.approx(math.sqrt(rounds / (1.8 * rho)))


def test_a_fit_follows_the_budget_rule_and_spends_the_budget_exactly():
    """The rounds of a fit replay the budget rule with the fit's own halvings; the 1-way measurements and
    the rounds add up to the rho of (epsilon, delta), and converting that rho back gives delta."""
    synth = _aim().fit(_table())
    d, log = 4, synth.round_log_
    assert synth.horizon_ == 16 * d and synth.rounds_ == len(log) and log[-1]["last"]
    assert [r["round"] for r in log] == list(range(1, len(log) + 1))
    halved = {r["round"] for r in log if r["halved"]}
    plan = schedule(synth.rho_, synth.horizon_, d, halves=lambda t: t in halved)
    np.testing.assert_allclose([(r["sigma"], r["epsilon"]) for r in log], plan, rtol=1e-12)
    sigma0 = math.sqrt(16 * d / (1.8 * synth.rho_))
    total = d * 0.5 / sigma0**2 + sum(0.5 / r["sigma"] ** 2 + r["epsilon"] ** 2 / 8 for r in log)
    assert total == pytest.approx(synth.rho_used_, rel=1e-12)
    assert total == pytest.approx(cdp_rho(2.0, 1e-5), rel=1e-9)
    assert cdp_delta(total, 2.0) == pytest.approx(1e-5, rel=1e-6)
    assert len(synth.measured_) == d + len(log)


def test_the_rounds_run_past_a_short_horizon_only_as_the_budget_allows():
    """A horizon of d rounds: the 1-way marginals spend 90% of rho and the first round is the last."""
    synth = _aim(rounds=4).fit(_table())
    assert synth.rounds_ == 1 and synth.round_log_[0]["last"]
    assert synth.rho_used_ == pytest.approx(synth.rho_, rel=1e-12)
    with pytest.raises(MipkitValueError, match="at least the number of columns"):
        _aim(rounds=3).fit(_table())


def test_the_target_workload_is_the_triples_with_the_target():
    sizes = [3, 3, 2, 2]
    assert set(workload(sizes)) == {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}
    assert set(workload(sizes, target=3)) == {(0, 1, 3), (0, 2, 3), (1, 2, 3)}
    assert set(workload([3, 2], target=1)) == {(0, 1)}
    assert set(workload([200, 100, 2], target=2)) == {(0, 2), (1, 2)}  # the triple has 40,000 cells
    scores = candidates(workload(sizes, target=3))
    assert scores[(3,)] == 3 and scores[(0, 3)] == 5 and scores[(0, 1)] == 4 and scores[(0, 1, 3)] == 7


def test_aim_with_a_target_measures_triples_with_it_and_without_one_pairs_at_most():
    """With ``target="y"`` the rounds measure a triple with ``y`` and every triple measured contains it.
    Without a target the candidates are the pairs and single columns; on four columns, whose six pairs
    fit in the rounds, those include ``y``'s strong pair with ``c`` (on BankChurners' 20 columns the
    uniform workload's rounds measured no pair with the target)."""
    df = _table()
    plain = _aim().fit(df)
    assert max(len(r["clique"]) for r in plain.round_log_) == 2 and plain.target_cliques_ == []
    assert ["c", "y"] in [r["clique"] for r in plain.round_log_]
    with_y = _aim(target="y").fit(df)
    triples = [r["clique"] for r in with_y.round_log_ if len(r["clique"]) == 3]
    assert triples and all("y" in cl for cl in triples)
    assert with_y.target_cliques_ == [r["clique"] for r in with_y.round_log_ if "y" in r["clique"]]
    assert with_y.certificate_.details["workload"] == {
        "kind": "target triples",
        "target": "y",
        "marginals": 3,
    }
    with pytest.raises(MipkitValueError, match="'z' is not a column"):
        _aim(target="z").fit(df)


def test_the_synthesize_result_records_the_rounds_and_takes_the_target_from_params():
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    df = _table(200)
    params = {"iters": 30, "round_iters": 10, "target": "y"}
    res = synthesize(
        PrivateTable(df, _domain(df)),
        SynthesizeConfig(method="aim", epsilon=2.0, rows=50, noise_seed=1, params=params),
    )
    fit = res.to_dict()["fit"]
    assert fit["workload"]["target"] == "y" and fit["rounds"] == len(fit["round_log"]) > 0
    assert fit["target_cliques"] == [r["clique"] for r in fit["round_log"] if r["has_target"]]
    assert set(fit["round_log"][0]) >= {"clique", "sigma", "epsilon", "rho_used", "halved", "last"}
    frame = res.to_frame().set_index("quantity")["value"]
    assert frame["rounds"] == fit["rounds"] and frame["target_rounds"] == len(fit["target_cliques"])
    with pytest.raises(MipkitValueError, match="'params'"):  # MST takes no target
        synthesize(PrivateTable(df, _domain(df)), SynthesizeConfig(method="mst", params={"target": "y"}))


def _domain(df: pd.DataFrame) -> dict:
    from mipkit.synthesizers.preprocess import infer_domain

    return infer_domain(df)


def test_the_numpy_marginals_are_mbis():
    """AIM scores its candidates with marginals computed in NumPy (no XLA program per clique): they equal
    ``mbi``'s own, for cliques the model holds and for those it must eliminate variables to reach."""
    import itertools

    from mipkit.synthesizers.aim_marginals import model_marginals

    model = _aim(target="y").fit(_table()).model_
    cliques = [(2,), (1, 0), *itertools.combinations(range(4), 2), *itertools.combinations(range(4), 3)]
    cliques.append((0, 1, 2, 3))
    got = model_marginals(model, cliques)
    held = [cl for cl in cliques if model.marginals.supports(cl)]
    assert held and len(held) < len(cliques)  # both kinds
    for cl in cliques:
        want = np.asarray(model.project(cl).datavector(), dtype=float)
        np.testing.assert_allclose(got[cl], want, rtol=1e-4, atol=1e-6 * want.sum())
