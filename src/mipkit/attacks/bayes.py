"""The Bayes-optimal membership attack on a noise-wrapped release (posterior, likelihoods, optimal accuracy).

Setting (Izzo et al., TMLR 2024, Def. 1 and Prop. 2; docs/theory.md sections 1 and 9): ``D`` has ``n``
records, ``D_train`` is a uniformly random half (``k = n/2``), the release is ``theta_hat = A(D_train) + X``
with ``X`` drawn from a known noise law ``K``. For a target ``x*`` the posterior is

    P(x* in D_train | theta_hat) = mean_{H in D_in} K(theta_hat - A(H))
                                   / (mean_{H in D_in} K(...) + mean_{H in D_out} K(...))

(``|D_in| = |D_out|`` when ``k = n/2``, so the prior is 1/2; an odd pool's prior ``p = k/n`` multiplies the
"in" mean by ``p`` and the "out" mean by ``1 - p``), and the optimal attacker guesses "member" iff it is
``>= 1/2``. Its accuracy is ``1/2 + TV(P_in, P_out)/2`` for an even pool, at most ``max(p, 1 - p) + eta``
under eta-MIP for any pool.

The sums run over all ``C(n, k)`` halves when that is small (:func:`mipkit.game.splits.all_halves`;
``n = 12`` gives 924), which makes the posterior exact; otherwise over a Monte Carlo pool of random halves
(:func:`mipkit.game.splits.random_halves`), which approximates it (the attacker is then near-optimal, so its
measured accuracy is a lower bound on the optimal one). Likelihoods are combined in log space
(``logsumexp``). The game that plays this attack is :func:`mipkit.game.mip_game.mip_game`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp

from mipkit._validation import MipkitValueError, check_positive_int
from mipkit.game.mip_game import check_pool
from mipkit.mechanisms.noise_samplers import NoiseLaw

__all__ = [
    "membership_log_likelihoods",
    "membership_posterior",
    "most_exposed_targets",
    "optimal_accuracy_1d",
]


def _log_kernel_matrix(released: np.ndarray, outputs: np.ndarray, noise: NoiseLaw) -> np.ndarray:
    """``L[r, h] = log K(released[r] - outputs[h])``, computed in chunks to bound memory."""
    m, h = released.shape[0], outputs.shape[0]
    d = outputs.shape[1]
    out = np.empty((m, h))
    chunk = max(1, int(4_000_000 // max(1, h * d)))
    for start in range(0, m, chunk):
        stop = min(m, start + chunk)
        out[start:stop] = noise.log_density(released[start:stop, None, :] - outputs[None, :, :])
    return out


def membership_log_likelihoods(
    released: np.ndarray,
    outputs: np.ndarray,
    halves: np.ndarray,
    noise: NoiseLaw,
    *,
    targets: np.ndarray | list[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Log mixture likelihoods of each release under "target in" and "target out".

    Parameters
    ----------
    released : ndarray (m, d)
        Noisy releases ``theta_hat``.
    outputs : ndarray (H, d)
        ``A(H)`` for each half ``H`` of the pool (all halves, or a Monte Carlo sample).
    halves : bool ndarray (H, n)
        Membership of each record in each half of the pool.
    noise : NoiseLaw
        The noise law, with a normalised ``log_density``.
    targets : sequence of int
        Record indices.

    Returns
    -------
    log_in, log_out : ndarray (m, len(targets))
        ``log mean_{H contains t} K(theta_hat - A(H))`` and the same over halves without ``t``.
    """
    outputs, halves = check_pool(outputs, halves, "membership_log_likelihoods")
    released = np.atleast_2d(np.asarray(released, dtype=float))
    if released.shape[1] != outputs.shape[1]:
        raise MipkitValueError(
            f"Releases have {released.shape[1]} coordinates but the pool outputs have {outputs.shape[1]}."
        )
    targets = np.asarray(targets, dtype=int).ravel()
    log_k = _log_kernel_matrix(released, outputs, noise)
    log_in = np.empty((released.shape[0], targets.size))
    log_out = np.empty_like(log_in)
    for j, t in enumerate(targets):
        member = halves[:, t]
        n_in, n_out = int(member.sum()), int((~member).sum())
        if n_in == 0 or n_out == 0:
            raise MipkitValueError(f"Record {t} is in all or none of the pool's halves; enlarge the pool.")
        log_in[:, j] = logsumexp(log_k[:, member], axis=1) - math.log(n_in)
        log_out[:, j] = logsumexp(log_k[:, ~member], axis=1) - math.log(n_out)
    return log_in, log_out


def membership_posterior(
    released: np.ndarray,
    outputs: np.ndarray,
    halves: np.ndarray,
    noise: NoiseLaw,
    *,
    targets: np.ndarray | list[int],
) -> np.ndarray:
    """``P(x*_t in D_train | theta_hat)`` for each release and target, shape ``(m, n_targets)``.

    ``1 / (1 + (1 - p)/p * exp(log_out - log_in))`` with the game's prior ``p = k/n`` (the halves' size over
    the pool's; Izzo et al. 2024, eq. (4), which has ``p = 1/2``); if both likelihoods are zero the posterior
    is the prior.
    """
    log_in, log_out = membership_log_likelihoods(released, outputs, halves, noise, targets=targets)
    p = _prior(halves)
    diff = log_out - log_in + math.log((1.0 - p) / p)
    both_zero = np.isneginf(log_in) & np.isneginf(log_out)
    with np.errstate(over="ignore", invalid="ignore"):
        post = 1.0 / (1.0 + np.exp(np.where(both_zero, math.log((1.0 - p) / p), diff)))
    return post


def _prior(halves: np.ndarray) -> float:
    """``k / n``: the share of the pool in a half (every half of a game has the same size)."""
    halves = np.asarray(halves, dtype=bool)
    return float(halves[0].sum()) / halves.shape[1]


def optimal_accuracy_1d(
    outputs: np.ndarray,
    halves: np.ndarray,
    noise: NoiseLaw,
    *,
    target: int,
    n_grid: int = 40_001,
    width: float = 40.0,
) -> float:
    """Optimal attack accuracy ``int max(p p_in, (1 - p) p_out)`` for a scalar release, by numerical
    integration: ``1/2 + TV(P_in, P_out)/2`` when the prior ``p = k/n`` is 1/2 (an even pool).

    ``P_in`` / ``P_out`` are the mixtures ``mean_{H contains t} K(. - A(H))`` and the same without ``t``
    (exact when ``outputs``/``halves`` hold all halves), integrated with the trapezoid rule on a grid of
    ``n_grid`` points spanning the outputs plus ``width`` noise standard deviations on each side.
    """
    outputs, halves = check_pool(outputs, halves, "optimal_accuracy_1d")
    if outputs.shape[1] != 1:
        raise MipkitValueError("optimal_accuracy_1d needs a scalar release (d = 1).")
    std = float(noise.coordinate_std()[0])
    lo, hi = outputs.min() - width * std, outputs.max() + width * std
    grid = np.linspace(lo, hi, n_grid)
    h = grid[1] - grid[0]
    # p_in = (binned outputs) * K: spread each output's mass over its two neighbouring grid points
    # (linear binning, error O(h^2)) and convolve with the kernel sampled on the grid's offsets (FFT).
    offsets = np.arange(-(n_grid - 1), n_grid) * h
    kernel = np.exp(noise.log_density(offsets[:, None]))
    member = halves[:, target]

    def mixture(values: np.ndarray) -> np.ndarray:
        pos = (values - lo) / h
        left = np.clip(np.floor(pos).astype(int), 0, n_grid - 2)
        frac = pos - left
        mass = np.zeros(n_grid)
        np.add.at(mass, left, 1.0 - frac)
        np.add.at(mass, left + 1, frac)
        dens = fftconvolve(mass, kernel, mode="full")[n_grid - 1 : 2 * n_grid - 1]
        return dens / values.size

    p_in, p_out = mixture(outputs[member, 0]), mixture(outputs[~member, 0])
    p = _prior(halves)
    return float(0.5 + 0.5 * np.trapezoid(np.abs(p * p_in - (1.0 - p) * p_out), grid))


def most_exposed_targets(
    outputs: np.ndarray, halves: np.ndarray, weights: np.ndarray, n_targets: int
) -> np.ndarray:
    """Records whose presence moves the output most: largest ``||mean_in - mean_out||_{w,2}`` over the pool.

    A cheap proxy for the records the optimal attacker does best on (the mean shift of ``A(D_train)``
    caused by including the record, in the noise's norm).
    """
    outputs, halves = check_pool(outputs, halves, "most_exposed_targets")
    n_targets = check_positive_int("n_targets", n_targets, owner="most_exposed_targets")
    member = halves.astype(float)
    n_in = member.sum(axis=0)
    n_out = member.shape[0] - n_in
    ok = (n_in > 0) & (n_out > 0)
    mean_in = (member.T @ outputs) / np.maximum(n_in, 1)[:, None]
    mean_out = ((1 - member).T @ outputs) / np.maximum(n_out, 1)[:, None]
    w = np.asarray(weights, dtype=float)
    active = w > 0
    shift = np.sqrt(np.sum(((mean_in - mean_out)[:, active] / w[active]) ** 2, axis=1))
    shift[~ok] = -np.inf
    return np.argsort(-shift, kind="stable")[: min(n_targets, int(ok.sum()))]
