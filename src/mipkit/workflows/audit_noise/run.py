"""Audit MIP noise: the MIP game against ``MIPNoise(estimator, train_on="half")`` with the optimal attacker.

The table is the pool ``D`` (Izzo et al., TMLR 2024, Def. 1; docs/theory.md sections 1-2 and 9). Random
halves of ``D`` (all from :func:`mipkit.game.splits.random_halves`, through
:func:`mipkit.mechanisms.fit_on_halves`) give the attacker's reference pool and the sigma estimate; the noise
is calibrated from them exactly as :class:`~mipkit.mechanisms.MIPNoise` does; then each round releases a
model trained on a fresh random half with fresh noise, and the Bayes posterior
(:func:`mipkit.attacks.bayes.membership_posterior`, Prop. 2) guesses membership of the targets. The measured
accuracy is set next to the bound ``max(k/n, 1 - k/n) + eta`` (``1/2 + eta`` for an even pool).

Intervals (docs/theory.md section 11): the guesses of one round share its release (one half, one noise
draw), and the guesses about one target share that target, so the (release, target) trials are dependent and
a Clopper-Pearson interval on the pooled guesses is too narrow. :func:`audit_noise` adds a two-way cluster
bootstrap over releases and targets (:func:`mipkit.stats.pigeonhole_weights`), seeded from the audit's seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mipkit._random import RandomState, check_random_state, noise_source, spawn_seeds
from mipkit._validation import check_positive_int
from mipkit.attacks.bayes import membership_posterior, most_exposed_targets
from mipkit.game.mip_game import MIPGameResult, mip_game
from mipkit.mechanisms.certificate import MIPCertificate, certify_noise, seed_of
from mipkit.mechanisms.mip_calibration import check_mip_params
from mipkit.mechanisms.spread import DEFAULT_ATTRIBUTES, fit_on_halves
from mipkit.stats import pigeonhole_weights, simultaneous_intervals, two_way_ratio_replicates

__all__ = ["audit_noise", "audit_noise_wrapper", "noise_intervals"]


def _play_sequential(outputs, halves, noise, *, targets, n_releases, reference, rng, batch_size=2000):
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


def audit_noise_wrapper(
    estimator: Any,
    X: Any,
    y: Any = None,
    **kwargs: Any,
) -> tuple[MIPGameResult, MIPCertificate]:
    """:func:`audit_noise` without the intervals: ``(result, certificate)`` (the former API; same arguments,
    same numbers)."""
    result, certificate, _ = audit_noise(estimator, X, y, **kwargs)
    return result, certificate


def audit_noise(
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
    n_boot: int = 1000,
) -> tuple[MIPGameResult, MIPCertificate, dict]:
    """The MIP game against ``MIPNoise(estimator, train_on="half")`` on the pool ``D = (X, y)``, with
    cluster-bootstrap intervals.

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
    n_boot : int
        Replicates of the cluster bootstrap (seeded from ``random_state``'s fifth spawned seed).

    Returns
    -------
    result : MIPGameResult
        Accuracy with a Clopper-Pearson interval, per target and pooled, next to the certificate's bound
        ``max(k/n, 1 - k/n) + eta`` (``1/2 + eta`` for an even pool).
    certificate : MIPCertificate
        The certificate of the mechanism that was attacked.
    intervals : dict
        :func:`noise_intervals` of the guesses, plus ``bound`` (the certificate's ``accuracy_bound``),
        ``certificate_exact`` and ``verdict``: ``"above the bound"`` when the interval's lower end exceeds
        it (a finding; expected only for an approximate certificate), else ``"within the bound"``.
    """
    owner = "audit_noise"
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
        noise_source=noise_source(seed_of(random_state)),  # the game's noise: a measurement, seeded
        membership_probability=float(ref_halves[0].sum()) / ref_halves.shape[1],
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
    # the same rounds again from the same seed, keeping every guess for the cluster bootstrap
    correct = _play_sequential(
        game_outputs,
        game_halves,
        cal.noise,
        targets=np.asarray(result.targets, dtype=int),
        n_releases=n_releases,
        reference=(ref_outputs, ref_halves),
        rng=check_random_state(seed_noise),
    )
    if tuple(int(c) for c in correct.sum(axis=0)) != result.correct:  # pragma: no cover - a code change
        raise RuntimeError("The replayed MIP game differs from mip_game's; the intervals would not match.")
    seed = seed_of(random_state)
    boot_rng = np.random.default_rng(None if seed is None else np.random.SeedSequence([seed, 0xB007]))
    intervals = noise_intervals(correct, confidence=0.95, n_boot=n_boot, random_state=boot_rng)
    bound = cal.certificate.accuracy_bound  # max(k/n, 1 - k/n) + eta
    intervals["bound"] = bound
    intervals["certificate_exact"] = bool(cal.certificate.exact)
    intervals["verdict"] = "above the bound" if intervals["accuracy_ci"][0] > bound else "within the bound"
    return result, cal.certificate, intervals
