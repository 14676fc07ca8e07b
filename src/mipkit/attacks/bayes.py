"""The Bayes-optimal membership attack on a noise-wrapped release, and the MIP game that measures it.

Setting (Izzo et al., TMLR 2024, Def. 1 and Prop. 2; MATH.md 1): ``D`` has ``n`` records, ``D_train`` is a
uniformly random half (``k = n/2``), the release is ``theta_hat = A(D_train) + X`` with ``X`` drawn from a
known noise law ``K``. For a target ``x*`` the posterior is

    P(x* in D_train | theta_hat) = mean_{H in D_in} K(theta_hat - A(H))
                                   / (mean_{H in D_in} K(...) + mean_{H in D_out} K(...))

(``|D_in| = |D_out|`` when ``k = n/2``, so the prior is 1/2), and the optimal attacker guesses "member"
iff it is ``>= 1/2``. Its accuracy is ``1/2 + TV(P_in, P_out)/2``.

The sums run over all ``C(n, k)`` halves when that is small (:func:`all_halves`; ``n = 12`` gives 924),
which makes the posterior exact; otherwise over a Monte Carlo pool of random halves
(:func:`random_halves`), which approximates it (the attacker is then near-optimal, so its measured accuracy
is a lower bound on the optimal one). Likelihoods are combined in log space (``logsumexp``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp

from mipkit._random import RandomState, check_random_state, spawn_seeds
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.mechanisms.noise_samplers import NoiseLaw
from mipkit.metrics import EtaEstimate

__all__ = [
    "MIPGameResult",
    "all_halves",
    "audit_noise_wrapper",
    "most_exposed_targets",
    "membership_log_likelihoods",
    "membership_posterior",
    "mip_game",
    "optimal_accuracy_1d",
    "random_halves",
]

MAX_EXHAUSTIVE_HALVES = 2_000_000


def all_halves(n: int, k: int | None = None) -> np.ndarray:
    """Every size-``k`` subset of ``n`` records as a boolean matrix of shape ``(C(n, k), n)``.

    ``k`` defaults to ``n // 2``. Refused (:class:`MipkitValueError`) above 2 million subsets.
    """
    n = check_positive_int("n", n, minimum=2, owner="all_halves")
    k = n // 2 if k is None else check_positive_int("k", k, owner="all_halves")
    if k >= n:
        raise MipkitValueError(f"The 'k' parameter of all_halves must be < n = {n}. Got {k} instead.")
    count = math.comb(n, k)
    if count > MAX_EXHAUSTIVE_HALVES:
        raise MipkitValueError(
            f"C({n}, {k}) = {count} subsets is too many to enumerate; use random_halves instead."
        )
    out = np.zeros((count, n), dtype=bool)
    for row, subset in enumerate(combinations(range(n), k)):
        out[row, list(subset)] = True
    return out


def random_halves(
    n: int, n_halves: int, *, k: int | None = None, random_state: RandomState = None
) -> np.ndarray:
    """``n_halves`` independent uniformly random size-``k`` subsets, boolean matrix ``(n_halves, n)``."""
    n = check_positive_int("n", n, minimum=2, owner="random_halves")
    n_halves = check_positive_int("n_halves", n_halves, owner="random_halves")
    k = n // 2 if k is None else check_positive_int("k", k, owner="random_halves")
    rng = check_random_state(random_state)
    keys = rng.random((n_halves, n))
    chosen = np.argpartition(keys, k - 1, axis=1)[:, :k]
    out = np.zeros((n_halves, n), dtype=bool)
    np.put_along_axis(out, chosen, True, axis=1)
    return out


def _check_pool(outputs: np.ndarray, halves: np.ndarray, owner: str) -> tuple[np.ndarray, np.ndarray]:
    outputs = np.asarray(outputs, dtype=float)
    if outputs.ndim == 1:
        outputs = outputs[:, None]
    halves = np.asarray(halves, dtype=bool)
    if halves.ndim != 2 or outputs.ndim != 2 or halves.shape[0] != outputs.shape[0]:
        raise MipkitValueError(
            f"{owner}: 'outputs' (one row per half) and 'halves' (boolean, halves x records) must have the "
            f"same number of rows. Got {outputs.shape} and {halves.shape}."
        )
    return outputs, halves


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
    outputs, halves = _check_pool(outputs, halves, "membership_log_likelihoods")
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
    """``P(x*_t in D_train | theta_hat)`` for each release and target (prior 1/2), shape ``(m, n_targets)``.

    ``1 / (1 + exp(log_out - log_in))`` (Izzo et al. 2024, eq. (4)); if both likelihoods are zero the
    posterior is the prior 1/2.
    """
    log_in, log_out = membership_log_likelihoods(released, outputs, halves, noise, targets=targets)
    diff = log_out - log_in
    both_zero = np.isneginf(log_in) & np.isneginf(log_out)
    with np.errstate(over="ignore", invalid="ignore"):
        post = 1.0 / (1.0 + np.exp(np.where(both_zero, 0.0, diff)))
    return post


@dataclass(frozen=True)
class MIPGameResult:
    """Outcome of the MIP game against one noise-wrapped mechanism (raw counts; intervals on demand).

    Attributes
    ----------
    targets : tuple of int
        Record indices attacked.
    correct : tuple of int
        Correct guesses per target.
    trials : tuple of int
        Releases per target.
    eta_bound : float or None
        The certified eta of the release, if any: the accuracy bound is ``1/2 + eta_bound``.
    posterior : str
        ``"exact"`` (all halves) or ``"monte-carlo (H halves)"``.
    """

    targets: tuple[int, ...]
    correct: tuple[int, ...]
    trials: tuple[int, ...]
    eta_bound: float | None = None
    posterior: str = "exact"
    per_target: tuple[EtaEstimate, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        est = tuple(EtaEstimate(int(c), int(t)) for c, t in zip(self.correct, self.trials, strict=True))
        object.__setattr__(self, "per_target", est)

    @property
    def overall(self) -> EtaEstimate:
        """Pooled over targets: every (release, target) pair is one guess."""
        return EtaEstimate(int(sum(self.correct)), int(sum(self.trials)))

    @property
    def accuracy(self) -> float:
        return self.overall.accuracy.value

    def accuracy_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Clopper-Pearson interval of the pooled accuracy."""
        return self.overall.accuracy.interval(confidence)

    def to_dict(self, confidence: float = 0.95) -> dict:
        lo, hi = self.accuracy_interval(confidence)
        bound = None if self.eta_bound is None else 0.5 + self.eta_bound
        per = []
        for t, est in zip(self.targets, self.per_target, strict=True):
            plo, phi = est.accuracy.interval(confidence)
            per.append(
                {
                    "target": int(t),
                    "accuracy": est.accuracy.value,
                    "ci": [plo, phi],
                    "correct": est.correct,
                    "trials": est.trials,
                }
            )
        return {
            "accuracy": self.accuracy,
            "ci": [lo, hi],
            "confidence": confidence,
            "accuracy_bound": bound,
            "eta_bound": self.eta_bound,
            "within_bound": None if bound is None else bool(lo <= bound),
            "upper_ci_within_bound": None if bound is None else bool(hi <= bound),
            "correct": self.overall.correct,
            "trials": self.overall.trials,
            "posterior": self.posterior,
            "per_target": per,
        }


def mip_game(
    outputs: np.ndarray,
    halves: np.ndarray,
    noise: NoiseLaw,
    *,
    targets: np.ndarray | list[int],
    n_releases: int,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    eta_bound: float | None = None,
    random_state: RandomState = None,
    draw: str = "random",
    batch_size: int = 2000,
) -> MIPGameResult:
    """Play the MIP game ``n_releases`` times against the Bayes-optimal attacker.

    Each round draws a half ``D_train`` uniformly from the game pool (``outputs``, ``halves``), releases
    ``A(D_train) + X`` with ``X ~ noise``, and for every target guesses "member" iff the posterior is
    ``>= 1/2`` (Prop. 2). A guess is correct when it equals ``1{target in D_train}``.

    Parameters
    ----------
    outputs, halves : ndarray (H, d), bool ndarray (H, n)
        The game pool: ``A(H)`` for each half and the half's membership. With :func:`all_halves` the
        game is exactly the MIP game.
    noise : NoiseLaw
    targets : sequence of int
    n_releases : int
    reference : (outputs, halves), optional
        The attacker's pool for the posterior. Default: the game pool (exact posterior when the pool is
        all halves). With Monte Carlo pools pass an independent reference pool.
    eta_bound : float, optional
        The certified eta, stored for the report.
    random_state : int, Generator or None
    draw : {"random", "sequential"}
        ``"random"``: each round draws a pool half uniformly (with replacement; use with all halves);
        ``"sequential"``: round ``r`` uses pool half ``r mod H`` (a pool of fresh random halves, each
        released once).
    batch_size : int
        Releases attacked at once (memory ``batch_size * H_ref`` floats).
    """
    outputs, halves = _check_pool(outputs, halves, "mip_game")
    n_releases = check_positive_int("n_releases", n_releases, owner="mip_game")
    targets = np.asarray(targets, dtype=int).ravel()
    if targets.size == 0 or targets.min() < 0 or targets.max() >= halves.shape[1]:
        raise MipkitValueError(f"Targets must be record indices in [0, {halves.shape[1]}).")
    ref_outputs, ref_halves = (outputs, halves) if reference is None else _check_pool(*reference, "mip_game")
    exhaustive = reference is None and halves.shape[0] == math.comb(halves.shape[1], int(halves[0].sum()))
    check_choice("draw", draw, ("random", "sequential"), owner="mip_game")
    rng = check_random_state(random_state)
    correct = np.zeros(targets.size, dtype=np.int64)
    done = 0
    while done < n_releases:
        m = min(batch_size, n_releases - done)
        if draw == "random":
            idx = rng.integers(0, outputs.shape[0], size=m)
        else:
            idx = (done + np.arange(m)) % outputs.shape[0]
        released = outputs[idx] + noise.sample(m, random_state=rng)
        post = membership_posterior(released, ref_outputs, ref_halves, noise, targets=targets)
        guess = post >= 0.5
        truth = halves[idx][:, targets]
        correct += np.sum(guess == truth, axis=0)
        done += m
    label = "exact" if exhaustive else f"monte-carlo ({ref_outputs.shape[0]} halves)"
    return MIPGameResult(
        targets=tuple(int(t) for t in targets),
        correct=tuple(int(c) for c in correct),
        trials=tuple(n_releases for _ in targets),
        eta_bound=eta_bound,
        posterior=label,
    )


def optimal_accuracy_1d(
    outputs: np.ndarray,
    halves: np.ndarray,
    noise: NoiseLaw,
    *,
    target: int,
    n_grid: int = 40_001,
    width: float = 40.0,
) -> float:
    """Optimal attack accuracy ``1/2 + TV(P_in, P_out)/2`` for a scalar release, by numerical integration.

    ``P_in`` / ``P_out`` are the mixtures ``mean_{H contains t} K(. - A(H))`` and the same without ``t``
    (exact when ``outputs``/``halves`` hold all halves). ``TV = (1/2) int |p_in - p_out|``, integrated with
    the trapezoid rule on a grid of ``n_grid`` points spanning the outputs plus ``width`` noise standard
    deviations on each side.
    """
    outputs, halves = _check_pool(outputs, halves, "optimal_accuracy_1d")
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
    tv = 0.5 * np.trapezoid(np.abs(p_in - p_out), grid)
    return float(0.5 + 0.5 * tv)


def most_exposed_targets(
    outputs: np.ndarray, halves: np.ndarray, weights: np.ndarray, n_targets: int
) -> np.ndarray:
    """Records whose presence moves the output most: largest ``||mean_in - mean_out||_{w,2}`` over the pool.

    A cheap proxy for the records the optimal attacker does best on (the mean shift of ``A(D_train)``
    caused by including the record, in the noise's norm).
    """
    outputs, halves = _check_pool(outputs, halves, "most_exposed_targets")
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


def audit_noise_wrapper(
    estimator,
    X,
    y=None,
    *,
    eta: float,
    calibration: str = "mipkit-gaussian",
    sigma=None,
    n_reference: int = 200,
    n_releases: int = 200,
    n_targets: int = 10,
    targets: np.ndarray | list[int] | None = None,
    confidence: float | None = 0.95,
    moment: float = 2.0,
    norm_order: float = 2.0,
    attributes=("coef_", "intercept_"),
    random_state: RandomState = None,
    n_jobs: int | None = None,
    progress=None,
):
    """The MIP game against ``MIPNoise(estimator, train_on="half")`` on the pool ``D = (X, y)``.

    1. ``n_reference`` fits on random halves of ``D`` (the attacker's reference pool; also the sigma
       estimate when no a-priori ``sigma`` is given, as :class:`~mipkit.mechanisms.MIPNoise` does);
    2. the noise law calibrated from them (a function of ``D`` alone);
    3. ``n_releases`` fresh random halves ``D_train``, each fitted and released with fresh noise;
    4. for each target (``targets``, or the ``n_targets`` most exposed records), the Monte Carlo
       Bayes posterior from the reference pool; guess member iff ``>= 1/2``.

    Returns
    -------
    result : MIPGameResult
        Accuracy with a Clopper-Pearson interval, per target and pooled, next to ``1/2 + eta``.
    certificate : MIPCertificate
        The certificate of the mechanism that was attacked.
    """
    from mipkit.mechanisms.mip_noise import _calibrate, _check_common, _seed_of, fit_on_halves

    p = _check_common(
        "audit_noise_wrapper",
        eta=eta,
        calibration=calibration,
        sigma=sigma,
        n_estimates=n_reference,
        confidence=confidence,
        moment=moment,
        norm_order=norm_order,
        train_on="half",
        sensitivity=None,
        sensitivity_norm="l2",
        choose=None,
    )
    n_releases = check_positive_int("n_releases", n_releases, owner="audit_noise_wrapper")
    seed_ref, seed_game, seed_boot, seed_noise = spawn_seeds(random_state, 4)
    ref_outputs, ref_halves = fit_on_halves(
        estimator,
        X,
        y,
        n_fits=p["n_estimates"],
        attributes=attributes,
        random_state=seed_ref,
        n_jobs=n_jobs,
        progress=progress,
    )
    cal = _calibrate(
        eta=p["eta"],
        calibration=p["calibration"],
        dim=ref_outputs.shape[1],
        sigma=sigma,
        outputs=None if sigma is not None else ref_outputs,
        confidence=p["confidence"],
        moment=p["moment"],
        norm_order=p["norm_order"],
        sensitivity=None,
        sensitivity_norm="l2",
        choose=None,
        train_on="half",
        seed=_seed_of(random_state),
        random_state=seed_boot,
    )
    if targets is None:
        targets = most_exposed_targets(ref_outputs, ref_halves, cal.noise.weights, n_targets)
    game_outputs, game_halves = fit_on_halves(
        estimator,
        X,
        y,
        n_fits=n_releases,
        attributes=attributes,
        random_state=seed_game,
        n_jobs=n_jobs,
        progress=progress,
    )
    result = mip_game(
        game_outputs,
        game_halves,
        cal.noise,
        targets=targets,
        n_releases=n_releases,
        reference=(ref_outputs, ref_halves),
        eta_bound=p["eta"],
        random_state=seed_noise,
        draw="sequential",
    )
    return result, cal.certificate
