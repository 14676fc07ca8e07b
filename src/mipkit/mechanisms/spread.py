"""The spread of ``A`` over random halves: fits on halves, and the estimate that calibrates MIP noise.

MIP noise is calibrated to the spread of ``A(D_train)`` over uniformly random halves ``D_train`` of the pool
(Izzo et al., TMLR 2024, Alg. 1; docs/theory.md section 2b). :func:`fit_on_halves` fits clones of an
estimator on random halves drawn by :func:`mipkit.game.splits.random_halves` (the one source of halves, so
the same seed gives the same halves as the Bayes game and the model audit) and keeps only the released
parameter vectors; :func:`estimate_spread` turns those vectors into per-coordinate weights and
``sigma_1 = E||theta - E theta||_{w,p}`` with a bootstrap upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import _safe_indexing

from mipkit._progress import Progress, Tally
from mipkit._random import RandomState, check_random_state, spawn_seeds
from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.game.splits import random_halves
from mipkit.game.trainers import seed_noise
from mipkit.mechanisms.mip_calibration import CALIBRATIONS
from mipkit.mechanisms.noise_samplers import weighted_norm

__all__ = [
    "DEFAULT_ATTRIBUTES",
    "SpreadEstimate",
    "estimate_spread",
    "fit_on_halves",
    "get_parameters",
    "num_samples",
    "set_parameters",
]

DEFAULT_ATTRIBUTES = ("coef_", "intercept_")
#: The stage :func:`fit_on_halves` reports to ``progress`` (units: fits).
STAGE = "fits on random halves"


@dataclass(frozen=True)
class SpreadEstimate:
    """The spread of ``A`` over random halves, estimated from ``B`` fits.

    Attributes
    ----------
    weights : ndarray (d,)
        Per-coordinate spread used as norm weights: the q-th central absolute moment
        ``(mean_b |theta_bi - mean theta_i|^q)^(1/q)`` with ``q`` = the norm order (mipkit) or ``M``
        (izzo2024), with the ``B/(B-1)`` correction; for izzo2024 the bootstrap upper bound per
        coordinate when ``confidence`` is set.
    sigma_1 : float
        Point estimate of ``E||theta - E theta||_{w,p}`` (times ``sqrt(B/(B-1))``).
    sigma_1_upper : float
        Bootstrap upper bound at ``confidence`` (equal to ``sigma_1`` when confidence is None): the point
        estimate plus the ``confidence`` quantile of the bootstrap estimation error, where each
        replicate re-estimates the weights too (the weights are fitted to the same fits, which biases
        the in-sample spread low).
    confidence : float or None
    n_fits : int
    """

    weights: np.ndarray
    sigma_1: float
    sigma_1_upper: float
    confidence: float | None
    n_fits: int


def estimate_spread(
    outputs: np.ndarray,
    *,
    calibration: str = "mipkit-gaussian",
    norm_order: float = 2.0,
    moment: float = 2.0,
    confidence: float | None = 0.95,
    n_bootstrap: int = 1000,
    random_state: RandomState = None,
) -> SpreadEstimate:
    """Estimate the spread of ``A(D_train)`` from outputs of fits on random halves (docs/theory.md 2b).

    Parameters
    ----------
    outputs : ndarray (B, d)
        One released vector per fit, ``B >= 2``.
    calibration : str
        Which calibration the estimate is for (sets the moment order of the weights).
    norm_order, moment : float
        ``p`` (mipkit) and ``M`` (izzo2024).
    confidence : float in (0, 1) or None
        Level of the bootstrap upper bound used for calibration; None uses the point estimate
        (Alg. 1 of Izzo et al. as published).
    n_bootstrap : int
        Bootstrap replicates (resampling the ``B`` fits).
    random_state : int, Generator or None

    Returns
    -------
    SpreadEstimate
    """
    check_choice("calibration", calibration, CALIBRATIONS, owner="estimate_spread")
    theta = np.asarray(outputs, dtype=float)
    if theta.ndim != 2 or theta.shape[0] < 2:
        raise MipkitValueError("estimate_spread needs at least 2 fits (outputs of shape (B, d), B >= 2).")
    if confidence is not None:
        confidence = check_interval("confidence", confidence, 0.0, 1.0, owner="estimate_spread")
    b = theta.shape[0]
    q = moment if calibration == "izzo2024" else (2.0 if calibration == "mipkit-gaussian" else norm_order)
    rng = check_random_state(random_state)

    def qth_moment(rows: np.ndarray) -> np.ndarray:
        dev = np.abs(rows - rows.mean(axis=0))
        return (np.mean(dev**q, axis=0) * b / (b - 1)) ** (1.0 / q)

    weights = qth_moment(theta)
    weights = np.where(weights > 1e-12 * (1.0 + np.abs(theta).max(axis=0)), weights, 0.0)
    if not np.any(weights > 0):
        raise MipkitValueError(
            "The fitted output did not vary over the random halves: nothing to calibrate (is the "
            "estimator ignoring its data, or are the attributes constant?). Pass an a-priori 'sigma'."
        )
    boot_idx = rng.integers(0, b, size=(n_bootstrap, b)) if confidence is not None else None
    if calibration == "izzo2024":
        if boot_idx is not None:
            reps = np.stack([qth_moment(theta[i]) for i in boot_idx])
            weights = np.where(weights > 0, np.maximum(weights, np.quantile(reps, confidence, axis=0)), 0.0)
        return SpreadEstimate(weights, 1.0, 1.0, confidence, b)
    p = 2.0 if calibration == "mipkit-gaussian" else q
    corr = math.sqrt(b / (b - 1))
    centred = theta - theta.mean(axis=0)
    sigma_1 = float(weighted_norm(centred, weights, p).mean() * corr)
    upper = sigma_1
    if boot_idx is not None:
        # The weights are fitted to the same fits, which biases sigma_1 (in that norm) low: bootstrap the
        # estimation error itself. In replicate r the weights w* and the estimate est* come from the
        # resampled fits; the "truth" for w* is the spread of the original fits in the norm of w*.
        # Upper bound: sigma_1 + quantile_conf(truth* - est*).
        errors = np.empty(n_bootstrap)
        for r, i in enumerate(boot_idx):
            rows = theta[i]
            w_star = qth_moment(rows)
            w_star = np.where((w_star > 0) & (weights > 0), w_star, weights)
            est_star = weighted_norm(rows - rows.mean(axis=0), w_star, p).mean() * corr
            truth_star = weighted_norm(centred, w_star, p).mean()
            errors[r] = truth_star - est_star
        upper = max(sigma_1, sigma_1 + float(np.quantile(errors, confidence)))
    return SpreadEstimate(weights, sigma_1, upper, confidence, b)


def get_parameters(estimator: Any, attributes: Sequence[str]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Concatenate the fitted numeric attributes into one vector; return it and their shapes."""
    parts, shapes = [], []
    for name in attributes:
        if not hasattr(estimator, name):
            raise MipkitValueError(
                f"The fitted estimator {type(estimator).__name__} has no attribute {name!r}; choose "
                "'attributes' among its fitted numeric attributes (e.g. coef_, intercept_)."
            )
        value = getattr(estimator, name)
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise MipkitValueError(f"The fitted attribute {name!r} is not numeric.") from None
        shapes.append(arr.shape)
        parts.append(arr.ravel())
    vec = np.concatenate(parts) if parts else np.zeros(0)
    if vec.size == 0 or not np.all(np.isfinite(vec)):
        raise MipkitValueError("The fitted attributes are empty or contain NaN/inf.")
    return vec, shapes


def set_parameters(
    estimator: Any, attributes: Sequence[str], vector: np.ndarray, shapes: Sequence[tuple[int, ...]]
) -> None:
    """Write ``vector`` back into the attributes (inverse of :func:`get_parameters`)."""
    start = 0
    for name, shape in zip(attributes, shapes, strict=True):
        size = int(np.prod(shape)) if shape else 1
        value = np.asarray(vector[start : start + size]).reshape(shape)
        old = getattr(estimator, name)
        setattr(estimator, name, float(value) if np.ndim(old) == 0 else value.astype(np.asarray(old).dtype))
        start += size


def num_samples(X: Any) -> int:
    """Number of rows of an array, DataFrame or list."""
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


def _fit_one(estimator: Any, X: Any, y: Any, attributes: tuple[str, ...], idx: np.ndarray, seed: int):
    """Fit a clone on the rows ``idx`` (seeding its ``random_state`` with ``seed``); its parameter vector."""
    est = seed_noise(clone(estimator), seed)  # a measurement: reproducible, its DP noise too
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
    Xh = _safe_indexing(X, idx)
    try:
        if y is None:
            est.fit(Xh)
        else:
            est.fit(Xh, _safe_indexing(y, idx))
    except ValueError as err:
        raise MipkitValueError(f"Fitting {type(est).__name__} on a random half failed: {err}") from None
    return get_parameters(est, attributes)[0]


def fit_on_halves(
    estimator: Any,
    X: Any,
    y: Any = None,
    *,
    n_fits: int,
    attributes: Sequence[str] = DEFAULT_ATTRIBUTES,
    random_state: RandomState = None,
    n_jobs: int | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit clones of ``estimator`` on ``n_fits`` random halves of ``(X, y)``, in parallel (joblib).

    The halves are ``random_halves(n, n_fits, random_state=rng)`` with ``rng`` the Generator of
    ``random_state`` (so ``halves`` equals :func:`mipkit.game.splits.random_halves` for the same seed);
    then ``n_fits`` seeds are drawn from the same ``rng`` (:func:`~mipkit._random.spawn_seeds`), one per
    fit, for estimators with a ``random_state`` parameter. Results therefore do not depend on ``n_jobs``.
    Workers return only the parameter vector and the results stream into a preallocated array, so memory
    holds the ``n_fits x d`` outputs and not the fitted models.

    Returns
    -------
    outputs : ndarray (n_fits, d)
        ``outputs[b]`` is the parameter vector fitted on the rows ``halves[b]``.
    halves : bool ndarray (n_fits, n)

    ``progress("fits on random halves", done, n_fits)`` after each fit.
    """
    n_fits = check_positive_int("n_fits", n_fits, owner="fit_on_halves")
    n = num_samples(X)
    if n < 4:
        raise MipkitValueError(f"Need at least 4 records to fit on random halves. Got {n}.")
    rng = check_random_state(random_state)
    halves = random_halves(n, n_fits, random_state=rng)
    seeds = spawn_seeds(rng, n_fits)
    outputs: np.ndarray | None = None
    attrs = tuple(attributes)
    tally = Tally(progress, STAGE, n_fits)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_fit_one)(estimator, X, y, attrs, np.flatnonzero(h), s)
        for h, s in zip(halves, seeds, strict=True)
    )
    for i, vec in enumerate(results):
        if outputs is None:
            outputs = np.empty((n_fits, vec.size))
        outputs[i] = vec
        tally.add()
    assert outputs is not None
    return outputs, halves
