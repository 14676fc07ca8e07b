"""dpwgan-clip: the privatised critic step against a per-record loop, clipping against an outlier record,
the accounting against the accountant, protective noise not from random_state, rare categories in the
output, and an end-to-end run through mipkit.synthesize and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from mipkit.synthesizers.clip_ghost import clipped_sum  # noqa: E402
from mipkit.synthesizers.clip_step import clipped_sum_vmap, critic_net  # noqa: E402
from mipkit.synthesizers.dpwgan_clip import DPWGANClip  # noqa: E402

pytestmark = pytest.mark.torch

TINY = {"steps": 6, "batch_size": 20, "critic_hidden": (8, 8), "generator_hidden": (8,), "latent_dim": 4}


def _batch(n: int = 7, d: int = 6, k: int = 4, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, d, dtype=torch.float64, generator=gen)
    f = torch.rand(n, d, dtype=torch.float64, generator=gen)
    c = torch.zeros(n, k, dtype=torch.float64)
    c[torch.arange(n), torch.arange(n) % k] = 1.0
    u = torch.rand(n, dtype=torch.float64, generator=gen)
    return x, c, f, u


def _critic(d: int = 6, k: int = 4):
    torch.manual_seed(3)
    return critic_net(torch, d, k, (8, 5), 0.2).double()


def _loop(critic, batch, gp_weight: float, clip: float):
    """The per-record definition: each record's loss by torch.autograd (the penalty's input gradient with
    create_graph), its gradient, clipped as Opacus, summed."""
    x, c, f, u = batch
    total = {k: torch.zeros_like(v) for k, v in critic.named_parameters()}
    norms = []
    for i in range(x.shape[0]):
        h = (u[i] * x[i : i + 1] + (1 - u[i]) * f[i : i + 1]).requires_grad_(True)
        g = torch.autograd.grad(critic(torch.cat([h, c[i : i + 1]], 1)).sum(), h, create_graph=True)[0]
        penalty = (torch.sqrt((g * g).sum() + 1e-12) - 1.0) ** 2
        loss = critic(torch.cat([f[i : i + 1], c[i : i + 1]], 1)).sum()
        loss = loss - critic(torch.cat([x[i : i + 1], c[i : i + 1]], 1)).sum() + gp_weight * penalty
        grads = torch.autograd.grad(loss, list(critic.parameters()))
        norm = float(torch.sqrt(sum((gr * gr).sum() for gr in grads)))
        norms.append(norm)
        for (name, _), gr in zip(critic.named_parameters(), grads, strict=True):
            total[name] += min(1.0, clip / (norm + 1e-6)) * gr
    return total, np.array(norms)


@pytest.mark.parametrize("clip", [1e6, 0.5])
def test_privatised_step_equals_per_record_loop(clip):
    critic, batch = _critic(), _batch()
    want, want_norms = _loop(critic, batch, 10.0, clip)
    params = {k: v.detach() for k, v in critic.named_parameters()}
    for got, norms in (
        clipped_sum(critic, batch, gp_weight=10.0, clip=clip),
        clipped_sum_vmap(critic, params, batch, gp_weight=10.0, clip=clip),
    ):
        np.testing.assert_allclose(norms.numpy(), want_norms, rtol=1e-6, atol=1e-9)
        for name in want:
            np.testing.assert_allclose(got[name].numpy(), want[name].numpy(), rtol=1e-6, atol=1e-9)


def test_outlier_record_moves_the_sum_by_at_most_the_clip():
    """The attack: one record with a huge value; its presence changes the pre-noise sum by at most C."""
    critic, (x, c, f, u) = _critic(), _batch(n=9)
    x[4] = 1e6  # the outlier
    clip = 0.3
    with_it, norms = clipped_sum(critic, (x, c, f, u), gp_weight=10.0, clip=clip)
    keep = torch.tensor([i for i in range(9) if i != 4])
    without, _ = clipped_sum(critic, (x[keep], c[keep], f[keep], u[keep]), gp_weight=10.0, clip=clip)
    change = math.sqrt(sum(float(((with_it[k] - without[k]) ** 2).sum()) for k in with_it))
    assert norms[4] > 1e3 * clip  # it would dominate without clipping
    assert change <= clip * (1 + 1e-9)


def _table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    city = rng.choice(["a", "b", "c"], n, p=[0.6, 0.38, 0.02])
    return pd.DataFrame({"age": rng.integers(18, 80, n), "city": city, "flag": rng.choice(["y", "n"], n)})


DOMAIN = {
    "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
    "city": {"type": "categorical", "categories": ["a", "b", "c", "rare"]},
    "flag": {"type": "categorical", "categories": ["n", "y"]},
}


def test_accounting_equals_the_accountant_and_meets_the_target():
    from mipkit.accounting import Composed, GaussianMechanism, SubsampledGaussian, tradeoff_curve

    m = DPWGANClip(epsilon=2.0, domain=DOMAIN, **TINY).fit(_table())
    cert, d = m.certificate_, m.certificate_.details
    q, sigma = 20 / 200, m.noise_multiplier_
    assert (d["sample_rate"], d["noise_multiplier"], d["max_grad_norm"], d["steps"]) == (q, sigma, 1.0, 6)
    assert (d["ema"], d["match_marginals"]) == (0.9995, True)
    sens = math.sqrt(2)  # two categorical columns, one count each per record
    record = Composed(
        [GaussianMechanism(sigma=10.0 * sens, sensitivity=sens), SubsampledGaussian(sigma, q, 6)]
    )
    assert cert.mechanism == record.to_dict()
    eps = tradeoff_curve(record).epsilon_for_delta(1e-5)
    assert cert.epsilon["add_remove"] == pytest.approx(eps, rel=1e-9)
    assert 1.9 < eps <= 2.0  # calibrated: the least noise that meets the target


def test_protective_noise_is_not_reproducible_from_random_state():
    a = DPWGANClip(epsilon=2.0, domain=DOMAIN, random_state=0, **TINY).fit(_table())
    b = DPWGANClip(epsilon=2.0, domain=DOMAIN, random_state=0, **TINY).fit(_table())
    assert not np.allclose(a.category_counts_[0], b.category_counts_[0])
    assert not torch.equal(a.critic_[0].weight, b.critic_[0].weight)
    assert a.certificate_.noise_source == "os-entropy"
    s1 = DPWGANClip(epsilon=2.0, domain=DOMAIN, random_state=0, noise_seed=5, **TINY).fit(_table())
    s2 = DPWGANClip(epsilon=2.0, domain=DOMAIN, random_state=0, noise_seed=5, **TINY).fit(_table())
    assert torch.equal(s1.critic_[0].weight, s2.critic_[0].weight)  # a given noise seed: a test run
    pd.testing.assert_frame_equal(s1.sample(50), s2.sample(50))


def test_rare_categories_appear_in_the_output():
    table = _table(300)
    assert (table["city"] == "c").sum() <= 10
    m = DPWGANClip(epsilon=1.0, domain=DOMAIN, noise_seed=1, **TINY).fit(table)
    out = m.sample(2000)
    assert set(out["city"]) == {"a", "b", "c", "rare"}  # "rare": in the public domain, in no record
    assert set(out["flag"]) == {"n", "y"}
    assert out["age"].between(18, 79).all()


def test_noise_zero_certifies_nothing():
    m = DPWGANClip(noise_multiplier=0.0, domain=DOMAIN, **TINY).fit(_table())
    assert not m.certificate_.certified
    np.testing.assert_array_equal(m.category_counts_[1], [(_table()["flag"] == v).sum() for v in ("n", "y")])


def test_synthesize_and_cli_end_to_end(tmp_path, capsys):
    from mipkit.cli import main
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    params = {k: list(v) if isinstance(v, tuple) else v for k, v in TINY.items()}
    res = synthesize(
        PrivateTable(_table(), DOMAIN),
        SynthesizeConfig(method="dpwgan-clip", epsilon=2.0, rows=40, params=params),
    )
    assert res.certificate.method == "dpwgan-clip" and len(res.synthetic) == 40
    assert 1.9 < res.certificate.headline_epsilon <= 2.0
    assert "DP-WGAN with per-record clipping" in res.summary()
    data, dom, out = tmp_path / "d.csv", tmp_path / "dom.json", tmp_path / "out"
    _table().to_csv(data, index=False)
    dom.write_text(json.dumps(DOMAIN))
    argv = [
        "synthesize",
        "--data",
        str(data),
        "--method",
        "dpwgan-clip",
        "--epsilon",
        "2",
        "--domain",
        str(dom),
    ]
    argv += ["--rows", "30", "--seed", "1", "--out", str(out), "--params", json.dumps(params), "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["method"] == "dpwgan-clip" and summary["rows"] == 30
    assert json.loads((out / "certificate.json").read_text())["details"]["max_grad_norm"] == 1.0
    assert len(pd.read_csv(out / "synthetic.csv")) == 30


def test_a_device_torch_cannot_use_is_one_line():
    from mipkit import MipkitValueError

    bad = "cuda:99" if torch.cuda.is_available() else "cuda"
    with pytest.raises(MipkitValueError, match="'device' parameter of DPWGANClip"):
        DPWGANClip(epsilon=2.0, domain=DOMAIN, device=bad, **TINY).fit(_table())


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"epsilon": -1.0}, "'epsilon' parameter of DPWGANClip"),
        ({"delta": 0.0}, "'delta' parameter of DPWGANClip"),
        ({"steps": 0}, "'steps' parameter of DPWGANClip"),
        ({"batch_size": 0}, "'batch_size' parameter of DPWGANClip"),
        ({"max_grad_norm": 0.0}, "'max_grad_norm' parameter of DPWGANClip"),
        ({"uniform_share": 2.0}, "'uniform_share' parameter of DPWGANClip"),
        ({"noise_multiplier": -1.0}, "'noise_multiplier' parameter of DPWGANClip"),
    ],
)
def test_a_bad_option_is_one_line(bad, needle):
    from mipkit import MipkitValueError

    with pytest.raises(MipkitValueError, match=needle):
        DPWGANClip(**bad)
