"""AIM's refit in NumPy (:mod:`mipkit.synthesizers.aim_descent`) against ``mbi``'s mirror descent, the
reference: the same steps, the same estimate, a model that samples as ``mbi``'s."""

from __future__ import annotations

import numpy as np
import pytest

mbi = pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")


def _measurements(seed: int = 0):
    """A 5-column domain, ``b`` following ``a``; noisy 1-way, 2-way and 3-way marginals."""
    rng = np.random.default_rng(seed)
    sizes = [3, 4, 2, 5, 3]
    dom = mbi.Domain(list(range(5)), sizes)
    data = {i: rng.integers(0, n, 500) for i, n in enumerate(sizes)}
    data[1] = (data[0] + rng.integers(0, 2, 500)) % 4
    ds = mbi.Dataset(data, dom)

    def measure(cl, sd):
        x = np.asarray(ds.project(cl).datavector(), dtype=float)
        return mbi.LinearMeasurement(x + rng.normal(0, sd, x.size), cl, stddev=sd)

    first = [measure((i,), 5.0) for i in range(5)] + [measure((0, 1), 3.0), measure((1, 2), 3.0)]
    return dom, first, [*first, measure((2, 3, 4), 4.0), measure((0, 3), 2.0)]


def _tables(vector) -> dict:
    return {cl: np.asarray(vector.tables[cl].values, dtype=float) for cl in vector.cliques}


def _mbi_fits(iters: int):
    """``mbi``'s fit of the first measurements, and of all of them warm-started from it, in float64."""
    import jax
    from mbi.estimation import MirrorDescent

    dom, first, every = _measurements()
    with jax.enable_x64(True):
        cold = MirrorDescent().estimate(dom, first, iters=iters)
        warm = MirrorDescent().estimate(dom, every, iters=iters, warm_start=cold)
        return (_tables(cold.marginals), _tables(cold.potentials)), (
            _tables(warm.marginals),
            _tables(warm.potentials),
        )


def test_the_steps_are_mbis():
    """50 steps (one of mbi's blocks), cold and warm-started: the same potentials and marginals as
    ``mbi``'s in float64, to rounding: the same step sizes, the same steps taken and refused."""
    from mipkit.synthesizers.aim_descent import mirror_descent

    dom, first, every = _measurements()
    cold = mirror_descent(dom, first, 50)
    warm = mirror_descent(dom, every, 50, warm=cold)
    for mine, (marg, pots) in zip((cold, warm), _mbi_fits(50), strict=True):
        assert list(mine.cliques) == list(pots)
        for cl in pots:
            np.testing.assert_allclose(_tables(mine.potentials)[cl], pots[cl], rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(_tables(mine.marginals)[cl], marg[cl], rtol=1e-9)


def test_a_thousand_steps_give_mbis_estimate():
    """AIM's 1,000 steps: once a step's test of sufficient decrease is decided by rounding the paths may
    part, and they end at the same estimate, every cell within 1e-5 of the total (3e-6 here: the
    descent has not converged on cells driven towards 0, where the paths still differ)."""
    from mipkit.synthesizers.aim_descent import mirror_descent

    dom, first, every = _measurements()
    cold = mirror_descent(dom, first, 1000)
    warm = mirror_descent(dom, every, 1000, warm=cold)
    for mine, (marg, _) in zip((cold, warm), _mbi_fits(1000), strict=True):
        total = float(mine.total)
        for cl in marg:
            np.testing.assert_allclose(_tables(mine.marginals)[cl], marg[cl], rtol=0, atol=1e-5 * total)


def test_the_model_projects_and_samples_as_mbis():
    """The fitted model is ``mbi``'s ``MarkovRandomField``: a marginal it holds and one it eliminates
    variables for add up to its total, and it samples records of the domain."""
    from mipkit.synthesizers.aim_descent import mirror_descent

    dom, _, every = _measurements()
    model = mirror_descent(dom, every, 100)
    total = float(model.total)
    held = np.asarray(model.project((1, 2)).datavector(), dtype=float)
    reached = np.asarray(model.project((0, 4)).datavector(), dtype=float)  # no clique holds it
    assert held.sum() == pytest.approx(total) and reached.sum() == pytest.approx(total, rel=1e-5)
    sample = model.synthetic_data(rows=200).to_dict()
    assert all(len(sample[a]) == 200 and sample[a].max() < dom[a] for a in dom.attributes)
