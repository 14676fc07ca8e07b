"""Audit MIP noise: the MIP game against ``MIPNoise(estimator, train_on="half")`` with the optimal attacker.

The rows are the pool ``D`` (Izzo et al., TMLR 2024, Def. 1; docs/theory.md sections 1-2 and 9). Random
halves of ``D`` (all from :func:`mipkit.game.splits.random_halves`, through
:func:`mipkit.mechanisms.fit_on_halves`) give the attacker's reference pool and the sigma estimate; the noise
is calibrated from them exactly as :class:`~mipkit.mechanisms.MIPNoise` does; then each round releases a
model trained on a fresh random half with fresh noise, and the Bayes posterior
(:func:`mipkit.attacks.bayes.membership_posterior`, Prop. 2) guesses membership of the targets. The measured
accuracy is set next to the bound ``max(k/n, 1 - k/n) + eta`` (``1/2 + eta`` for an even pool), with a
two-way cluster bootstrap interval over releases and targets (:mod:`mipkit.workflows.audit_noise.intervals`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mipkit._progress import Pooled, Progress
from mipkit._random import check_random_state, noise_source, spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.attacks.bayes import membership_posterior, most_exposed_targets
from mipkit.game.mip_game import MIPGameResult, mip_game
from mipkit.mechanisms.certificate import CalibratedNoise, certify_noise
from mipkit.mechanisms.mip_calibration import check_mip_params
from mipkit.mechanisms.spread import fit_on_halves
from mipkit.workflows.audit_noise.config import AuditNoiseConfig
from mipkit.workflows.audit_noise.intervals import noise_intervals, replay_guesses
from mipkit.workflows.audit_noise.result import AuditNoiseResult
from mipkit.workflows.protect.data import as_protect_data

__all__ = ["audit_noise"]

Pool = tuple[np.ndarray, np.ndarray]
"""Outputs of fits on random halves and the halves: ``(outputs (B, d), halves (B, n) bool)``."""


def _targets(config: AuditNoiseConfig, n_records: int) -> np.ndarray | None:
    """The targets asked for, checked against the pool's size (None: the most exposed, chosen later)."""
    owner = config.owner
    if config.n_targets > n_records:
        raise MipkitValueError(
            f"The 'n_targets' parameter of {owner} must be at most the {n_records} records of the pool (one "
            f"target per record). Got {config.n_targets}."
        )
    if config.targets is None:
        return None
    if max(config.targets) >= n_records:
        raise MipkitValueError(
            f"The 'targets' parameter of {owner} names row {max(config.targets)}; the pool has rows 0 to "
            f"{n_records - 1}."
        )
    return np.asarray(config.targets, dtype=int)


def _calibrate(config: AuditNoiseConfig, reference: Pool, seed_boot: int) -> CalibratedNoise:
    """The noise law and certificate of ``MIPNoise(train_on="half")`` on this pool, as the game plays it."""
    outputs, halves = reference
    return certify_noise(
        check_mip_params(config.owner, **config.mip_settings()),
        dim=outputs.shape[1],
        sigma=config.sigma,
        outputs=None if config.sigma is not None else outputs,
        seed=config.seed,
        random_state=seed_boot,
        owner=config.owner,
        noise_source=noise_source(config.seed),  # the game's noise: a measurement, seeded
        membership_probability=float(halves[0].sum()) / halves.shape[1],
    )


def _play(
    game: Pool,
    reference: Pool,
    cal: CalibratedNoise,
    targets: np.ndarray,
    config: AuditNoiseConfig,
    seed: int,
) -> tuple[MIPGameResult, np.ndarray]:
    """The rounds of the game (:func:`mip_game`) and every guess of them (the same rounds replayed)."""
    outputs, halves = game
    result = mip_game(
        outputs,
        halves,
        cal.noise,
        attack=membership_posterior,
        targets=targets,
        n_releases=config.n_releases,
        reference=reference,
        eta_bound=cal.certificate.eta,
        random_state=seed,
        draw="sequential",
    )
    correct = replay_guesses(
        outputs,
        halves,
        cal.noise,
        targets=np.asarray(result.targets, dtype=int),
        n_releases=config.n_releases,
        reference=reference,
        rng=check_random_state(seed),
    )
    if tuple(int(c) for c in correct.sum(axis=0)) != result.correct:  # pragma: no cover - a code change
        raise RuntimeError("The replayed MIP game differs from mip_game's; the intervals would not match.")
    return result, correct


def audit_noise(
    data: Any,
    config: AuditNoiseConfig | None = None,
    *,
    progress: Progress | None = None,
) -> AuditNoiseResult:
    """The MIP game against ``MIPNoise(estimator, train_on="half")`` on the pool ``data``, with
    cluster-bootstrap intervals.

    1. ``n_reference`` fits on random halves of the pool (the attacker's reference pool; also the sigma
       estimate when no a-priori ``sigma`` is given, as :class:`~mipkit.mechanisms.MIPNoise` does);
    2. the noise law calibrated from them (a function of the pool alone);
    3. ``n_releases`` fresh random halves, each fitted and released with fresh noise;
    4. for each target (``targets``, or the ``n_targets`` most exposed records), the Monte Carlo Bayes
       posterior from the reference pool; guess member iff ``>= 1/2``.

    The five seeds (reference halves, game halves, sigma bootstrap, noise, interval bootstrap) are
    ``spawn_seeds(config.seed, 5)``, in that order.

    Parameters
    ----------
    data : ProtectData or (X, y)
        The pool ``D``.
    config : AuditNoiseConfig, optional
        The model, its noise and the game's sizes; default ``AuditNoiseConfig()``.
    progress : Progress, optional
        ``progress(stage, done, total)`` over the ``"reference fits"``, then the ``"game fits"``.

    Returns
    -------
    AuditNoiseResult
        The game's accuracy per target and pooled, the cluster-bootstrap interval and its verdict against
        the certificate's bound, and the certificate (an estimated sigma withheld unless
        ``config.include_estimates``).
    """
    config = AuditNoiseConfig() if config is None else config
    pool = as_protect_data(data)
    targets = _targets(config, pool.n_records)
    estimator = config.estimator()
    seed_ref, seed_game, seed_boot, seed_noise, seed_iv = spawn_seeds(config.seed, 5)
    fits = {"attributes": config.attributes, "n_jobs": config.n_jobs}
    reference = fit_on_halves(
        estimator, pool.X, pool.y, n_fits=config.n_reference, random_state=seed_ref,
        progress=Pooled(progress, "reference fits", config.n_reference), **fits,
    )  # fmt: skip
    cal = _calibrate(config, reference, seed_boot)
    if targets is None:
        targets = most_exposed_targets(*reference, cal.noise.weights, config.n_targets)
    game = fit_on_halves(
        estimator, pool.X, pool.y, n_fits=config.n_releases, random_state=seed_game,
        progress=Pooled(progress, "game fits", config.n_releases), **fits,
    )  # fmt: skip
    result, correct = _play(game, reference, cal, targets, config, seed_noise)
    intervals = noise_intervals(correct, confidence=0.95, n_boot=config.n_boot, random_state=seed_iv)
    bound = cal.certificate.accuracy_bound  # max(k/n, 1 - k/n) + eta
    intervals["bound"] = bound
    intervals["certificate_exact"] = bool(cal.certificate.exact)
    intervals["verdict"] = "above the bound" if intervals["accuracy_ci"][0] > bound else "within the bound"
    return AuditNoiseResult(
        game=result,
        certificate=cal.certificate.redacted(include_estimates=config.include_estimates),
        intervals=intervals,
        config=config,
        n_records=pool.n_records,
        domain=pool.domain,
    )
