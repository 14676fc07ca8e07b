"""The defences over a DP-SGD network (the thesis's setting): vectorised fits equal one-at-a-time fits."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from mipkit.defences import LabelSmoothing, OptimallySoftLabels
from mipkit.trainers import fit_many

torch = pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

MLP = {
    "hidden_layer_sizes": [8],
    "epochs": 2,
    "batch_size": 10,
    "learning_rate": 0.05,
    "noise_multiplier": 0.5,
    "max_grad_norm": 3.0,
}


def test_mlp_defence_fitted_many_at_once_equals_each_alone():
    X, y = make_classification(100, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    rng = np.random.default_rng(0)
    subsets = [rng.choice(100, 50, replace=False) for _ in range(3)]
    seeds = [1, 2, 3]
    kw = {"base_params": MLP, "inner_params": {"epochs": 3}, "alpha": 0.25, "n_splits": 2, "noise_seed": 5}
    many = fit_many(OptimallySoftLabels("mlp", **kw), X, y, subsets, seeds)
    smooth = fit_many(LabelSmoothing("mlp", a=0.5, base_params=MLP, noise_seed=5), X, y, subsets, seeds)
    for rows, seed, model, sm in zip(subsets, seeds, many, smooth, strict=True):
        alone = OptimallySoftLabels("mlp", **kw, random_state=seed).fit(X[rows], y[rows])
        # float32 DP-SGD: Poisson batches are padded to the largest batch of the stack (rounding only)
        np.testing.assert_allclose(model.predict_proba(X), alone.predict_proba(X), atol=1e-5)
        assert model.base_.steps_ == alone.base_.steps_ == 2 * 5 and model.base_.sample_rate_ == 0.2
        sm_alone = LabelSmoothing("mlp", a=0.5, base_params=MLP, random_state=seed, noise_seed=5)
        sm_alone.fit(X[rows], y[rows])
        np.testing.assert_allclose(sm.predict_proba(X), sm_alone.predict_proba(X), atol=1e-5)


def test_the_dp_sgd_base_noise_is_secret_unless_seeded_and_an_audit_seeds_it():
    """A known random_state does not replay the defence's DP-SGD base; a noise seed (which an audit sets
    from each fit's seed, through the trainer spec) makes the whole procedure reproducible."""
    from mipkit.game.trainers import resolve_trainer

    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, random_state=1)
    kw = {"base_params": MLP, "alpha": 0.5, "n_splits": 2, "random_state": 0}
    free = [OptimallySoftLabels("mlp", **kw).fit(X, y).predict_proba(X) for _ in range(2)]
    assert not np.array_equal(free[0], free[1])
    spec = resolve_trainer("mipkit.defences.OptimallySoftLabels", {"base": "mlp", **kw})
    built = [spec.build(3) for _ in range(2)]
    assert built[0].noise_seed == 3 and built[0]._check_params()["base"].noise_seed == 3
    audited = [est.fit(X, y).predict_proba(X) for est in built]
    np.testing.assert_array_equal(audited[0], audited[1])
    smooth = [LabelSmoothing("mlp", base_params=MLP, random_state=0).fit(X, y).predict_proba(X) for _ in "ab"]
    assert not np.array_equal(smooth[0], smooth[1])
