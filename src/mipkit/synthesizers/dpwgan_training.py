"""The training loop's steps of :class:`~mipkit.synthesizers.dpwgan.DPWGANGP` (Pedersen, thesis ch. 3.2,
Algorithm 1): a critic step on a Poisson batch with the noise of its bounded sensitivity, a generator step,
and the state a checkpoint keeps (module docstring of :mod:`mipkit.synthesizers.dpwgan`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from mipkit.synthesizers.bounds import critic_bounds
from mipkit.synthesizers.noise import step_noise

__all__ = ["HISTORY", "Training", "block_output", "critic_layers"]

#: What :attr:`Training.hist` records per critic step.
HISTORY = ("sensitivity", "critic_range", "penalty_radius", "noise_std_rms", "batch_size")


def critic_layers(critic: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The critic's linear layers as ``(weight, bias)`` float64 arrays."""
    mods = [m for m in critic if hasattr(m, "weight")]
    return [(m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in mods]


class Training:
    """The state of one run: the networks and optimisers of ``model`` (a :class:`DPWGANGP` whose
    ``critic_`` and ``generator_`` are built), the data, the random streams ``(gen, secret)`` (torch's for
    the fake records and the penalty's mixing weights; the secret one for the batches and the noise), the
    critic steps taken (``step``) and their history (``hist``)."""

    def __init__(
        self, torch: Any, model: Any, x_np: np.ndarray, streams: tuple[Any, Any], simplices: list
    ) -> None:
        self.torch, self.model, self.simplices = torch, model, simplices
        self.critic, self.generator = model.critic_, model.generator_
        self.gen, self.secret = streams
        self.opt_c = torch.optim.Adam(self.critic.parameters(), lr=model.learning_rate, betas=model.betas)
        self.opt_g = torch.optim.Adam(self.generator.parameters(), lr=model.learning_rate, betas=model.betas)
        self.x = torch.from_numpy(x_np)
        self.n, d = x_np.shape
        self.m = max(int(round(model.sample_rate * self.n)), 1)
        self.slopes = [model.slope] * len(model.critic_hidden)
        self.lo, self.hi = np.zeros(d), np.ones(d)
        self.params = list(self.critic.parameters())
        self.hist: dict[str, list] = {k: [] for k in HISTORY}
        self.step = 0

    def critic_step(self, noise_multiplier: float) -> None:
        """One critic step: bound the sensitivity over the domain, draw the Poisson batch, release the
        centred sum of the real records' gradients with its noise, take an Adam step."""
        torch, model, critic, n, m = self.torch, self.model, self.critic, self.n, self.m
        q, lam = model.sample_rate, model.gp_weight
        b = critic_bounds(critic_layers(critic), self.slopes, self.lo, self.hi, self.simplices)
        sn = step_noise(
            b, gp_weight=lam, noise_multiplier=noise_multiplier, shape=model.noise_shape, centre=model.centre
        )
        idx = torch.from_numpy(np.flatnonzero(self.secret.random(n) < q))
        nb = int(idx.numel())
        with torch.no_grad():
            fake = self.generator(torch.randn(max(m, nb), model.latent_dim, generator=self.gen))
        self.opt_c.zero_grad(set_to_none=False)
        private = noise_multiplier > 0.0
        # the real records' sum is divided by the public expected batch ``q N`` when noise is added (the
        # batch size is secret), else by the batch itself: the plain WGAN-GP mean
        scale = m if private else max(nb, 1)
        loss = critic(fake[:m]).sum() / m  # the generator's term: no data, no noise
        if nb > 0:
            real = self.x[idx]
            u = torch.rand(nb, 1, generator=self.gen)
            xhat = (u * real + (1.0 - u) * fake[:nb]).requires_grad_(True)
            grad_x = torch.autograd.grad(critic(xhat).sum(), xhat, create_graph=True)[0]
            penalty = (torch.linalg.vector_norm(grad_x, dim=1) - 1.0) ** 2
            loss = loss + (lam * penalty.sum() - critic(real).sum()) / scale
        loss.backward()
        if private:  # centred release, then add q N c back; without noise nothing is released
            noise = self.secret.standard_normal(sn.std.size)
            extra = (q * n - nb) * sn.centre + sn.std * noise
            _add_flat(self.params, torch.from_numpy(extra / m).float())
        self.opt_c.step()
        for name, value in (
            ("sensitivity", float(sn.sensitivity)),
            ("critic_range", float(sn.critic_range)),
            ("penalty_radius", float(sn.penalty_radius)),
            ("noise_std_rms", float(np.sqrt(np.mean(sn.std**2)))),
            ("batch_size", nb),
        ):
            self.hist[name].append(value)  # plain numbers: the checkpoint loads with weights_only
        self.step += 1

    def generator_step(self) -> None:
        """One generator step against the critic (the critic's parameters frozen meanwhile)."""
        for p in self.params:
            p.requires_grad_(False)
        self.opt_g.zero_grad()
        z = self.torch.randn(self.m, self.model.latent_dim, generator=self.gen)
        g_loss = -self.critic(self.generator(z)).mean()
        g_loss.backward()
        self.opt_g.step()
        for p in self.params:
            p.requires_grad_(True)

    def state(self, key: str, iteration: int, seconds: float) -> dict:
        """What a checkpoint keeps after ``iteration`` generator iterations."""
        return {
            "key": key,
            "iteration": iteration,
            "step": self.step,
            "critic": self.critic.state_dict(),
            "generator": self.generator.state_dict(),
            "opt_critic": self.opt_c.state_dict(),
            "opt_generator": self.opt_g.state_dict(),
            "rng": self.gen.get_state(),
            "history": self.hist,
            "noise_rng": json.dumps(self.secret.bit_generator.state),
            "seconds": seconds,
        }

    def restore(self, saved: dict) -> int:
        """Continue from a checkpoint's :meth:`state`; returns its generator iteration."""
        self.critic.load_state_dict(saved["critic"])
        self.generator.load_state_dict(saved["generator"])
        self.opt_c.load_state_dict(saved["opt_critic"])
        self.opt_g.load_state_dict(saved["opt_generator"])
        self.gen.set_state(saved["rng"])
        self.secret.bit_generator.state = json.loads(saved["noise_rng"])
        self.hist = {k: list(v) for k, v in saved["history"].items()}
        self.step = int(saved["step"])
        return int(saved["iteration"])


def block_output(torch: Any, d: int, simplices: list[slice]) -> Any:
    """Softmax over each categorical block (outputs on the simplex, like the one-hot records), sigmoid
    elsewhere (the thesis's output for every coordinate)."""
    free = torch.ones(d, dtype=torch.bool)
    for sl in simplices:
        free[sl] = False

    class BlockOutput(torch.nn.Module):
        def forward(self, h: Any) -> Any:
            out = torch.sigmoid(h) * free
            for sl in simplices:
                out = out + torch.nn.functional.pad(torch.softmax(h[:, sl], dim=1), (sl.start, d - sl.stop))
            return out

    return BlockOutput()


def _add_flat(params: list[Any], vec: Any) -> None:
    """Add a flat vector to the parameters' ``.grad`` (parameter order)."""
    start = 0
    for p in params:
        k = p.numel()
        p.grad.add_(vec[start : start + k].view_as(p))
        start += k
