"""The training state of :class:`~mipkit.synthesizers.dpwgan_clip.DPWGANClip`: the released counts, a DP-SGD
critic step and a generator step (module docstring of :mod:`mipkit.synthesizers.dpwgan_clip`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mipkit.synthesizers.clip_ghost import clipped_sum
from mipkit.synthesizers.clip_sample import ema_update
from mipkit.synthesizers.clip_step import Blocks, critic_net, generator_net, head

__all__ = ["ClipTraining", "noisy_counts"]


def noisy_counts(x: np.ndarray, blocks: Blocks, std: float, secret: np.random.Generator) -> list[np.ndarray]:
    """Per categorical block, the count of each category plus ``N(0, std^2)`` (drawn from ``secret``)."""
    return [x[:, sl].sum(axis=0).astype(float) + std * secret.standard_normal(sl.stop - sl.start)
            for sl in blocks.slices]  # fmt: skip


class ClipTraining:
    """One run: networks, optimisers, the data on the device, the seeded streams (``rng`` NumPy for the
    conditional columns, torch's global for the rest) and the ``secret`` one (batches, noise)."""

    def __init__(
        self, torch: Any, model: Any, x_np: np.ndarray, rng: np.random.Generator, secret: Any, sigma: float
    ) -> None:
        self.torch, self.model, self.rng, self.secret, self.sigma = torch, model, rng, secret, float(sigma)
        self.dev = torch.device(model.device)
        self.n, d = x_np.shape
        self.blocks = blocks = model.blocks_
        self.critic = critic_net(torch, d, blocks.cond_dim, model.critic_hidden, 0.2).to(self.dev)
        self.generator = generator_net(torch, model.latent_dim, blocks.cond_dim, d, model.generator_hidden)
        self.generator = self.generator.to(self.dev)
        self.opt_c = torch.optim.Adam(self.critic.parameters(), lr=model.learning_rate, betas=model.betas)
        self.opt_g = torch.optim.Adam(self.generator.parameters(), lr=model.learning_rate, betas=model.betas)
        self.x = torch.from_numpy(x_np).to(self.dev)
        self.q = model.sample_rate(self.n)
        self.m = max(int(round(self.q * self.n)), 1)
        std = 0.0 if self.sigma == 0.0 else model.count_noise * np.sqrt(len(blocks))
        self.counts = noisy_counts(x_np, blocks, std, secret)
        # the generator trains with log-frequencies of the released counts (rare categories seen often)
        self.train_freq = [np.log1p(np.clip(c, 0.0, None)) + 1e-3 for c in self.counts]
        self.train_freq = [w / w.sum() for w in self.train_freq]
        self.average = [p.detach().clone() for p in self.generator.parameters()]
        self.hist: dict[str, list] = {"batch_size": [], "median_norm": [], "clipped_share": []}

    def averaged_generator(self) -> Any:
        """A copy of the generator with the moving average of its weights (the last ones when ``ema``
        is 0)."""
        import copy

        out = copy.deepcopy(self.generator)
        with self.torch.no_grad():
            for p, a in zip(out.parameters(), self.average, strict=True):
                p.copy_(a)
        return out

    def _fake(self, c: Any) -> Any:
        """Fake records for conditional vectors ``c`` (Gumbel-softmax blocks)."""
        torch = self.torch
        z = torch.randn(c.shape[0], self.model.latent_dim).to(self.dev)
        return head(torch, self.generator(torch.cat([z, c], dim=1)), self.blocks, self.model.tau)

    def critic_step(self) -> None:
        """A Poisson batch, the clipped per-record gradients' sum, its noise, an Adam step of the critic."""
        torch, model = self.torch, self.model
        idx = np.flatnonzero(self.secret.random(self.n) < self.q)
        if idx.size:
            xb = self.x[torch.from_numpy(idx).to(self.dev)]
            cols = self.rng.integers(0, max(len(self.blocks), 1), idx.size)
            if len(self.blocks):
                c = self.blocks.cond_of_records(torch, xb, cols)
            else:
                c = torch.zeros(idx.size, 0, device=self.dev)
            with torch.no_grad():
                f = self._fake(c)
            u = torch.rand(idx.size).to(self.dev)
            sums, norms = clipped_sum(
                self.critic, (xb, c, f, u), gp_weight=model.gp_weight, clip=model.max_grad_norm
            )
            self.hist["median_norm"].append(float(norms.median()))
            self.hist["clipped_share"].append(float((norms > model.max_grad_norm).float().mean()))
        else:
            sums = {k: torch.zeros_like(v) for k, v in self.critic.named_parameters()}
        self.hist["batch_size"].append(int(idx.size))
        std = self.sigma * model.max_grad_norm
        for name, p in self.critic.named_parameters():
            noise = self.secret.standard_normal(tuple(p.shape)) * std if std > 0.0 else 0.0
            noisy = sums[name] + torch.as_tensor(noise, dtype=p.dtype).to(self.dev)
            p.grad = noisy / (self.q * self.n)
        self.opt_c.step()

    def generator_step(self) -> None:
        """Conditional vectors from the released frequencies; Wasserstein loss plus the cross-entropy that
        makes the conditioned block generate its category (CTGAN's); the critic frozen."""
        torch, blocks, m = self.torch, self.blocks, self.m
        for p in self.critic.parameters():
            p.requires_grad_(False)
        self.opt_g.zero_grad()
        z = torch.randn(m, self.model.latent_dim).to(self.dev)
        if len(blocks):
            cols = self.rng.integers(0, len(blocks), m)
            cats = np.zeros(m, dtype=int)
            for j, w in enumerate(self.train_freq):
                rows = np.flatnonzero(cols == j)
                cats[rows] = self.rng.choice(w.size, size=rows.size, p=w)
            c = blocks.cond_of_choices(torch, cols, cats).to(self.dev)
        else:
            c = torch.zeros(m, 0, device=self.dev)
        logits = self.generator(torch.cat([z, c], dim=1))
        fake = head(torch, logits, blocks, self.model.tau)
        loss = -self.critic(torch.cat([fake, c], dim=1)).mean()
        for j, sl in enumerate(blocks.slices):
            rows = np.flatnonzero(cols == j)
            if rows.size:
                r = torch.from_numpy(rows).to(self.dev)
                target = torch.from_numpy(cats[rows]).to(self.dev)
                loss = loss + torch.nn.functional.cross_entropy(logits[r][:, sl], target, reduction="sum") / m
        loss.backward()
        self.opt_g.step()
        with torch.no_grad():
            ema_update(self.average, list(self.generator.parameters()), self.model.ema)
        for p in self.critic.parameters():
            p.requires_grad_(True)
