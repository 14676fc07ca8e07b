"""Refits of the model attack of attribute inference on bootstrap resamples of the rows it learns from.

The model attack's guesses come from one fit on the synthetic table, its baseline's from one fit on the
original without the targets; each fit is one draw of a random analysis. A small change of a fitted model
(its intercept) moves many targets' guesses across the tolerance at once, so, given the fit, the targets
are not independent trials, and an interval that resamples the targets alone is too narrow (on null
BankChurners releases the policy "PI above 0" fired in 24% of splits, ``docs/audit-synthetic.md``).
:func:`refit_guesses` refits the model on ``n_refits`` bootstrap resamples of its reference rows; the
precision-improvement interval (:func:`mipkit.metrics.inference.pi_bootstrap`) adds their spread to the
targets' (``docs/theory.md`` section 4).

The nearest-neighbour attack is not refitted: each target's guess is read off its own nearest record, so
a change of the reference rows moves different targets' guesses through different records and the
targets' bootstrap holds that variability; the bootstrap of a nearest-neighbour rule on resampled rows
(about 63% of them distinct) would instead misstate it (a copied record drops out of 37% of resamples).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def refit_guesses(
    analysis: str,
    reference: pd.DataFrame,
    targets: pd.DataFrame,
    *,
    n_refits: int,
    rng: np.random.Generator,
    guess: Callable[..., tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """Guesses of ``analysis`` for the targets, refitted on ``n_refits`` bootstrap resamples of ``reference``.

    Parameters
    ----------
    analysis : str
        The analysis refitted (``"model"``).
    reference, targets : DataFrame
        The rows the analysis learns from (every secret known) and the targets.
    n_refits : int
        Number of resamples ``R``.
    rng : Generator
        Draws the resamples (``R`` times ``len(reference)`` row positions, with replacement).
    guess : callable
        ``guess(analysis, reference, targets, resamples)`` -> ``(guesses, confidence)``, each of shape
        ``(R, n_targets)``: one fit per row of ``resamples`` (positions of reference rows).

    Returns
    -------
    ndarray of shape (R, n_targets)
        Row ``r``: the guesses of the fit on resample ``r``.
    """
    m = len(reference)
    return guess(analysis, reference, targets, rng.integers(0, m, size=(n_refits, m)))[0]
