"""Interval bounds on the critic's per-record gradients (Pedersen ch. 3.1): they contain the true per-sample
gradients of the WGAN term and of the penalty term for random inputs in [0, 1]^d, and are tight at a point."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mipkit.synthesizers.bounds import (  # noqa: E402
    critic_bounds,
    interval_matvec,
    interval_mul,
    interval_outer,
    thesis_penalty_bound,
)

pytestmark = pytest.mark.torch


def _critic(d: int, hidden=(7, 5, 6), slope=0.2, seed=0, scale=1.0):
    torch.manual_seed(seed)
    layers = []
    w = d
    for h in hidden:
        layers += [torch.nn.Linear(w, h), torch.nn.LeakyReLU(slope)]
        w = h
    layers.append(torch.nn.Linear(w, 1))
    net = torch.nn.Sequential(*layers).double()
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
    return net


def _layers(net):
    mods = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in mods]


def _per_sample(net, x):
    """Per-sample gradients of D(x) and of (||grad_x D(x)|| - 1)^2 w.r.t. every parameter (torch.func)."""
    from torch.func import functional_call, grad, vmap

    names = [n for n, _ in net.named_parameters()]
    params = {n: p.detach() for n, p in net.named_parameters()}

    def d_of(p, xi):
        return functional_call(net, p, (xi[None, :],)).squeeze()

    def gp_of(p, xi):
        g = grad(lambda z: d_of(p, z))(xi)
        return (torch.linalg.vector_norm(g) - 1.0) ** 2

    gd = vmap(grad(d_of), in_dims=(None, 0))(params, x)
    gg = vmap(grad(gp_of), in_dims=(None, 0))(params, x)
    flat = lambda g: torch.cat([g[n].reshape(x.shape[0], -1) for n in names], dim=1).numpy()  # noqa: E731
    return flat(gd), flat(gg)


def test_interval_primitives_match_brute_force():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 3))
    lo, hi = rng.uniform(-1, 0, 3), rng.uniform(0, 1, 3)
    corners = np.array(np.meshgrid(*[[lo[i], hi[i]] for i in range(3)])).reshape(3, -1).T
    vals = corners @ w.T
    mlo, mhi = interval_matvec(w, lo, hi)
    np.testing.assert_allclose(mlo, vals.min(axis=0))
    np.testing.assert_allclose(mhi, vals.max(axis=0))
    a, b, c, d = -1.0, 2.0, -3.0, 0.5
    grid = np.array([x * y for x in np.linspace(a, b, 31) for y in np.linspace(c, d, 31)])
    plo, phi = interval_mul(np.array([a]), np.array([b]), np.array([c]), np.array([d]))
    assert plo[0] == pytest.approx(grid.min()) and phi[0] == pytest.approx(grid.max())
    olo, ohi = interval_outer(np.array([a, 1.0]), np.array([b, 1.0]), np.array([c]), np.array([d]))
    assert olo.shape == (2, 1) and olo[1, 0] == c and ohi[1, 0] == d


@pytest.mark.parametrize("slope", [0.2, 0.0])
def test_bounds_contain_per_sample_gradients(slope):
    d = 5
    net = _critic(d, slope=slope, seed=1)
    b = critic_bounds(_layers(net), [slope] * 3, np.zeros(d), np.ones(d))
    x = torch.rand(400, d, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    gd, gg = _per_sample(net, x)
    dlo, dhi = b.flat("d")
    glo, ghi = b.flat("gp")
    tol = 1e-9
    assert np.all(gd >= dlo - tol) and np.all(gd <= dhi + tol)
    assert np.all(gg >= glo - tol) and np.all(gg <= ghi + tol)
    # Thm 3.1.3 (operator-norm form) bounds the norm of the penalty gradient; the printed form is looser
    assert np.linalg.norm(gg, axis=1).max() <= b.gp_norm * (1 + 1e-12)
    nmax = float(np.linalg.norm(np.maximum(np.abs(b.input_grad_lo), np.abs(b.input_grad_hi))))
    printed = np.sqrt(np.sum(np.square(thesis_penalty_bound(_layers(net), [slope] * 3, nmax))))
    assert b.gp_norm <= printed
    # the bounds are not vacuous: the per-sample gradients spread over a good part of each interval
    assert np.mean(gd.max(axis=0) - gd.min(axis=0)) > 0.05 * np.mean(dhi - dlo)


def test_bounds_are_tight_at_a_point():
    d = 6
    net = _critic(d, seed=3)
    x = torch.rand(5, d, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    gd, gg = _per_sample(net, x)
    for i in range(x.shape[0]):
        p = x[i].numpy()
        b = critic_bounds(_layers(net), [0.2] * 3, p, p)
        dlo, dhi = b.flat("d")
        glo, ghi = b.flat("gp")
        np.testing.assert_allclose(dlo, gd[i], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(dhi, gd[i], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(glo, gg[i], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ghi, gg[i], rtol=1e-10, atol=1e-12)


def test_bias_is_added_to_the_preactivation_bounds():
    """Eqs. 3.9-3.10 as printed leave out the bias; without it a large bias would escape the bounds."""
    d = 3
    net = _critic(d, hidden=(4,), seed=5)
    with torch.no_grad():
        net[0].bias.fill_(5.0)
    b = critic_bounds(_layers(net), [0.2], np.zeros(d), np.ones(d))
    x = torch.rand(200, d, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    gd, _ = _per_sample(net, x)
    dlo, dhi = b.flat("d")
    assert np.all(gd >= dlo - 1e-12) and np.all(gd <= dhi + 1e-12)
