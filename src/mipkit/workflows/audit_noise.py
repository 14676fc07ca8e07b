"""Audit MIP noise: the MIP game against ``MIPNoise(estimator, train_on="half")`` with the optimal attacker.

The table is the pool ``D`` (Izzo et al., TMLR 2024, Def. 1; docs/theory.md sections 1-2 and 9). Random
halves of ``D`` (all from :func:`mipkit.game.splits.random_halves`, through
:func:`mipkit.mechanisms.fit_on_halves`) give the attacker's reference pool and the sigma estimate; the noise
is calibrated from them exactly as :class:`~mipkit.mechanisms.MIPNoise` does; then each round releases a
model trained on a fresh random half with fresh noise, and the Bayes posterior
(:func:`mipkit.attacks.bayes.membership_posterior`, Prop. 2) guesses membership of the targets. The measured
accuracy, with a Clopper-Pearson interval, is set next to the bound ``1/2 + eta``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mipkit._random import RandomState, spawn_seeds
from mipkit._validation import check_positive_int
from mipkit.attacks.bayes import membership_posterior, most_exposed_targets
from mipkit.game.mip_game import MIPGameResult, mip_game
from mipkit.mechanisms.certificate import MIPCertificate, certify_noise, seed_of
from mipkit.mechanisms.mip_calibration import check_mip_params
from mipkit.mechanisms.spread import DEFAULT_ATTRIBUTES, fit_on_halves

__all__ = ["audit_noise_wrapper"]


def audit_noise_wrapper(
    estimator: Any,
    X: Any,
    y: Any = None,
    *,
    eta: float,
    calibration: str = "mipkit-gaussian",
    sigma: Any = None,
    n_reference: int = 200,
    n_releases: int = 200,
    n_targets: int = 10,
    targets: np.ndarray | Sequence[int] | None = None,
    confidence: float | None = 0.95,
    moment: float = 2.0,
    norm_order: float = 2.0,
    attributes: Sequence[str] = DEFAULT_ATTRIBUTES,
    random_state: RandomState = None,
    n_jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[MIPGameResult, MIPCertificate]:
    """The MIP game against ``MIPNoise(estimator, train_on="half")`` on the pool ``D = (X, y)``.

    1. ``n_reference`` fits on random halves of ``D`` (the attacker's reference pool; also the sigma
       estimate when no a-priori ``sigma`` is given, as :class:`~mipkit.mechanisms.MIPNoise` does);
    2. the noise law calibrated from them (a function of ``D`` alone);
    3. ``n_releases`` fresh random halves ``D_train``, each fitted and released with fresh noise;
    4. for each target (``targets``, or the ``n_targets`` most exposed records), the Monte Carlo
       Bayes posterior from the reference pool; guess member iff ``>= 1/2``.

    The four seeds (reference halves, game halves, bootstrap, noise) are
    ``spawn_seeds(random_state, 4)``, in that order.

    Parameters
    ----------
    estimator : estimator
        Unfitted scikit-learn style estimator with numeric fitted ``attributes``.
    X, y : array-like
        The pool ``D``.
    eta, calibration, sigma, confidence, moment, norm_order, attributes
        As for :class:`~mipkit.mechanisms.MIPNoise`.
    n_reference : int >= 2
        Fits in the attacker's reference pool (and the sigma estimate).
    n_releases : int
        Game rounds; each round attacks every target once.
    n_targets : int
        Number of most exposed records attacked when ``targets`` is None.
    targets : sequence of int, optional
        Record indices to attack.
    random_state : int, Generator or None
    n_jobs : int or None
        joblib workers for the fits.
    progress : callable, optional
        Called with 1 after each fit (reference and game).

    Returns
    -------
    result : MIPGameResult
        Accuracy with a Clopper-Pearson interval, per target and pooled, next to ``1/2 + eta``.
    certificate : MIPCertificate
        The certificate of the mechanism that was attacked.
    """
    owner = "audit_noise_wrapper"
    params = check_mip_params(
        owner,
        eta=eta,
        calibration=calibration,
        sigma=sigma,
        n_estimates=n_reference,
        confidence=confidence,
        moment=moment,
        norm_order=norm_order,
        train_on="half",
    )
    n_releases = check_positive_int("n_releases", n_releases, owner=owner)
    seed_ref, seed_game, seed_boot, seed_noise = spawn_seeds(random_state, 4)
    fits = {"attributes": attributes, "n_jobs": n_jobs, "progress": progress}
    ref_outputs, ref_halves = fit_on_halves(
        estimator, X, y, n_fits=params.n_estimates, random_state=seed_ref, **fits
    )
    cal = certify_noise(
        params,
        dim=ref_outputs.shape[1],
        sigma=sigma,
        outputs=None if sigma is not None else ref_outputs,
        seed=seed_of(random_state),
        random_state=seed_boot,
        owner=owner,
    )
    if targets is None:
        targets = most_exposed_targets(ref_outputs, ref_halves, cal.noise.weights, n_targets)
    game_outputs, game_halves = fit_on_halves(
        estimator, X, y, n_fits=n_releases, random_state=seed_game, **fits
    )
    result = mip_game(
        game_outputs,
        game_halves,
        cal.noise,
        attack=membership_posterior,
        targets=targets,
        n_releases=n_releases,
        reference=(ref_outputs, ref_halves),
        eta_bound=params.eta,
        random_state=seed_noise,
        draw="sequential",
    )
    return result, cal.certificate
