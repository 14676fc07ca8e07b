"""dpwgan-gp without its artefacts: with noise 0 a critic step takes exactly the plain WGAN-GP gradient
(computed here independently), and decoding draws each category from the generator's softmax."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from mipkit.synthesizers.dpwgan import DPWGANGP  # noqa: E402
from mipkit.synthesizers.dpwgan_training import Training  # noqa: E402
from mipkit.synthesizers.preprocess import TabularEncoder  # noqa: E402

pytestmark = pytest.mark.torch


def _plain_wgan_gp_grads(critic, generator, x, streams, m, q, latent, lam):
    """WGAN-GP's critic gradient on the same Poisson batch, fake records and mixing weights: mean score
    of the fakes, minus the mean score of the batch, plus lambda times the mean penalty; no noise."""
    gen, secret = streams
    idx = torch.from_numpy(np.flatnonzero(secret.random(x.shape[0]) < q))
    nb = int(idx.numel())
    with torch.no_grad():
        fake = generator(torch.randn(max(m, nb), latent, generator=gen))
    real = x[idx]
    u = torch.rand(nb, 1, generator=gen)
    xhat = (u * real + (1 - u) * fake[:nb]).requires_grad_(True)
    g = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)[0]
    penalty = ((g.norm(dim=1) - 1) ** 2).mean()
    loss = critic(fake[:m]).mean() - critic(real).mean() + lam * penalty
    return torch.autograd.grad(loss, list(critic.parameters())), nb


def test_noise_zero_takes_the_plain_wgan_gp_gradient():
    rng = np.random.default_rng(0)
    x_np = rng.random((60, 5)).astype(np.float32)
    model = DPWGANGP(noise_multiplier=0.0, sample_rate=0.3, critic_hidden=(8, 8), latent_dim=4, noise_seed=3)
    torch.manual_seed(0)
    model.critic_, model.generator_ = model._networks(5)
    gen = torch.Generator().manual_seed(1)
    secret = np.random.default_rng(11)
    run = Training(torch, model, x_np, (gen, secret), [])
    critic0 = copy.deepcopy(model.critic_)
    gen_state, secret_state = gen.get_state(), copy.deepcopy(secret.bit_generator.state)
    seen = {}
    run.opt_c.step = lambda: seen.update(grads=[p.grad.clone() for p in model.critic_.parameters()])
    run.critic_step(0.0)
    gen2 = torch.Generator()
    gen2.set_state(gen_state)
    secret2 = np.random.default_rng()
    secret2.bit_generator.state = secret_state
    want, nb = _plain_wgan_gp_grads(critic0, model.generator_, torch.from_numpy(x_np), (gen2, secret2),
                                    run.m, 0.3, 4, model.gp_weight)  # fmt: skip
    assert nb != run.m  # a batch whose size differs from q N: the old centring term would show
    for got, exp in zip(seen["grads"], want, strict=True):
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-6, atol=1e-6)


def test_decoding_draws_categories_from_the_softmax():
    df = pd.DataFrame({"c": ["a", "b"] * 5})
    enc = TabularEncoder(domain={"c": {"type": "categorical", "categories": ["a", "b"]}}).fit(df)
    probs = np.tile([0.7, 0.3], (4000, 1))
    assert set(enc.inverse_transform(probs)["c"]) == {"a"}  # argmax: the minority category never appears
    out = enc.inverse_transform(probs, rng=np.random.default_rng(0))["c"]
    assert (out == "b").mean() == pytest.approx(0.3, abs=0.03)
    again = enc.inverse_transform(probs, rng=np.random.default_rng(0))["c"]
    assert out.equals(again)


def test_sample_draws_with_the_seed():
    df = pd.DataFrame({"c": ["a", "b", "c"] * 20, "v": np.arange(60.0)})
    m = DPWGANGP(noise_multiplier=0.0, n_generator=2, n_critic=1, critic_hidden=(8,), random_state=0).fit(df)
    one, two = m.sample(300), m.sample(300)
    pd.testing.assert_frame_equal(one, two)
    assert m.sample(300, random_state=1)["c"].tolist() != one["c"].tolist()
    assert one["c"].nunique() > 1  # drawn from the softmax, not its argmax
