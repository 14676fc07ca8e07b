"""Training many ReLU networks of one shape at once with ``torch.func`` (SGD or DP-SGD), one RNG per model.

All models of a stack share the layer sizes and hyper-parameters; each has its own rows, soft targets and
seed. Model ``m`` owns a ``torch.Generator`` seeded with its seed, which draws the initial weights (layer
by layer, Glorot-uniform ``U(-b, b)``, ``b = sqrt(6 / (fan_in + fan_out))``, biases 0: the default of Keras
``Dense``, which the thesis's TensorFlow Privacy code used) and, for SGD, one permutation per epoch. DP-SGD's
protective randomness, which its accounting treats as unknown to the attacker, comes from model ``m``'s
noise generator (:func:`mipkit._random.noise_generator` of its noise seed, stream ``(seed,)``; OS entropy
when the noise seed is None): first the whole Poisson schedule, a ``(steps, n)`` matrix of uniforms
(``rng.random``), then at every step one flat float64 vector of standard normals (``rng.standard_normal``)
for all parameters, times ``sigma c``, rounded to float32. Nothing of model ``m`` depends on the other
models of the stack, so a model trained in a stack equals the model trained alone up to the rounding of
batched matrix products (see ``docs/defences.md``).

DP-SGD step (Abadi et al. 2016, as Opacus implements it; docs/theory.md section 7 for the defence it serves):
with Poisson sampling at rate ``q``, per-sample gradients ``g_i`` of the soft cross-entropy, clip factors
``min(1, c / (|g_i| + 1e-6))`` (Opacus's formula, ``|.|`` the norm over all parameters),

    theta <- theta - lr * ( (sum_i clip_i g_i + N(0, (sigma c)^2 I)) / (q n) + weight_decay * theta ).

The clipped sum is computed without forming the ``g_i`` (:func:`clipped_gradient_sum`); the direct
``vmap(grad)`` per-sample gradients (:func:`per_sample_gradients`) serve as the reference in the tests;
clipping them took 57 ms of CPU per step against 10 ms for the factorised form (32 networks
64-128-64-32-10, 25 rows each).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from mipkit._progress import Progress, Tally
from mipkit._random import noise_generator
from mipkit._validation import MipkitValueError

__all__ = [
    "StackResult",
    "TrainSettings",
    "clipped_gradient_sum",
    "per_sample_gradients",
    "train_stack",
]

CLIP_EPS = 1e-6
"""Added to the per-sample norm in the clip factor, as Opacus does."""


@dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters shared by every model of a stack."""

    hidden: tuple[int, ...]
    epochs: int
    learning_rate: float
    batch_size: int
    weight_decay: float
    noise_multiplier: float | None
    max_grad_norm: float | None
    n_threads: int | None
    dataset_size: int | None = None
    """DP-SGD only: the public row count ``N`` behind ``q = batch_size / N``, the steps and the divisor
    ``q N`` (None: each model's own row count)."""

    @property
    def private(self) -> bool:
        return self.max_grad_norm is not None


@dataclass
class StackResult:
    """Per model: parameters ``[W0 (out, in), b0, W1, b1, ...]`` as float32 arrays, and what ran."""

    params: list[list[np.ndarray]]
    steps: list[int]
    sample_rate: list[float | None]
    expected_batch_size: list[float]


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MipkitValueError(
            "TorchMLPClassifier needs the 'torch' extra: pip install mipkit[torch]"
        ) from None
    return torch


def forward(params, x):
    """Logits of a ReLU network with parameters ``(W0, b0, W1, b1, ...)`` (``W`` of shape (out, in))."""
    torch = _import_torch()
    h = x
    n_layers = len(params) // 2
    for layer in range(n_layers):
        h = h @ params[2 * layer].T + params[2 * layer + 1]
        if layer < n_layers - 1:
            h = torch.relu(h)
    return h


def _soft_ce(logits, target):
    torch = _import_torch()
    return -(target * torch.log_softmax(logits, dim=-1)).sum(-1)


def _sample_loss(params, x, y):
    return _soft_ce(forward(params, x[None, :])[0], y)


def _batch_loss(params, x, y, mask):
    torch = _import_torch()
    return (mask * _soft_ce(forward(params, x), y)).sum() / torch.clamp(mask.sum(), min=1.0)


def _tapped_loss(taps, params, x, y, mask):
    """Summed loss of a batch with a zero ``tap`` added to every layer's pre-activation.

    The gradient with respect to ``taps[l]`` (shape (B, width_l)) is, row by row, each sample's gradient
    with respect to its own pre-activation of layer ``l`` (its loss depends on no other row); the layer
    inputs are returned as auxiliary output.
    """
    torch = _import_torch()
    h = x
    inputs = []
    n_layers = len(params) // 2
    for layer in range(n_layers):
        inputs.append(h)
        h = h @ params[2 * layer].T + params[2 * layer + 1] + taps[layer]
        if layer < n_layers - 1:
            h = torch.relu(h)
    return (mask * _soft_ce(h, y)).sum(), inputs


def per_sample_gradients(params, x, y):
    """Per-sample gradients ``(M, B, *shape)`` of a stack of networks: ``vmap`` over models of ``vmap`` over
    samples of ``grad`` (the direct definition; the trainer uses :func:`clipped_gradient_sum`)."""
    from torch.func import grad, vmap

    return vmap(vmap(grad(_sample_loss), in_dims=(None, 0, 0)), in_dims=(0, 0, 0))(tuple(params), x, y)


def clipped_gradient_sum(params, x, y, mask, *, max_grad_norm: float):
    """``sum_i min(1, c / (|g_i| + 1e-6)) g_i`` for a stack of networks, without forming the ``g_i``.

    For a linear layer ``z = W a + b`` the per-sample gradients are ``delta_i a_i^T`` and ``delta_i``, with
    ``delta_i = dloss_i/dz_i``; so ``|g_i|^2 = sum_l |delta_il|^2 (|a_il|^2 + 1)`` (Goodfellow 2015; "ghost
    clipping") and the clipped sum of layer ``l`` is ``(c * delta_l)^T a_l``. The ``delta`` come from
    ``torch.func.grad`` with respect to zero taps on the pre-activations (:func:`_tapped_loss`), ``vmap``-ed
    over the models, in one backward pass. Equal (up to rounding) to clipping the gradients of
    :func:`per_sample_gradients` as Opacus does.

    Parameters
    ----------
    params : sequence of tensors (M, *shape)
    x : tensor (M, B, d)
    y : tensor (M, B, C)
        Soft targets.
    mask : tensor (M, B)
        1 for the rows of each model's batch, 0 for padding.
    max_grad_norm : float

    Returns
    -------
    sums : list of tensors (M, *shape)
    norms : tensor (M, B)
        Per-sample gradient norms (0 for padding).
    """
    torch = _import_torch()
    from torch.func import grad, vmap

    widths = [p.shape[1] for p in params[0::2]]
    M, B = x.shape[0], x.shape[1]
    taps = tuple(torch.zeros((M, B, w)) for w in widths)
    deltas, inputs = vmap(grad(_tapped_loss, has_aux=True), in_dims=(0, 0, 0, 0, 0))(
        taps, tuple(params), x, y, mask
    )
    squared = torch.zeros((M, B))
    for delta, a in zip(deltas, inputs, strict=True):
        squared = squared + (delta * delta).sum(-1) * ((a * a).sum(-1) + 1.0)
    norms = torch.sqrt(squared)
    factor = (max_grad_norm / (norms + CLIP_EPS)).clamp(max=1.0) * mask
    sums = []
    for delta, a in zip(deltas, inputs, strict=True):
        weighted = delta * factor[:, :, None]
        sums.append(torch.bmm(weighted.transpose(1, 2), a))
        sums.append(weighted.sum(1))
    return sums, norms


def _init_params(torch, dims: list[int], generator) -> list:
    params = []
    for fan_in, fan_out in zip(dims[:-1], dims[1:], strict=True):
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        params.append((torch.rand((fan_out, fan_in), generator=generator) * 2 - 1) * bound)
        params.append(torch.zeros((fan_out,)))
    return params


def _schedule(torch, gen, noise_rng, n: int, steps: int, settings: TrainSettings, rate: float | None):
    """Model ``m``'s batches for the whole run.

    DP-SGD: a ``(steps, n)`` matrix of uniforms from the noise generator ``noise_rng`` (the batches are
    secret: amplification by subsampling assumes it), ``U < q`` selecting each step's Poisson batch. SGD:
    one permutation per epoch from ``gen``, right after the initialisation, cut into consecutive batches of
    ``batch_size`` (the last one may be smaller). Returns a list over steps of row-index tensors.
    """
    if settings.private:
        chosen = torch.from_numpy(noise_rng.random((steps, n)) < rate)
        return [torch.nonzero(row).flatten() for row in chosen]
    bs = int(settings.batch_size)
    per_epoch = math.ceil(n / bs)
    out = []
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=gen)
        out += [order[k * bs : (k + 1) * bs] for k in range(per_epoch)]
    return out


def _batches(torch, schedules: list, t: int):
    """Row indices ``(M, B)`` and mask ``(M, B)`` of step ``t`` (models without a step ``t`` get none)."""
    rows = [sched[t] if t < len(sched) else sched[0][:0] for sched in schedules]
    counts = torch.tensor([int(r.numel()) for r in rows])
    width = max(1, int(counts.max()))
    idx = torch.zeros((len(rows), width), dtype=torch.long)
    for m, r in enumerate(rows):
        idx[m, : r.numel()] = r
    mask = (torch.arange(width)[None, :] < counts[:, None]).to(torch.float32)
    return idx, mask


def train_stack(
    Xs: list[np.ndarray],
    Ys: list[np.ndarray],
    seeds: list[int],
    settings: TrainSettings,
    noise_seeds: list[int | None] | None = None,
    progress: Progress | None = None,
) -> StackResult:
    """Train one network per ``(Xs[m], Ys[m], seeds[m])``, all in one vectorised loop.

    Model ``m``'s torch generator draws its initial weights (and SGD's permutations); its noise generator
    (``noise_generator(noise_seeds[m], stream=(seeds[m],))``) draws DP-SGD's whole Poisson schedule
    (:func:`_schedule`), then, at every step, one flat vector of ``N(0, (sigma c)^2)`` noise for all
    parameters (in parameter order).

    Parameters
    ----------
    Xs : list of float arrays (n_m, d)
    Ys : list of soft targets (n_m, C), rows summing to 1
    seeds : list of int
    settings : TrainSettings
    noise_seeds : list of int or None, optional
        Per model; None (the default, or an entry None): the DP-SGD batches and noise come from OS entropy.
    progress : Progress, optional
        ``progress(stage, done, total)`` after each step (``stage``: ``"DP-SGD steps"`` with noise, else
        ``"SGD steps"``; ``total``: the longest model's steps); it draws nothing.

    Returns
    -------
    StackResult
    """
    torch = _import_torch()
    plan = _Plan(Xs, Ys, settings)
    with _deterministic(torch, settings.n_threads):
        stack = _Stack(torch, Xs, Ys, seeds, noise_seeds, plan)
        total = max(plan.steps)
        tally = Tally(progress, "SGD steps" if settings.noise_multiplier is None else "DP-SGD steps", total)
        for t in range(total):
            stack.step(t)
            tally.add()
    out = [[p[m].detach().numpy().copy() for p in stack.params] for m in range(len(Xs))]
    return StackResult(
        params=out, steps=plan.steps, sample_rate=plan.rates, expected_batch_size=plan.expected
    )


@contextmanager
def _deterministic(torch: Any, n_threads: int | None) -> Iterator[None]:
    """Deterministic algorithms and ``n_threads`` threads (if given) inside; torch's settings restored."""
    previous_threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    try:
        if n_threads is not None:
            torch.set_num_threads(int(n_threads))
        torch.use_deterministic_algorithms(True)
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(previous_threads)


class _Plan:
    """What each model of a stack runs: its rows, sampling rate (DP-SGD), steps and expected batch size,
    and the layer sizes of the networks."""

    def __init__(self, Xs: list[np.ndarray], Ys: list[np.ndarray], settings: TrainSettings) -> None:
        self.settings = settings
        self.sizes = [int(x.shape[0]) for x in Xs]
        bs = int(settings.batch_size)
        base = [(settings.dataset_size or n) if settings.private else n for n in self.sizes]
        self.rates = [min(1.0, bs / n) if settings.private else None for n in base]
        self.steps = [settings.epochs * math.ceil(n / bs) for n in base]
        self.expected = [
            r * n if r is not None else float(min(bs, n)) for r, n in zip(self.rates, base, strict=True)
        ]
        self.dims = [Xs[0].shape[1], *settings.hidden, Ys[0].shape[1]]


class _Stack:
    """The stacked parameters ``(M, *shape)`` of the models, their padded data and their random streams;
    :meth:`step` takes one (DP-)SGD step of every model that has one."""

    def __init__(self, torch: Any, Xs, Ys, seeds, noise_seeds, plan: _Plan) -> None:
        from torch.func import grad, vmap

        M, sizes, settings = len(Xs), plan.sizes, plan.settings
        self.torch, self.plan, self.settings = torch, plan, settings
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.noise_rngs = [
            noise_generator(ns, stream=(int(s),))
            for ns, s in zip(noise_seeds or [None] * M, seeds, strict=True)
        ]
        per_model = [_init_params(torch, plan.dims, g) for g in gens]
        self.schedules = [
            _schedule(torch, g, nr, n, k, settings, r)
            for g, nr, n, k, r in zip(gens, self.noise_rngs, sizes, plan.steps, plan.rates, strict=True)
        ]
        self.params = [torch.stack([p[j] for p in per_model]) for j in range(len(per_model[0]))]
        self.shapes = [tuple(p.shape[1:]) for p in self.params]
        self.numels = [math.prod(sh) for sh in self.shapes]
        d, n_classes = plan.dims[0], plan.dims[-1]
        self.X_pad = torch.zeros((M, max(sizes), d))
        self.Y_pad = torch.zeros((M, max(sizes), n_classes))
        for m in range(M):
            self.X_pad[m, : sizes[m]] = torch.from_numpy(np.asarray(Xs[m], dtype=np.float32))
            self.Y_pad[m, : sizes[m]] = torch.from_numpy(np.asarray(Ys[m], dtype=np.float32))
        self.model_index = torch.arange(M)[:, None]
        self.exp_bs = torch.tensor(plan.expected, dtype=torch.float32)
        self.clip = None if settings.max_grad_norm is None else float(settings.max_grad_norm)
        self.sd = float(settings.noise_multiplier or 0.0) * (self.clip or 0.0)
        self.batch_grad = vmap(grad(_batch_loss), in_dims=(0, 0, 0, 0))

    def step(self, t: int) -> None:
        """Step ``t`` of every model with more than ``t`` steps (the others keep their parameters)."""
        torch, params, shapes = self.torch, self.params, self.shapes
        active = [t < k for k in self.plan.steps]
        idx, mask = _batches(torch, self.schedules, t)
        xb, yb = self.X_pad[self.model_index, idx], self.Y_pad[self.model_index, idx]
        if self.settings.private:
            step = self._private_step(xb, yb, mask, active)
        else:
            step = list(self.batch_grad(tuple(params), xb, yb, mask))
        lr, wd = float(self.settings.learning_rate), float(self.settings.weight_decay)
        everyone = all(active)
        on = torch.tensor(active)
        for j, p in enumerate(params):
            moved = p - lr * (step[j] + wd * p)
            params[j] = (
                moved if everyone else torch.where(on.reshape((-1,) + (1,) * len(shapes[j])), moved, p)
            )

    def _private_step(self, xb, yb, mask, active: list[bool]) -> list:
        """DP-SGD's noisy clipped gradient: the clipped sum plus each active model's noise, over ``q n``."""
        torch, M, shapes, numels = self.torch, len(active), self.shapes, self.numels
        sums, _ = clipped_gradient_sum(self.params, xb, yb, mask, max_grad_norm=self.clip)
        noise = torch.zeros((M, sum(numels)))
        if self.sd > 0:
            for m in range(M):
                if active[m]:
                    draw = self.noise_rngs[m].standard_normal(sum(numels)) * self.sd
                    noise[m] = torch.from_numpy(draw.astype(np.float32))
        parts = torch.split(noise, numels, dim=1)
        return [
            (sums[j] + parts[j].reshape((M, *shapes[j]))) / self.exp_bs.reshape((-1,) + (1,) * len(shapes[j]))
            for j in range(len(self.params))
        ]
