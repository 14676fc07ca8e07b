"""The noise of one DP-WGAN-GP critic step: centre, sensitivity and per-component standard deviations.

One record ``x`` (with its own fake partner and mixing weight) contributes to the critic's gradient sum

``v(x) = -grad D(x) + lambda grad (||grad D(x_hat)|| - 1)^2``,

whose components lie in the boxes of :func:`mipkit.synthesizers.bounds.critic_bounds` (the penalty part
also in
a ball of radius ``lambda C^lambda``, Thm 3.1.3). The step releases the *centred* sum
``sum_{i in batch} (v(x_i) - c) + noise`` for a public centre ``c`` fixed before the batch is drawn, and adds
back ``q N c`` (post-processing). A record's centred contribution then has norm at most ``s``, the same number
for both neighbouring relations (docs/synthesize.md):

* add/remove: the sum gains or loses one ``v(x) - c``;
* replace-one: ``v(x) - c`` and ``v(x') - c`` both lie within ``s`` of 0, so they differ by at most ``2 s``,
  the range ``||C_1 - C_0||`` of the interval bounds (plus ``2 lambda C^lambda``), which is
  ``dp_accounting``'s replace-one model with sensitivity ``s``.

Without centring (``c = 0``) the add/remove sensitivity is the largest absolute value
``||max(|C_0|, |C_1|)||``.

Two noise shapes, both making the step a subsampled Gaussian mechanism with noise multiplier ``z``:

* ``"spherical"`` (Algorithm 1): ``N(0, (z s)^2 I)``;
* ``"scaled"`` (the centre-and-scale mechanism of Thm 3.1.2, which the thesis proves but did not run): the
  critic term is divided component-wise by its half-range ``r_i`` (so each component lies in ``[-1, 1]`` and
  the ``k`` components with ``r_i > 0`` have norm at most ``sqrt(k)``), the penalty term keeps its ball of
  radius ``s_g``; the two parts get independent noises ``N(0, (z c_1 sqrt(k) r_i)^2)`` per component and
  ``N(0, (z c_2 s_g)^2 I)`` with ``1/c_1^2 + 1/c_2^2 = 1``: the whitened pair has sensitivity ``1/z``, and
  adding the two noisy parts is post-processing. ``c_1, c_2`` minimise the total noise variance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mipkit.synthesizers.bounds import CriticBounds

__all__ = ["MARGIN", "StepNoise", "step_noise"]

#: Relative safety margin on every sensitivity: the released gradients are computed in float32, the bounds
#: in float64 (the thesis widens its output-gradient interval for the same reason, ch. 3.1.2).
MARGIN = 1e-3


@dataclass(frozen=True)
class StepNoise:
    """Centre, sensitivity and noise standard deviations of one critic step (flat, parameter order).

    Attributes
    ----------
    centre : ndarray
        ``c`` (float64, one entry per parameter).
    sensitivity : float
        ``s``: the norm bound of a centred contribution (spherical), or of the unscaled one for reporting.
    std : ndarray
        Noise standard deviation per component (float64).
    critic_range, penalty_radius : float
        ``||r||`` of the critic term and ``s_g`` of the penalty term.
    scaled_components : int
        ``k`` (``"scaled"`` only; else 0).
    """

    centre: np.ndarray
    sensitivity: float
    std: np.ndarray
    critic_range: float
    penalty_radius: float
    scaled_components: int = 0


def step_noise(
    bounds: CriticBounds,
    *,
    gp_weight: float,
    noise_multiplier: float,
    shape: str = "spherical",
    centre: bool = True,
) -> StepNoise:
    """The noise of one step from the gradient bounds (module docstring).

    Parameters
    ----------
    bounds : CriticBounds
        From :func:`~mipkit.synthesizers.bounds.critic_bounds` at the current weights.
    gp_weight : float
        ``lambda``.
    noise_multiplier : float
        ``z``: noise standard deviation over sensitivity.
    shape : {"spherical", "scaled"}
    centre : bool
        Centre the release (default) or not (then ``c = 0``: the largest absolute values).
    """
    dlo, dhi = bounds.flat("d")
    alo, ahi = -dhi, -dlo  # the real-data term is -D(x)
    glo, ghi = bounds.flat("gp")
    glo, ghi = gp_weight * glo, gp_weight * ghi
    if centre:
        ca, ra = (alo + ahi) / 2.0, (ahi - alo) / 2.0
    else:
        ca, ra = np.zeros_like(alo), np.maximum(np.abs(alo), np.abs(ahi))
    # penalty part: its box (centred or not) or Thm 3.1.3's ball, whichever is smaller
    if centre:
        cg_box, rg_box = (glo + ghi) / 2.0, (ghi - glo) / 2.0
    else:
        cg_box, rg_box = np.zeros_like(glo), np.maximum(np.abs(glo), np.abs(ghi))
    ball = gp_weight * bounds.gp_norm
    box = float(np.linalg.norm(rg_box))
    use_box = box <= ball
    cg = cg_box if use_box else np.zeros_like(glo)
    sg = box if use_box else ball
    norm_a = float(np.linalg.norm(ra))
    grow = 1.0 + MARGIN
    z = float(noise_multiplier)
    if shape == "spherical":
        s = norm_a + sg
        if use_box:  # the joint box is never worse than the triangle inequality
            s = min(s, float(np.linalg.norm(ra + rg_box)))
        s *= grow
        std = np.full(alo.shape, z * s)
        return StepNoise(centre=ca + cg, sensitivity=s, std=std, critic_range=norm_a, penalty_radius=sg)
    if shape != "scaled":
        raise ValueError(f"unknown noise shape {shape!r}")
    k = int(np.count_nonzero(ra > 0.0))
    big_a = k * norm_a**2  # total variance of the critic part per unit z^2 c1^2
    big_b = alo.size * sg**2
    if sg > 0.0 and big_a > 0.0:
        c1sq, c2sq = 1.0 + np.sqrt(big_b / big_a), 1.0 + np.sqrt(big_a / big_b)
    else:
        c1sq, c2sq = 1.0, 1.0
    var = (z * grow) ** 2 * (c1sq * k * ra**2 + (c2sq * sg**2 if sg > 0.0 else 0.0))
    return StepNoise(
        centre=ca + cg,
        sensitivity=(norm_a + sg) * grow,
        std=np.sqrt(var),
        critic_range=norm_a,
        penalty_radius=sg,
        scaled_components=k,
    )
