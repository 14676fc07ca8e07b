"""The clipped sum of the critic's per-record gradients, penalty included, without forming them.

The critic is a stack of linear layers with LeakyReLU(``s``) between them. A record's loss
``l_i = D(f_i, c_i) - D(x_i, c_i) + lambda P_i`` with ``P_i = (||g_i|| - 1)^2`` and
``g_i = grad_h D(h, c_i)`` at the mixed point ``h_i`` (:mod:`mipkit.synthesizers.clip_step`) is, as a
function of the weights:

* ``D`` of two inputs (the fake and the real record): ordinary forward passes;
* ``P_i``: its gradient is ``r_i . dg_i/dtheta`` with ``r_i = dP_i/dg_i = 2 (||g_i|| - 1) g_i / ||g_i||``,
  the gradient of ``r_i . g_i``, the derivative of ``D`` at ``h_i`` in the direction ``(r_i, 0)``. The
  LeakyReLU's derivative is constant on each side of 0 (its second derivative is 0 almost everywhere), so
  that directional derivative is a "tangent" pass: the same linear maps without biases, each hidden unit
  multiplied by ``1`` or ``s`` as its pre-activation at ``h_i`` is positive or not.

Each linear layer ``W`` is used by the three passes: record ``i``'s gradient for ``W`` is
``sum_u delta_ui a_ui^T`` (``u`` over the passes, ``a`` the layer's input, ``delta`` the loss's derivative
with respect to the layer's output, from one backward pass through zero taps), its squared norm
``sum_{u, v} (delta_ui . delta_vi)(a_ui . a_vi)``, and its bias gradient ``delta_real + delta_fake``. The
clipped sum is then ``sum_u (k * delta_u)^T a_u`` with the clip factors ``k``: a few matrix products,
equal (up to rounding) to clipping the gradients of
:func:`mipkit.synthesizers.clip_step.per_record_grads` (the tests check both against a loop over records).
"""

from __future__ import annotations

from typing import Any

from mipkit.trainers._torch_train import CLIP_EPS

__all__ = ["clipped_sum"]


def _layers(critic: Any) -> tuple[list[tuple[str, Any]], float]:
    """``[(name prefix, Linear)]`` of the critic in order, and the LeakyReLU's slope."""
    import torch

    lins = [(name, m) for name, m in critic.named_modules() if isinstance(m, torch.nn.Linear)]
    slopes = {m.negative_slope for m in critic.modules() if isinstance(m, torch.nn.LeakyReLU)}
    other = [m for m in critic.children() if not isinstance(m, (torch.nn.Linear, torch.nn.LeakyReLU))]
    if other or len(slopes) > 1:
        raise ValueError("clipped_sum needs a critic of Linear layers and one LeakyReLU slope")
    return lins, (slopes.pop() if slopes else 1.0)


def _direction(critic: Any, mix: Any, c: Any) -> Any:
    """``r_i``: the penalty's derivative with respect to the input gradient ``g_i`` at ``h_i``."""
    import torch

    with torch.enable_grad():
        h = mix.detach().requires_grad_(True)
        g = torch.autograd.grad(critic(torch.cat([h, c], dim=1)).sum(), h)[0]
    norm = torch.sqrt((g * g).sum(1) + 1e-12)
    return (2.0 * (norm - 1.0) / norm)[:, None] * g


def _passes(weights: list, biases: list, slope: float, inputs: tuple, masks: list, taps: list) -> Any:
    """The summed loss ``sum_i l_i`` through zero ``taps`` (one per pass and layer), recording each layer's
    inputs of each pass in ``inputs_seen`` (returned with the loss)."""
    import torch

    real, fake, tangent, gp_weight = inputs
    seen: list[list[Any]] = [[], [], []]
    outs = []
    for p, a in enumerate((real, fake, tangent)):
        for k, (w, b) in enumerate(zip(weights, biases, strict=True)):
            seen[p].append(a)
            z = a @ w.T + taps[p][k] + (b if p < 2 else 0.0)
            if k < len(weights) - 1:
                a = torch.where(z > 0, z, slope * z) if p < 2 else z * masks[k]
            else:
                a = z
        outs.append(a.sum())
    return outs[1] - outs[0] + gp_weight * outs[2], seen


def clipped_sum(critic: Any, batch: tuple, *, gp_weight: float, clip: float) -> tuple[dict, Any]:
    """``(sums, norms)``: per parameter name the sum of the per-record gradients clipped to norm ``clip``
    (factor ``min(1, C / (||g_i|| + 1e-6))``, as Opacus), and the per-record norms (module docstring).

    Parameters
    ----------
    critic : torch.nn.Sequential
        Linear layers with LeakyReLU between them (:func:`~mipkit.synthesizers.clip_step.critic_net`).
    batch : tuple
        ``(x, c, f, u)``: real records ``(B, d)``, their conditional vectors ``(B, K)``, fake partners
        ``(B, d)`` and mixing weights ``(B,)``.
    gp_weight, clip : float
    """
    import torch

    x, c, f, u = batch
    lins, slope = _layers(critic)
    weights = [m.weight.detach() for _, m in lins]
    biases = [m.bias.detach() for _, m in lins]
    mix = u[:, None] * x + (1.0 - u[:, None]) * f
    r = _direction(critic, mix, c)
    masks, a = [], torch.cat([mix, c], dim=1).detach()
    for w, b in zip(weights[:-1], biases[:-1], strict=True):  # the activation pattern at h_i
        z = a @ w.T + b
        masks.append(torch.where(z > 0, torch.ones_like(z), torch.full_like(z, slope)))
        a = torch.where(z > 0, z, slope * z)
    tangent = torch.cat([r, torch.zeros_like(c)], dim=1)
    inputs = (torch.cat([x, c], dim=1), torch.cat([f, c], dim=1), tangent, float(gp_weight))
    n = x.shape[0]
    taps = [[torch.zeros(n, w.shape[0], dtype=x.dtype, device=x.device, requires_grad=True) for w in weights]
            for _ in range(3)]  # fmt: skip
    with torch.enable_grad():
        loss, seen = _passes(weights, biases, slope, inputs, masks, taps)
        flat = torch.autograd.grad(loss, [t for row in taps for t in row])
    deltas = [flat[p * len(weights) : (p + 1) * len(weights)] for p in range(3)]
    squared = torch.zeros(n, dtype=x.dtype, device=x.device)
    for k in range(len(weights)):
        for p in range(3):
            for q in range(3):
                dd = (deltas[p][k] * deltas[q][k]).sum(1)
                squared = squared + dd * (seen[p][k].detach() * seen[q][k].detach()).sum(1)
        bias = deltas[0][k] + deltas[1][k]
        squared = squared + (bias * bias).sum(1)
    norms = torch.sqrt(squared)
    factor = torch.clamp(clip / (norms + CLIP_EPS), max=1.0)
    sums: dict[str, Any] = {}
    for k, (name, _) in enumerate(lins):
        prefix = f"{name}." if name else ""
        weighted = [(factor[:, None] * deltas[p][k]).T @ seen[p][k].detach() for p in range(3)]
        sums[prefix + "weight"] = weighted[0] + weighted[1] + weighted[2]
        sums[prefix + "bias"] = (factor[:, None] * (deltas[0][k] + deltas[1][k])).sum(0)
    return sums, norms
