"""OptimallySoftLabels and LabelSmoothing against direct computations (Pedersen ch. 5.3, eq. (5.15))."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_classification

from mipkit import MipkitValueError
from mipkit._random import check_random_state
from mipkit.defences import (
    LabelSmoothing,
    LeaveOutStatistics,
    OptimallySoftLabels,
    optimally_soft_targets,
)
from mipkit.trainers import SoftLogisticRegression, fit_many, one_hot


@pytest.fixture(scope="module")
def tiny():
    X, y = make_classification(30, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=1)
    return X, y + 10  # labels that are not 0..C-1


@pytest.fixture(scope="module")
def medium():
    X, y = make_classification(160, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=2)
    flip = np.random.default_rng(0).choice(160, 30, replace=False)
    y = y.copy()
    y[flip] = (y[flip] + 1) % 3
    return X, y


def _direct_statistics(X, y, n_splits, seed, C_reg=1.0):
    """Leave-out mean and sd computed the long way: the documented draws, one fit at a time, loops."""
    classes, codes = np.unique(y, return_inverse=True)
    rng = check_random_state(seed)
    n = y.size
    perms = [rng.permutation(n) for _ in range(n_splits)]
    seeds = rng.integers(0, 2**31 - 1, size=2 * n_splits)
    values = {i: [] for i in range(n)}
    for s, perm in enumerate(perms):
        halves = [np.sort(perm[: n // 2]), np.sort(perm[n // 2 :])]
        for h in (0, 1):
            train, out = halves[h], halves[1 - h]
            model = SoftLogisticRegression(C=C_reg, random_state=int(seeds[2 * s + h]))
            model.fit(X[train], one_hot(codes[train], classes.size))
            for i in out:
                z = X[i] @ model.coef_.T + model.intercept_
                values[i].append(z - z.mean())
    mean = np.array([np.mean(values[i], axis=0) for i in range(n)])
    sd = np.array([np.std(values[i], axis=0, ddof=1) for i in range(n)])
    assert all(len(values[i]) == n_splits for i in range(n))
    return codes, mean, sd


def test_leave_out_statistics_equal_a_direct_computation(tiny):
    X, y = tiny
    osl = OptimallySoftLabels("logistic", base_params={"C": 0.5}, n_splits=4, random_state=9)
    stats = osl.leave_out_statistics(X, y)
    _, mean, sd = _direct_statistics(X, y, 4, 9, C_reg=0.5)
    np.testing.assert_allclose(stats.mean, mean, atol=1e-10)
    np.testing.assert_allclose(stats.std, sd, atol=1e-10)
    np.testing.assert_allclose(stats.logits.sum(axis=2), 0.0, atol=1e-10)  # centred per sample


def test_alpha_zero_trains_on_the_softmax_of_the_leave_out_mean(tiny):
    X, y = tiny
    codes, mean, _ = _direct_statistics(X, y, 3, 4)
    osl = OptimallySoftLabels("logistic", alpha=0.0, n_splits=3, random_state=4).fit(X, y)
    final_seed = _final_seed(4, 3, y.size)
    direct = SoftLogisticRegression(random_state=final_seed).fit(X, softmax(mean, axis=1))
    np.testing.assert_allclose(osl.predict_proba(X), direct.predict_proba(X), atol=1e-10)
    assert np.array_equal(osl.classes_, [10, 11, 12]) and osl.alpha_ == 0.0
    assert set(np.unique(osl.predict(X))) <= {10, 11, 12}


def _final_seed(seed, n_splits, n):
    rng = check_random_state(seed)
    for _ in range(n_splits):
        rng.permutation(n)
    rng.integers(0, 2**31 - 1, size=2 * n_splits)
    return int(rng.integers(0, 2**31 - 1))


def test_targets_follow_eq_5_15_with_the_sign_of_sigma_star():
    rng = np.random.default_rng(0)
    mean, sd = rng.normal(size=(6, 4)), rng.uniform(0.1, 2.0, size=(6, 4))
    codes = np.array([0, 1, 2, 3, 0, 2])
    stats = LeaveOutStatistics(mean=mean, std=sd, logits=np.zeros((2, 6, 4)))
    for alpha in (0.0, 0.3, 1.0, 4.0):
        expected = np.empty((6, 4))
        for i in range(6):
            signed = np.array([sd[i, c] if c == codes[i] else -sd[i, c] for c in range(4)])
            z = mean[i] + alpha * signed
            expected[i] = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(optimally_soft_targets(stats, codes, alpha), expected, atol=1e-14)
    low, high = optimally_soft_targets(stats, codes, 0.0), optimally_soft_targets(stats, codes, 1.0)
    labelled = np.arange(6), codes
    assert np.all(high[labelled] > low[labelled])  # sigma* > 0 on the labelled class
    others = one_hot(codes, 4) == 0
    # every other logit moves down relative to the labelled one
    moved = np.log(high) - np.log(high[labelled])[:, None] - (np.log(low) - np.log(low[labelled])[:, None])
    assert np.all(moved[others] < 0)
    per_sample = optimally_soft_targets(stats, codes, np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0]))
    np.testing.assert_allclose(per_sample[::2], low[::2])
    np.testing.assert_allclose(per_sample[1::2], high[1::2])


def test_determinism_and_pickling(medium):
    X, y = medium
    a = OptimallySoftLabels(n_splits=3, random_state=5).fit(X, y)
    b = OptimallySoftLabels(n_splits=3, random_state=5).fit(X, y)
    c = OptimallySoftLabels(n_splits=3, random_state=6).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))
    assert np.array_equal(pickle.loads(pickle.dumps(a)).predict_proba(X), a.predict_proba(X))
    assert not any(
        isinstance(v, np.ndarray) and v.shape[:1] == (160,) for v in vars(a).values()
    )  # no per-record arrays are kept


def test_vectorised_defences_equal_one_at_a_time_fits(medium):
    X, y = medium
    rng = np.random.default_rng(1)
    subsets = [rng.choice(160, 80, replace=False) for _ in range(3)] + [np.arange(0, 160, 3)]
    seeds = [3, 4, 5, 6]
    osl = OptimallySoftLabels("logistic", alpha=0.5, n_splits=3)
    many = fit_many(osl, X, y, subsets, seeds)
    by_alpha = osl.fit_alphas(X, y, subsets, seeds, [0.0, 0.5, "validate"])
    for m, (rows, seed) in enumerate(zip(subsets, seeds, strict=True)):
        for a, alpha in enumerate([0.0, 0.5, "validate"]):
            alone = OptimallySoftLabels("logistic", alpha=alpha, n_splits=3, random_state=seed)
            alone.fit(X[rows], y[rows])
            np.testing.assert_allclose(by_alpha[a][m].predict_proba(X), alone.predict_proba(X), atol=1e-8)
            assert by_alpha[a][m].alpha_ == alone.alpha_
            if alpha == 0.5:
                np.testing.assert_allclose(many[m].predict_proba(X), alone.predict_proba(X), atol=1e-8)
    smooth = fit_many(LabelSmoothing("logistic", a=0.3), X, y, subsets, seeds)
    for rows, seed, model in zip(subsets, seeds, smooth, strict=True):
        alone = LabelSmoothing("logistic", a=0.3, random_state=seed).fit(X[rows], y[rows])
        np.testing.assert_allclose(model.predict_proba(X), alone.predict_proba(X), atol=1e-8)


def test_validated_and_per_sample_alpha(medium):
    X, y = medium
    grid = (0.0, 0.5, 1.0)
    val = OptimallySoftLabels(alpha="validate", alpha_grid=grid, n_splits=3, random_state=2).fit(X, y)
    assert val.alpha_ in grid and set(val.validation_scores_) == {"0", "0.5", "1"}
    best = max(val.validation_scores_.values())
    assert val.validation_scores_[f"{val.alpha_:g}"] == best
    same = OptimallySoftLabels(alpha=val.alpha_, n_splits=3, random_state=2).fit(X, y)
    np.testing.assert_allclose(val.predict_proba(X), same.predict_proba(X), atol=1e-12)
    per = OptimallySoftLabels(
        alpha="per-sample", alpha_grid=grid, n_splits=3, n_alpha_groups=2, random_state=2
    )
    per.fit(X, y)
    assert per.alpha_ is None and per.group_alphas_.shape == (2,) and per.group_edges_.shape == (1,)
    assert set(per.group_alphas_) <= set(grid) and 0 < per.group_edges_[0] < 1
    assert {"global", "group 0", "group 1"} == set(per.validation_scores_)


def test_label_smoothing_targets_and_a_zero_is_hard_training(medium):
    X, y = medium
    zero = LabelSmoothing("logistic", a=0.0, random_state=1).fit(X, y)
    hard = SoftLogisticRegression(random_state=1).fit(X, y)
    assert np.array_equal(zero.predict_proba(X), hard.predict_proba(X))
    smooth = LabelSmoothing("logistic", a=0.6, base_params={"C": 3.0}, random_state=1).fit(X, y)
    direct = SoftLogisticRegression(C=3.0).fit(X, 0.4 * one_hot(y, 3) + 0.2)
    np.testing.assert_allclose(smooth.predict_proba(X), direct.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": -0.1}, "'alpha' parameter"),
        ({"alpha": "best"}, "'alpha' parameter"),
        ({"alpha": True}, "'alpha' parameter"),
        ({"n_splits": 1}, "'n_splits' parameter"),
        ({"base": "sklearn.linear_model.LogisticRegression"}, "cannot learn from soft targets"),
        ({"base": "no.such.Trainer"}, "no.such.Trainer"),
        ({"base": 3}, "'base' parameter"),
        ({"base_params": [1]}, "'base_params' parameter"),
        ({"alpha_grid": [-1]}, "'alpha_grid' parameter"),
        ({"validation_fraction": 1.0}, "'validation_fraction' parameter"),
    ],
)
def test_bad_input_is_one_clear_error_at_construction(params, match):
    with pytest.raises(MipkitValueError, match=match):
        OptimallySoftLabels(**params)


def test_bad_fit_input(medium):
    X, y = medium
    with pytest.raises(MipkitValueError, match="hard labels"):
        OptimallySoftLabels(n_splits=2).fit(X, one_hot(y, 3))
    with pytest.raises(MipkitValueError, match="at least 4"):
        OptimallySoftLabels(n_splits=2).fit(X[:3], y[:3])
    with pytest.raises(MipkitValueError, match="two classes"):
        OptimallySoftLabels(n_splits=2).fit(X[y == 0], y[y == 0])
    with pytest.raises(MipkitValueError, match="'a' parameter"):
        LabelSmoothing(a=1.5)


@pytest.mark.parametrize("rare", [1, 2])
def test_a_class_missing_from_an_inner_half_is_refused_in_one_line(medium, rare):
    """A class absent from an inner half gets a leave-out logit wherever L-BFGS stopped; refused."""
    X, y = medium
    y = y.copy()
    y[y == 2] = 1
    y[:rare] = 2  # a rare class: one sample is always in one half only; two share a half half the time

    def rare_in_one_half(seed):  # the first split of the defence's plan cuts this permutation in two
        half_a = check_random_state(seed).permutation(y.size)[: y.size // 2]
        inside = np.isin(np.arange(rare), half_a)
        return inside.all() or not inside.any()

    seed = next(s for s in range(50) if rare_in_one_half(s))
    est = OptimallySoftLabels("logistic", alpha=1.0, n_splits=4, random_state=seed)
    with pytest.raises(MipkitValueError, match="leaves class index 2") as err:
        est.fit(X, y)
    assert "\n" not in str(err.value)
    with pytest.raises(MipkitValueError, match="leaves class index 2"):
        est.leave_out_statistics(X, y)
