"""The pieces of :class:`~mipkit.synthesizers.dpwgan_clip.DPWGANClip`: its networks, conditional vectors and
DP-SGD critic step (docs/theory.md, "DP-WGAN with per-record clipping").

One record ``x_i`` of the Poisson batch brings its own conditional vector ``c_i`` (the one-hot of its
category in one categorical column chosen at random, independently of the data), a fake record
``f_i = G(z_i, c_i)`` and a mixing weight ``u_i``; its loss

``l_i = D(f_i, c_i) - D(x_i, c_i) + lambda (||grad_h D(h, c_i)|_{h = u_i x_i + (1 - u_i) f_i}|| - 1)^2``

depends on no other record, so its gradient with respect to the critic's parameters, clipped to norm ``C``,
is all that record contributes. :func:`per_record_grads` computes these gradients by definition
(``torch.func.vmap`` of ``torch.func.grad``, the penalty's input gradient nested inside) and
:func:`clipped_sum_vmap` sums them clipped; training uses the equal, faster factorised form of
:func:`mipkit.synthesizers.clip_ghost.clipped_sum`. The step adds ``N(0, sigma^2 C^2 I)`` to the sum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mipkit.trainers._torch_train import CLIP_EPS

__all__ = [
    "Blocks",
    "clipped_sum_vmap",
    "critic_net",
    "generator_net",
    "head",
    "per_record_grads",
    "record_loss",
]


class Blocks:
    """The categorical blocks of an encoding: their slices of ``[0, 1]^d`` and of the conditional vector.

    Parameters
    ----------
    slices : list of slice
        The one-hot block of each categorical column (``TabularEncoder.simplices()``).
    dim : int
        ``d``.
    """

    def __init__(self, slices: list[slice], dim: int) -> None:
        self.slices = list(slices)
        self.dim = int(dim)
        self.widths = [s.stop - s.start for s in self.slices]
        self.offsets = np.concatenate([[0], np.cumsum(self.widths)]).astype(int)
        self.cond_dim = int(self.offsets[-1])
        self.cat_index = (
            np.concatenate([np.arange(s.start, s.stop) for s in self.slices])
            if self.slices
            else np.zeros(0, int)
        )
        free = np.ones(self.dim, dtype=bool)
        free[self.cat_index] = False
        self.free = np.flatnonzero(free)

    def __len__(self) -> int:
        return len(self.slices)

    def cond_of_records(self, torch: Any, x: Any, columns: np.ndarray) -> Any:
        """Each record's conditional vector: its one-hot in the block ``columns[i]`` (zeros elsewhere)."""
        mask = np.zeros((len(columns), self.cond_dim), dtype=np.float32)
        for j in range(len(self)):
            mask[columns == j, self.offsets[j] : self.offsets[j + 1]] = 1.0
        index = torch.from_numpy(self.cat_index).to(x.device)
        return x[:, index] * torch.from_numpy(mask).to(x.device)

    def cond_of_choices(self, torch: Any, columns: np.ndarray, categories: np.ndarray) -> Any:
        """Conditional vectors of chosen ``(column, category)`` pairs."""
        c = np.zeros((len(columns), self.cond_dim), dtype=np.float32)
        c[np.arange(len(columns)), self.offsets[columns] + categories] = 1.0
        return torch.from_numpy(c)


def critic_net(torch: Any, d: int, cond_dim: int, hidden: tuple[int, ...], slope: float) -> Any:
    """The critic: ``[x, c]`` through LeakyReLU(``slope``) layers to one score (no normalisation layer: a
    record's score depends on that record only)."""
    nn = torch.nn
    layers: list[Any] = []
    width = d + cond_dim
    for h in hidden:
        layers += [nn.Linear(width, h), nn.LeakyReLU(slope)]
        width = h
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def generator_net(torch: Any, latent: int, cond_dim: int, d: int, hidden: tuple[int, ...]) -> Any:
    """The generator's body: ``[z, c]`` through ReLU layers with layer normalisation to ``d`` logits (the
    output head, sigmoid or (Gumbel-)softmax per block, is applied by the caller). Layer, not batch,
    normalisation: the fake partner of a record then depends on that record's conditional vector only, as
    the per-record sensitivity of the critic step needs."""
    nn = torch.nn
    layers: list[Any] = []
    width = latent + cond_dim
    for h in hidden:
        layers += [nn.Linear(width, h), nn.LayerNorm(h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, d))
    return nn.Sequential(*layers)


def head(torch: Any, logits: Any, blocks: Blocks, tau: float | None, gen: Any = None) -> Any:
    """Records in ``[0, 1]^d`` from the generator's logits: sigmoid for the numeric coordinates, per
    categorical block a softmax (``tau`` None) or a Gumbel-softmax of temperature ``tau`` (noise from
    ``gen``)."""
    out = torch.sigmoid(logits)
    parts = []
    for sl in blocks.slices:
        z = logits[:, sl]
        if tau is not None:
            u = torch.rand(z.shape, generator=gen, device=z.device).clamp_(1e-10, 1.0 - 1e-10)
            z = (z - torch.log(-torch.log(u))) / tau
        parts.append((sl, torch.softmax(z, dim=1)))
    if not parts:
        return out
    cols = [out[:, blocks.free]] + [p for _, p in parts]
    order = np.concatenate([blocks.free, *[np.arange(sl.start, sl.stop) for sl, _ in parts]])
    return torch.cat(cols, dim=1)[:, torch.from_numpy(np.argsort(order)).to(logits.device)]


def record_loss(critic: Any, params: dict, x: Any, c: Any, f: Any, u: Any, gp_weight: float) -> Any:
    """One record's critic loss ``l_i`` (module docstring), unbatched: ``x``, ``f`` of shape ``(d,)``,
    ``c`` ``(K,)``, ``u`` a scalar tensor."""
    import torch
    from torch.func import functional_call, grad

    def score(h: Any) -> Any:
        return functional_call(critic, params, (torch.cat([h, c]),)).squeeze(-1)

    mix = u * x + (1.0 - u) * f
    g = grad(score)(mix)
    penalty = (torch.sqrt(torch.sum(g * g) + 1e-12) - 1.0) ** 2
    return score(f) - score(x) + gp_weight * penalty


def per_record_grads(critic: Any, params: dict, batch: tuple, gp_weight: float) -> dict:
    """``{name: (B, *shape)}``: the gradient of each record's loss (``batch = (x, c, f, u)``)."""
    from torch.func import grad, vmap

    def loss(p: dict, x: Any, c: Any, f: Any, u: Any) -> Any:
        return record_loss(critic, p, x, c, f, u, gp_weight)

    return vmap(grad(loss), in_dims=(None, 0, 0, 0, 0))(params, *batch)


def clipped_sum_vmap(
    critic: Any, params: dict, batch: tuple, *, gp_weight: float, clip: float
) -> tuple[dict, Any]:
    """The sum over the batch of the per-record gradients of :func:`per_record_grads` clipped to norm
    ``clip`` (factor ``min(1, C / (||g_i|| + 1e-6))``, as Opacus), and the per-record norms before clipping:
    the direct definition, the reference of :func:`mipkit.synthesizers.clip_ghost.clipped_sum`."""
    import torch

    grads = per_record_grads(critic, params, batch, gp_weight)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    factor = torch.clamp(clip / (norms + CLIP_EPS), max=1.0)
    return {k: torch.einsum("b,b...->...", factor, g) for k, g in grads.items()}, norms
