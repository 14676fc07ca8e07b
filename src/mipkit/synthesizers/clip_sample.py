"""Post-processing pieces of :class:`~mipkit.synthesizers.dpwgan_clip.DPWGANClip`: the moving average of the
generator's weights and the matching of generated rows to the released category frequencies.

Both read only what the private mechanism releases (the generator, trained from the DP critic alone, and
the noisy category counts), so they cost no privacy:

* :func:`ema_update`: the exponential moving average ``a <- beta a + (1 - beta) w`` of the generator's
  weights after each generator step; sampling uses the average, which smooths the oscillation of
  adversarial training (the last weights of a GAN land anywhere on its cycle);
* :func:`rake` and :func:`systematic_sample`: from a pool of generated rows, weights that make every
  categorical column's weighted frequencies equal the released ones (iterative proportional fitting over
  the 1-way marginals), then a sample of ``n`` distinct rows whose inclusion probabilities are proportional
  to those weights (capped at 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ema_update", "inclusion_probabilities", "rake", "systematic_sample"]


def ema_update(average: list[Any], weights: list[Any], decay: float) -> None:
    """In place, for each tensor pair: ``average <- decay * average + (1 - decay) * weights``."""
    for a, w in zip(average, weights, strict=True):
        a.mul_(decay).add_(w.detach(), alpha=1.0 - decay)


def rake(codes: list[np.ndarray], targets: list[np.ndarray], *, iterations: int = 50) -> np.ndarray:
    """Row weights (mean 1) whose weighted category frequencies match ``targets``.

    Parameters
    ----------
    codes : list of ndarray of int
        Per categorical column, each row's category index.
    targets : list of ndarray
        Per column, the target frequencies (non-negative; normalised here). A category no row has keeps
        its share unmet and the column's other categories share the rest in proportion.
    iterations : int, default=50
        Sweeps of iterative proportional fitting over the columns.
    """
    n = len(codes[0]) if codes else 0
    w = np.ones(n)
    for _ in range(iterations):
        for idx, t in zip(codes, targets, strict=True):
            t = np.asarray(t, dtype=float)
            have = np.bincount(idx, weights=w, minlength=t.size)
            wanted = np.where(have > 0, t, 0.0)
            if wanted.sum() <= 0:
                continue
            ratio = np.where(have > 0, wanted / wanted.sum() * w.sum() / np.where(have > 0, have, 1.0), 0.0)
            w = w * ratio[idx]
    return w * (n / w.sum()) if n and w.sum() > 0 else w


def inclusion_probabilities(weights: np.ndarray, n: int) -> np.ndarray:
    """Probabilities proportional to ``weights``, summing to ``n`` and capped at 1 (capped rows are taken
    surely, the rest share what remains in proportion)."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    n = min(int(n), int(np.count_nonzero(w)))
    pi = np.zeros_like(w)
    sure = np.zeros(w.size, dtype=bool)
    while True:
        rest = w * ~sure
        left = n - int(sure.sum())
        pi = np.where(sure, 1.0, rest * (left / rest.sum()) if rest.sum() > 0 else 0.0)
        over = (pi > 1.0) & ~sure
        if not over.any():
            return np.minimum(pi, 1.0)
        sure |= over


def systematic_sample(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of distinct rows drawn by systematic sampling over a random order: row ``i`` is taken with
    probability ``pi[i]`` and the sample size is ``round(sum(pi))``."""
    order = rng.permutation(pi.size)
    cum = np.cumsum(pi[order])
    k = int(round(cum[-1])) if cum.size else 0
    if k == 0:
        return np.zeros(0, dtype=int)
    cum *= k / cum[-1]
    points = rng.random() + np.arange(k)
    taken = np.searchsorted(cum, points, side="right")
    return np.sort(order[np.minimum(taken, pi.size - 1)])
