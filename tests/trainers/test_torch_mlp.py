"""TorchMLPClassifier: SGD and DP-SGD steps against independent torch / Opacus code, stacks = alone."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification

from mipkit import MipkitValueError
from mipkit._random import noise_generator
from mipkit.trainers import TorchMLPClassifier, fit_many, one_hot

torch = pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

DP = {"noise_multiplier": 0.8, "max_grad_norm": 1.0}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(90, 6, n_informative=4, n_classes=3, random_state=0)
    return X.astype(np.float64), y


def _sequential(hidden, d, C, seed):
    """nn.Sequential initialised from the documented generator protocol (Glorot weights, zero biases)."""
    gen = torch.Generator().manual_seed(seed)
    dims = [d, *hidden, C]
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        lin = torch.nn.Linear(fan_in, fan_out)
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        with torch.no_grad():
            lin.weight.copy_((torch.rand((fan_out, fan_in), generator=gen) * 2 - 1) * bound)
            lin.bias.zero_()
        layers.append(lin)
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers), gen


def _weights(model):
    return [p.detach().numpy() for p in model.parameters()]


def _ours(est):
    out = []
    for W, b in zip(est.coefs_, est.intercepts_, strict=True):
        out += [W.T, b]
    return out


def test_sgd_matches_a_plain_torch_training_loop(data):
    X, y = data
    Y = one_hot(y, 3) * 0.8 + 0.2 / 3  # soft targets
    est = TorchMLPClassifier(
        (5,), epochs=3, learning_rate=0.1, batch_size=16, weight_decay=0.01, random_state=7
    )
    est.fit(X, Y)
    model, gen = _sequential((5,), 6, 3, 7)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.01)
    Xt, Yt = torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32)
    for _ in range(3):
        order = torch.randperm(90, generator=gen)
        for start in range(0, 90, 16):
            rows = order[start : start + 16]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(Xt[rows]), Yt[rows]).backward()
            opt.step()
    assert est.steps_ == 3 * math.ceil(90 / 16) and est.sample_rate_ is None
    for ours, ref in zip(_ours(est), _weights(model), strict=True):
        np.testing.assert_allclose(ours, ref, atol=1e-6)


@pytest.mark.filterwarnings("ignore:Full backward hook")
def test_dp_sgd_steps_equal_opacus_with_the_same_batches_and_noise(data):
    """Opacus clips and sums; the same noise tensors are added to its gradient; step for step."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    X, y = data
    X, y = X[:40], y[:40]
    bs, lr, wd, clip, sigma = 10, 0.2, 0.01, 0.5, 0.8  # clip small enough that clipping happens
    est = TorchMLPClassifier(
        (8, 4), epochs=1, learning_rate=lr, batch_size=bs, weight_decay=wd, noise_multiplier=sigma,
        max_grad_norm=clip, random_state=3, noise_seed=8,
    )  # fmt: skip
    est.fit(X, y)
    assert est.steps_ == 4 and est.sample_rate_ == pytest.approx(0.25) and est.expected_batch_size_ == 10
    assert est.noise_multiplier_ == sigma and est.max_grad_norm_ == clip

    model, gen = _sequential((8, 4), 6, 3, 3)
    gsm = GradSampleModule(model, loss_reduction="mean")
    optimizer = DPOptimizer(
        torch.optim.SGD(gsm.parameters(), lr=lr, weight_decay=wd),
        noise_multiplier=0.0, max_grad_norm=clip, expected_batch_size=bs, loss_reduction="mean",
    )  # fmt: skip
    Xt = torch.tensor(X, dtype=torch.float32)
    Yt = torch.tensor(one_hot(y, 3), dtype=torch.float32)
    clipped_any = False
    secret = noise_generator(8, stream=(3,))  # the noise generator: the whole Poisson schedule first
    chosen = torch.from_numpy(secret.random((est.steps_, 40)) < 0.25)
    numels = [p.numel() for p in gsm.parameters()]
    for t in range(est.steps_):
        rows = torch.nonzero(chosen[t]).flatten()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(gsm(Xt[rows]), Yt[rows]).backward()
        norms = torch.stack([p.grad_sample.flatten(1).norm(dim=1) for p in gsm.parameters()], 1).norm(dim=1)
        clipped_any |= bool(torch.any(norms > clip))
        optimizer.pre_step()  # clip, sum, (zero) noise, divide by the expected batch size
        draw = (secret.standard_normal(sum(numels)) * (sigma * clip)).astype(np.float32)
        noise = torch.split(torch.from_numpy(draw), numels)
        with torch.no_grad():
            for p, z in zip(gsm.parameters(), noise, strict=True):
                p.grad += z.reshape(p.shape) / bs
        optimizer.original_optimizer.step()
    assert clipped_any
    for ours, ref in zip(_ours(est), _weights(model), strict=True):
        np.testing.assert_allclose(ours, ref, atol=1e-6)


def test_clipped_gradient_sum_against_per_sample_gradients():
    """The factorised clipped sum against (a) torch.func per-sample gradients clipped one by one and
    (b) per-sample backward passes, sample by sample."""
    from mipkit.trainers._torch_train import clipped_gradient_sum, per_sample_gradients

    gen = torch.Generator().manual_seed(0)
    M, B, d, C = 3, 5, 4, 3
    params = [torch.randn(M, 6, d, generator=gen), torch.randn(M, 6, generator=gen),
              torch.randn(M, C, 6, generator=gen), torch.randn(M, C, generator=gen)]  # fmt: skip
    x, yv = torch.randn(M, B, d, generator=gen), torch.softmax(torch.randn(M, B, C, generator=gen), -1)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.float32)
    got, norms = clipped_gradient_sum(params, x, yv, mask, max_grad_norm=0.7)
    per = per_sample_gradients(params, x, yv)
    per_norm = torch.stack([g.flatten(2).norm(dim=-1) for g in per], -1).norm(dim=-1)
    np.testing.assert_allclose(norms * mask, per_norm * mask, rtol=1e-5)
    factor = (0.7 / (per_norm + 1e-6)).clamp(max=1.0) * mask
    for j, g in enumerate(per):
        np.testing.assert_allclose(got[j], torch.einsum("mb,mb...->m...", factor, g), atol=1e-5)
    for m in range(M):
        total = [torch.zeros(p.shape[1:]) for p in params]
        for b in range(B):
            if not mask[m, b]:
                continue
            leaf = [p[m].clone().requires_grad_(True) for p in params]
            h = torch.relu(x[m, b] @ leaf[0].T + leaf[1]) @ leaf[2].T + leaf[3]
            loss = -(yv[m, b] * torch.log_softmax(h, -1)).sum()
            grads = torch.autograd.grad(loss, leaf)
            norm = torch.sqrt(sum((g**2).sum() for g in grads))
            assert float(norms[m, b]) == pytest.approx(float(norm), rel=1e-5)
            clip = min(1.0, 0.7 / (float(norm) + 1e-6))
            total = [t + clip * g for t, g in zip(total, grads, strict=True)]
        for j in range(len(params)):
            np.testing.assert_allclose(got[j][m], total[j], atol=1e-5)


@pytest.mark.parametrize("dp", [False, True])
def test_vectorised_stack_equals_training_each_model_alone(data, dp):
    X, y = data
    rng = np.random.default_rng(0)
    subsets = [rng.choice(90, k, replace=False) for k in (45, 45, 60, 30)]
    seeds = [5, 6, 7, 8]
    params = {"hidden_layer_sizes": [7, 5], "epochs": 3, "batch_size": 8, "learning_rate": 0.1}
    if dp:
        params.update(DP, noise_seed=4)
    many = fit_many(TorchMLPClassifier(**params, max_models=3), X, y, subsets, seeds)
    for rows, seed, model in zip(subsets, seeds, many, strict=True):
        alone = TorchMLPClassifier(**params, random_state=seed).fit(X[rows], y[rows])
        assert model.steps_ == alone.steps_ and model.random_state == seed
        for a, b in zip(model.coefs_ + model.intercepts_, alone.coefs_ + alone.intercepts_, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_one_hot_targets_equal_hard_labels_and_runs_are_deterministic(data):
    X, y = data
    params = {"hidden_layer_sizes": [6], "epochs": 2, "batch_size": 10, **DP, "noise_seed": 0}
    hard = TorchMLPClassifier(**params, random_state=1).fit(X, y)
    soft = TorchMLPClassifier(**params, random_state=1).fit(X, one_hot(y, 3))
    again = TorchMLPClassifier(**params, random_state=1).fit(X, y)
    other = TorchMLPClassifier(**params, random_state=2).fit(X, y)
    for a, b, c in zip(hard.coefs_, soft.coefs_, again.coefs_, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    assert not np.array_equal(hard.coefs_[0], other.coefs_[0])
    assert np.array_equal(pickle.loads(pickle.dumps(hard)).predict_proba(X), hard.predict_proba(X))


def test_no_hidden_layer_is_logistic_regression_and_the_caller_rng_is_untouched(data):
    X, y = data
    state = torch.get_rng_state().clone()
    threads = torch.get_num_threads()
    model = TorchMLPClassifier((), epochs=2, batch_size=30, random_state=0).fit(X, y)
    assert torch.equal(torch.get_rng_state(), state) and torch.get_num_threads() == threads
    assert len(model.coefs_) == 1 and model.coefs_[0].shape == (6, 3)
    logits = X @ model.coefs_[0].astype(float) + model.intercepts_[0].astype(float)
    np.testing.assert_allclose(model.decision_function(X), logits)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"noise_multiplier": 1.0}, "max_grad_norm"),
        ({"max_grad_norm": -1.0}, "max_grad_norm"),
        ({"hidden_layer_sizes": [0]}, "hidden_layer_sizes"),
        ({"epochs": 0}, "epochs"),
        ({"max_grad_norm": 1.0, "noise_multiplier": -0.5}, "noise_multiplier"),
    ],
)
def test_bad_parameters_are_refused(data, params, match):
    with pytest.raises(MipkitValueError, match=match):
        TorchMLPClassifier(**params).fit(*data)
