"""The intervals of the noise audit: every guess of the replayed game, and a cluster bootstrap over them.

The guesses of one round share its release (one half, one noise draw), and the guesses about one target
share that target, so the (release, target) trials are dependent and a Clopper-Pearson interval on the
pooled guesses is too narrow (docs/theory.md section 11). :func:`replay_guesses` replays the rounds of
:func:`mipkit.game.mip_game.mip_game` keeping every guess; :func:`noise_intervals` is the two-way cluster
bootstrap over releases and targets (:func:`mipkit.stats.pigeonhole_weights`).
"""

from __future__ import annotations

import numpy as np

from mipkit.attacks.bayes import membership_posterior
from mipkit.stats import pigeonhole_weights, simultaneous_intervals, two_way_ratio_replicates

__all__ = ["noise_intervals", "replay_guesses"]


def replay_guesses(outputs, halves, noise, *, targets, n_releases, reference, rng, batch_size=2000):
    """The rounds of :func:`mipkit.game.mip_game.mip_game` with ``draw="sequential"`` (the same draws from
    ``rng`` in the same order, so the same guesses), keeping every guess: bool array (n_releases, targets)."""
    ref_outputs, ref_halves = reference
    out = np.zeros((n_releases, targets.size), dtype=bool)
    done = 0
    while done < n_releases:
        m = min(batch_size, n_releases - done)
        idx = (done + np.arange(m)) % outputs.shape[0]
        released = outputs[idx] + noise.sample(m, random_state=rng)
        post = membership_posterior(released, ref_outputs, ref_halves, noise, targets=targets)
        out[done : done + m] = (post >= 0.5) == halves[idx][:, targets]
        done += m
    return out


def noise_intervals(
    correct: np.ndarray, *, confidence: float = 0.95, n_boot: int = 1000, random_state=None
) -> dict:
    """Two-way cluster-bootstrap interval of the pooled accuracy over releases (rows) and targets (columns).

    Returns ``accuracy``, ``accuracy_ci`` (studentised symmetric bootstrap interval,
    :func:`mipkit.stats.simultaneous_intervals` with one statistic), ``eta`` and ``eta_ci`` (accuracy - 1/2),
    the ``design_effect`` (bootstrap variance over the binomial one), ``method`` and ``n_boot``.
    """
    c = np.asarray(correct, dtype=float)
    R, J = c.shape
    W, V = pigeonhole_weights(n_boot, R, J, random_state)
    rep = two_way_ratio_replicates(c[None], np.ones_like(c), W, V)
    acc = float(c.mean())
    lo, hi, _ = simultaneous_intervals(np.array([acc]), rep, confidence)
    lo, hi = max(0.0, float(lo[0])), min(1.0, float(hi[0]))
    binom = acc * (1 - acc) / c.size
    return {
        "accuracy": acc,
        "accuracy_ci": [lo, hi],
        "eta": acc - 0.5,
        "eta_ci": [lo - 0.5, hi - 0.5],
        "design_effect": float(np.nanvar(rep, ddof=1) / binom) if binom > 0 else None,
        "confidence": confidence,
        "n_boot": int(n_boot),
        "method": "two-way cluster bootstrap over releases and targets (pigeonhole bootstrap)",
    }
