"""MIP by noise addition: the ``MIPNoise`` meta-estimator and the ``mip_release`` function wrapper.

What the guarantee covers (MATH.md 1-2; Izzo et al., TMLR 2024, Def. 1). Membership inference privacy
is a property of a release *with respect to a pool* ``D`` of ``n`` candidate records: the released
``theta_hat = A(D_train) + X`` is eta-MIP if no attacker who knows ``D``, the algorithm ``A`` and the
noise law can tell whether a given record of ``D`` is in the uniformly random half ``D_train`` with
accuracy above ``1/2 + eta``. The noise is calibrated to ``sigma``, the spread of ``A(D_train)`` over
random halves of ``D``; the calibration must be a function of ``D`` alone (not of which half was used).

Calibrations (``calibration=``):

- ``"mipkit-laplace"`` - Theorem A (MATH.md 2b): density ``exp(-||x||/s)`` (radius ``Gamma(d, s)``),
  ``s = sigma_1 / (2 eta)``, ``sigma_1 >= E||theta - E theta||`` in the weighted l_p norm.
- ``"mipkit-gaussian"`` (default) - Theorem A, Gaussian variant: ``N(0, s^2 W)``,
  ``s = sigma_1 / (eta sqrt(2 pi))`` in the weighted l2 norm. Least noise per coordinate.
- ``"izzo2024"`` - Corollary 10 as published: GenNormal direction, Laplace radius with scale
  ``(6.16/eta)^(1+2/M)``; for ``d > 1`` the Laplace radius does not give the density the theorem
  assumes (MATH.md 2a), and the constant is ``(6.16/0.05)^2 / 10 ~ 1500`` times Theorem A's at
  ``eta = 0.05``. Kept for comparison.

The norm is ``||x||_{w,p} = ((1/d) sum_i |x_i / w_i|^p)^(1/p)`` with per-coordinate weights ``w_i``:
either the a-priori ``sigma`` (then ``sigma_1 = 1``: ``E||theta - E theta|| <= (E||.||^p)^(1/p) <= 1``
when each ``w_i`` bounds the p-th central absolute moment of coordinate ``i``) or the estimated
per-coordinate spreads (then ``sigma_1`` is estimated directly, with a bootstrap upper bound).

Two ways to use ``fit(X, y)`` (``train_on=``):

- ``"half"``: ``(X, y)`` is the pool ``D``. ``sigma`` is estimated from ``n_estimates`` fits on random
  halves of ``D`` (a function of ``D`` alone), the estimator is trained on one more random half
  ``D_train`` (``train_indices_``, secret) and the noisy parameters are released. This is exactly the
  MIP game: the guarantee is exact with an a-priori ``sigma`` and approximate only through the
  estimation error of ``sigma`` otherwise.
- ``"all"`` (default, scikit-learn's convention): the estimator is trained on all of ``(X, y)``, read as
  ``D_train``, a random half of a larger pool ``D`` that ``MIPNoise`` never sees. ``sigma`` is estimated,
  as in Alg. 1 of Izzo et al., from fits on random halves of ``(X, y)``: those use half as many records
  as the release, so they usually *overstate* the spread over halves of ``D`` (conservative), but they
  depend on ``D_train``, so the guarantee is a heuristic one unless ``sigma`` is given a priori as a
  bound on the spread of ``A`` over halves of ``D``.

The certificate (``certificate_``) says which case applies (``exact``), how sigma was obtained, and the
noise per coordinate.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if

from mipkit._random import RandomState, check_random_state, spawn_seeds
from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_eta,
    check_interval,
    check_positive,
    check_positive_int,
)
from mipkit.mechanisms.dp_noise import DPNoiseOption, dp_alternatives
from mipkit.mechanisms.noise_samplers import (
    ExpNormNoise,
    GaussianNoise,
    Izzo2024Noise,
    NoiseLaw,
    weighted_norm,
)

__all__ = [
    "CALIBRATIONS",
    "IZZO_CONSTANT",
    "MIPCertificate",
    "MIPNoise",
    "MIPRelease",
    "SpreadEstimate",
    "calibrate_noise",
    "estimate_spread",
    "fit_on_halves",
    "get_parameters",
    "load_estimator",
    "mip_release",
    "set_parameters",
]

CALIBRATIONS = ("mipkit-laplace", "mipkit-gaussian", "izzo2024")
IZZO_CONSTANT = 6.16  # Cor. 14 of Izzo et al. (TMLR 2024), valid for M >= 2
DEFAULT_ATTRIBUTES = ("coef_", "intercept_")


# --------------------------------------------------------------------------------------------------
# Pure calibration arithmetic
# --------------------------------------------------------------------------------------------------
def calibrate_noise(
    eta: float,
    calibration: str,
    weights: np.ndarray,
    *,
    sigma_1: float = 1.0,
    moment: float = 2.0,
    norm_order: float = 2.0,
) -> NoiseLaw:
    """The noise law that makes ``A(D_train) + X`` eta-MIP, given the spread of ``A``.

    Parameters
    ----------
    eta : float in (0, 1/2)
    calibration : {"mipkit-laplace", "mipkit-gaussian", "izzo2024"}
    weights : array (d,)
        Per-coordinate weights ``w_i`` of the norm ``||x||_{w,p}`` (0 = constant coordinate).
    sigma_1 : float
        Bound on ``E||theta - E theta||_{w,p}`` (mipkit calibrations; Theorem A). For ``"izzo2024"`` the
        weights must bound the per-coordinate M-th moments, so that ``E||theta - E theta||^M <= 1``
        and Theorem 9's ``sigma`` is 1 (Cor. 10); ``sigma_1`` is not used.
    moment : float >= 2
        ``M`` for ``"izzo2024"``.
    norm_order : float >= 1
        ``p`` of the norm for ``"mipkit-laplace"`` (``"mipkit-gaussian"`` uses 2).

    Returns
    -------
    NoiseLaw
        ``ExpNormNoise(sigma_1/(2 eta))``, ``GaussianNoise(sigma_1/(eta sqrt(2 pi)))`` or
        ``Izzo2024Noise((6.16/eta)^(1+2/M))``.
    """
    eta = check_eta(eta, owner="calibrate_noise")
    check_choice("calibration", calibration, CALIBRATIONS, owner="calibrate_noise")
    if calibration == "mipkit-laplace":
        s1 = check_positive("sigma_1", sigma_1, owner="calibrate_noise")
        return ExpNormNoise(s1 / (2.0 * eta), weights, p=norm_order)
    if calibration == "mipkit-gaussian":
        s1 = check_positive("sigma_1", sigma_1, owner="calibrate_noise")
        return GaussianNoise(s1 / (eta * math.sqrt(2.0 * math.pi)), weights)
    m = check_interval("moment", moment, 2.0, math.inf, closed="left", owner="calibrate_noise")
    return Izzo2024Noise((IZZO_CONSTANT / eta) ** (1.0 + 2.0 / m), weights, moment=m)


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
    """Estimate the spread of ``A(D_train)`` from outputs of fits on random halves (MATH.md 2b).

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


# --------------------------------------------------------------------------------------------------
# Estimator plumbing
# --------------------------------------------------------------------------------------------------
def load_estimator(import_path: str, params: dict | None = None) -> BaseEstimator:
    """Build an estimator from an import path like ``"sklearn.linear_model.LogisticRegression"``.

    Raises :class:`MipkitValueError` if the path does not import, is not a class, or the instance has no
    ``fit`` method or refuses the parameters.
    """
    if not isinstance(import_path, str) or "." not in import_path:
        raise MipkitValueError(
            f"The model must be an import path like 'sklearn.linear_model.LogisticRegression'. "
            f"Got {import_path!r} instead."
        )
    module_name, _, attr = import_path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError, ValueError) as err:
        raise MipkitValueError(f"Cannot import the model {import_path!r}: {err}") from None
    if not isinstance(cls, type):
        raise MipkitValueError(f"The model {import_path!r} is not a class.")
    try:
        est = cls(**(params or {}))
    except TypeError as err:
        raise MipkitValueError(f"Cannot build {import_path!r} with parameters {params}: {err}") from None
    if not callable(getattr(est, "fit", None)) or not callable(getattr(est, "get_params", None)):
        raise MipkitValueError(
            f"The model {import_path!r} is not a scikit-learn style estimator (needs fit and get_params)."
        )
    return est


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


def _half(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=n // 2, replace=False))


def _fit_one(estimator, X, y, attributes, seed: int) -> np.ndarray:
    idx = _half(_num_samples(X), seed)
    est = clone(estimator)
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


def _num_samples(X) -> int:
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


def fit_on_halves(
    estimator: Any,
    X: Any,
    y: Any = None,
    *,
    n_fits: int,
    attributes: Sequence[str] = DEFAULT_ATTRIBUTES,
    random_state: RandomState = None,
    n_jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit clones of ``estimator`` on ``n_fits`` random halves of ``(X, y)``, in parallel (joblib).

    Each fit gets its own seed (:func:`~mipkit._random.spawn_seeds`) that picks its half and, when the
    estimator has a ``random_state`` parameter, seeds it, so results do not depend on ``n_jobs``. Workers
    return only the parameter vector and the results stream into a preallocated array, so memory holds
    the ``n_fits x d`` outputs and not the fitted models.

    Returns
    -------
    outputs : ndarray (n_fits, d)
    halves : bool ndarray (n_fits, n)
    """
    n_fits = check_positive_int("n_fits", n_fits, owner="fit_on_halves")
    n = _num_samples(X)
    if n < 4:
        raise MipkitValueError(f"Need at least 4 records to fit on random halves. Got {n}.")
    seeds = spawn_seeds(random_state, n_fits)
    halves = np.zeros((n_fits, n), dtype=bool)
    for i, s in enumerate(seeds):
        halves[i, _half(n, s)] = True
    outputs: np.ndarray | None = None
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_fit_one)(estimator, X, y, tuple(attributes), s) for s in seeds
    )
    for i, vec in enumerate(results):
        if outputs is None:
            outputs = np.empty((n_fits, vec.size))
        outputs[i] = vec
        if progress is not None:
            progress(1)
    assert outputs is not None
    return outputs, halves


# --------------------------------------------------------------------------------------------------
# Certificate
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MIPCertificate:
    """What a MIP release guarantees and how much noise it took (frozen; ``to_dict`` for JSON).

    Attributes
    ----------
    eta : float
        The MIP target: attack accuracy ``<= 1/2 + eta``.
    calibration : str
        The MIP calibration asked for.
    released_with : str
        The noise actually added: the calibration, or a DP option when ``choose="smallest"`` picked one.
    sigma : list of float
        Per-coordinate spread (norm weights).
    sigma_1 : float
        Norm-level spread used (``E||theta - E theta||_{w,p}`` bound; 1 for a-priori weights and for
        izzo2024).
    sigma_source : str
        ``"a-priori"`` or ``"estimated: B fits, bootstrap upper CB at conf"``.
    exact : bool
        True when the guarantee is a theorem for this release (a-priori sigma with a proven
        calibration, or a DP option given a sensitivity bound); False when it rests on estimated sigma
        or on the published izzo2024 sampler in ``d > 1``.
    noise_scale : float
        The law's scale parameter (``s`` or the Laplace radius scale ``c``).
    noise_std : list of float
        Per-coordinate standard deviation of the added noise, from the law.
    noise_std_rms : float
        Root-mean-square of ``noise_std`` (the quantity ``choose="smallest"`` compares).
    seed : int or None
    n_fits : int
        Fits used to estimate sigma (0 with an a-priori sigma).
    train_on : str
    dim : int
    guarantee : str
        The statement in words.
    dp_alternatives : list of dict or None
        DP options for the same eta when a sensitivity was given.
    """

    eta: float
    calibration: str
    released_with: str
    sigma: list[float]
    sigma_1: float
    sigma_source: str
    exact: bool
    noise_scale: float
    noise_std: list[float]
    noise_std_rms: float
    seed: int | None
    n_fits: int
    train_on: str
    dim: int
    guarantee: str
    noise_law: dict = field(default_factory=dict)
    dp_alternatives: list[dict] | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def _guarantee_text(eta: float, exact: bool, train_on: str, released_with: str, sigma_source: str) -> str:
    acc = 0.5 + eta
    if released_with not in CALIBRATIONS:
        return (
            f"DP noise ({released_with}): for every pool D and every record, no attacker guesses membership "
            f"in the released half with accuracy above {acc:.4g} (DP implies MIP), provided the sensitivity "
            "bound holds."
        )
    who = (
        "the pool D = the data passed to fit (released model trained on a random half of it)"
        if train_on == "half"
        else "a pool D of which the data passed to fit is a uniformly random half"
    )
    if exact:
        return (
            f"Exact: eta-MIP with eta = {eta:g} w.r.t. {who}, given that sigma bounds the spread of the "
            f"output over random halves of D: attack accuracy <= {acc:.4g}."
        )
    if released_with == "izzo2024":
        return (
            f"Approximate: Cor. 10 of Izzo et al. as published (Laplace radius, {sigma_source}); its proof "
            "assumes an exp-norm density, which the Laplace radius gives only for d = 1. Target accuracy "
            f"<= {acc:.4g} w.r.t. {who}."
        )
    return (
        f"Approximate: eta-MIP with eta = {eta:g} w.r.t. {who} holds if the estimated sigma "
        f"({sigma_source}) bounds the true spread; target accuracy <= {acc:.4g}."
    )


@dataclass(frozen=True)
class _Calibrated:
    noise: NoiseLaw
    certificate: MIPCertificate


def _calibrate(
    *,
    eta: float,
    calibration: str,
    dim: int,
    sigma: Any,
    outputs: np.ndarray | None,
    confidence: float | None,
    moment: float,
    norm_order: float,
    sensitivity: float | None,
    sensitivity_norm: str,
    choose: str | None,
    train_on: str,
    seed: int | None,
    random_state: RandomState,
) -> _Calibrated:
    """From a-priori sigma or fitted outputs to a noise law and certificate (MIPNoise, mip_release)."""
    if outputs is None:
        w = np.asarray(sigma, dtype=float).ravel()
        if w.size == 1:
            w = np.full(dim, float(w[0]))
        if w.size != dim:
            raise MipkitValueError(
                f"The 'sigma' parameter of MIPNoise has {w.size} entries but the output has {dim}."
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise MipkitValueError("The 'sigma' parameter of MIPNoise must be finite, >= 0 and not all 0.")
        sigma_1, n_fits, source = 1.0, 0, "a-priori"
        exact = calibration != "izzo2024" or int(np.sum(w > 0)) == 1
    else:
        est = estimate_spread(
            outputs,
            calibration=calibration,
            norm_order=norm_order,
            moment=moment,
            confidence=confidence,
            random_state=random_state,
        )
        w, sigma_1, n_fits = est.weights, est.sigma_1_upper, est.n_fits
        source = (
            f"estimated: {n_fits} fits, bootstrap upper CB at {confidence:g}"
            if confidence is not None
            else f"estimated: {n_fits} fits, point estimate"
        )
        exact = False
    noise = calibrate_noise(eta, calibration, w, sigma_1=sigma_1, moment=moment, norm_order=norm_order)
    std = noise.coordinate_std()
    released_with = calibration
    alternatives = None
    if sensitivity is not None:
        options = dp_alternatives(eta, sensitivity, dim, sensitivity_norm=sensitivity_norm)
        alternatives = [o.to_dict() for o in options]
        if choose == "smallest":
            best: DPNoiseOption = min(options, key=lambda o: o.coordinate_std)
            if best.coordinate_std < _rms(std):
                noise = best.noise_law()
                std = noise.coordinate_std()
                released_with, exact = best.name, True
    cert = MIPCertificate(
        eta=eta,
        calibration=calibration,
        released_with=released_with,
        sigma=[float(v) for v in w],
        sigma_1=float(sigma_1),
        sigma_source=source,
        exact=bool(exact),
        noise_scale=float(noise.scale),
        noise_std=[float(v) for v in std],
        noise_std_rms=_rms(std),
        seed=seed,
        n_fits=int(n_fits),
        train_on=train_on,
        dim=int(dim),
        guarantee=_guarantee_text(eta, bool(exact), train_on, released_with, source),
        noise_law=noise.to_dict(),
        dp_alternatives=alternatives,
    )
    return _Calibrated(noise, cert)


def _calibrate_from_params(p: dict, *, dim: int, sigma, outputs, seed, random_state) -> _Calibrated:
    """:func:`_calibrate` on the validated parameters ``p`` of :class:`MIPNoise` or :func:`mip_release`."""
    return _calibrate(
        eta=p["eta"],
        calibration=p["calibration"],
        dim=dim,
        sigma=sigma,
        outputs=outputs,
        confidence=p["confidence"],
        moment=p["moment"],
        norm_order=p["norm_order"],
        sensitivity=p["sensitivity"],
        sensitivity_norm=p["sensitivity_norm"],
        choose=p["choose"],
        train_on=p["train_on"],
        seed=seed,
        random_state=random_state,
    )


def _check_common(
    owner: str,
    *,
    eta,
    calibration,
    sigma,
    n_estimates,
    confidence,
    moment,
    norm_order,
    train_on,
    sensitivity,
    sensitivity_norm,
    choose,
) -> dict:
    out = {
        "eta": check_eta(eta, owner=owner),
        "calibration": check_choice("calibration", calibration, CALIBRATIONS, owner=owner),
        "moment": check_interval("moment", moment, 2.0, math.inf, closed="left", owner=owner),
        "norm_order": check_interval("norm_order", norm_order, 1.0, math.inf, closed="left", owner=owner),
        "train_on": check_choice("train_on", train_on, ("all", "half"), owner=owner),
        "sensitivity_norm": check_choice("sensitivity_norm", sensitivity_norm, ("l2", "l1"), owner=owner),
        "confidence": None
        if confidence is None
        else check_interval("confidence", confidence, 0.0, 1.0, owner=owner),
        "n_estimates": check_positive_int("n_estimates", n_estimates, minimum=2, owner=owner),
        "sensitivity": None
        if sensitivity is None
        else check_positive("sensitivity", sensitivity, owner=owner),
    }
    if choose is not None:
        check_choice("choose", choose, ("smallest",), owner=owner)
        if sensitivity is None:
            raise MipkitValueError(
                f"The 'choose' parameter of {owner} needs a 'sensitivity' bound to compare with DP noise."
            )
    out["choose"] = choose
    if isinstance(sigma, str):
        raise MipkitValueError(f"The 'sigma' parameter of {owner} must be numeric. Got {sigma!r} instead.")
    if sigma is not None:
        try:
            arr = np.asarray(sigma, dtype=float)
        except (TypeError, ValueError):
            raise MipkitValueError(f"The 'sigma' parameter of {owner} must be numeric.") from None
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) or not np.any(arr > 0):
            raise MipkitValueError(
                f"The 'sigma' parameter of {owner} must be finite, >= 0 and not all 0. Got {sigma!r} instead."
            )
    return out


def _seed_of(random_state: RandomState) -> int | None:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return None


# --------------------------------------------------------------------------------------------------
# The meta-estimator
# --------------------------------------------------------------------------------------------------
def _estimator_has(attr: str):
    def check(self) -> bool:
        target = getattr(self, "estimator_", self.estimator)
        return hasattr(target, attr)

    return check


class MIPNoise(MetaEstimatorMixin, BaseEstimator):
    """Make any estimator with numeric fitted parameters eta-MIP by adding calibrated noise to them.

    See the module docstring for what the guarantee covers. After ``fit``, ``estimator_`` is a fitted
    copy of ``estimator`` whose ``attributes`` hold the *noisy* parameters, so ``predict`` /
    ``predict_proba`` use the released model; the noise-free parameters are not kept.

    Parameters
    ----------
    estimator : estimator
        Unfitted scikit-learn style estimator (``fit``; numeric fitted attributes).
    eta : float in (0, 1/2), default=0.05
        Target: attack accuracy at most ``1/2 + eta``.
    calibration : {"mipkit-gaussian", "mipkit-laplace", "izzo2024"}, default="mipkit-gaussian"
    sigma : float or array of shape (d,), optional
        A-priori per-coordinate bounds on the spread of the released vector over random halves of the pool:
        the p-th central absolute moment ``(E|theta_i - E theta_i|^p)^(1/p)`` with ``p = norm_order`` for
        the mipkit calibrations (2 for Gaussian: the standard deviation) and ``p = moment`` for izzo2024.
        Given, the guarantee is exact; otherwise sigma is estimated.
    n_estimates : int >= 2, default=100
        Fits on random halves used to estimate sigma.
    confidence : float in (0, 1) or None, default=0.95
        Level of the bootstrap upper bound on sigma used for calibration (None: point estimate).
    moment : float >= 2, default=2
        ``M`` of izzo2024.
    norm_order : float >= 1, default=2
        ``p`` of the weighted norm for mipkit-laplace.
    attributes : tuple of str, default=("coef_", "intercept_")
        Fitted attributes that form the released vector.
    train_on : {"all", "half"}, default="all"
        See the module docstring.
    sensitivity : float, optional
        A sensitivity bound of the released vector (over neighbouring datasets), for the DP comparison.
    sensitivity_norm : {"l2", "l1"}, default="l2"
    choose : {None, "smallest"}
        ``"smallest"``: add whichever of the MIP noise and the DP options has the least RMS per-coordinate
        standard deviation (needs ``sensitivity``); the certificate records the choice.
    random_state : int, Generator or None
    n_jobs : int or None
        joblib workers for the sigma-estimation fits.

    Attributes
    ----------
    estimator_ : estimator
        Fitted copy with the noisy parameters.
    certificate_ : MIPCertificate
    noise_ : NoiseLaw
        The law of the added noise.
    released_ : ndarray (d,)
        The noisy parameter vector.
    half_outputs_ : ndarray (n_estimates, d) or None
        Outputs of the sigma-estimation fits (a function of the pool; used by the audit).
    half_masks_ : bool ndarray (n_estimates, n) or None
    train_indices_ : ndarray
        Rows used for the released fit (``train_on="half"``: the secret half).
    """

    def __init__(
        self,
        estimator: Any = None,
        *,
        eta: float = 0.05,
        calibration: str = "mipkit-gaussian",
        sigma: Any = None,
        n_estimates: int = 100,
        confidence: float | None = 0.95,
        moment: float = 2.0,
        norm_order: float = 2.0,
        attributes: Sequence[str] = DEFAULT_ATTRIBUTES,
        train_on: str = "all",
        sensitivity: float | None = None,
        sensitivity_norm: str = "l2",
        choose: str | None = None,
        random_state: RandomState = None,
        n_jobs: int | None = None,
    ) -> None:
        self.estimator = estimator
        self.eta = eta
        self.calibration = calibration
        self.sigma = sigma
        self.n_estimates = n_estimates
        self.confidence = confidence
        self.moment = moment
        self.norm_order = norm_order
        self.attributes = attributes
        self.train_on = train_on
        self.sensitivity = sensitivity
        self.sensitivity_norm = sensitivity_norm
        self.choose = choose
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _validate(self) -> dict:
        p = _check_common(
            "MIPNoise",
            eta=self.eta,
            calibration=self.calibration,
            sigma=self.sigma,
            n_estimates=self.n_estimates,
            confidence=self.confidence,
            moment=self.moment,
            norm_order=self.norm_order,
            train_on=self.train_on,
            sensitivity=self.sensitivity,
            sensitivity_norm=self.sensitivity_norm,
            choose=self.choose,
        )
        if not all(callable(getattr(self.estimator, m, None)) for m in ("fit", "get_params")):
            raise MipkitValueError(
                "The 'estimator' parameter of MIPNoise must be a scikit-learn style estimator (fit, "
                f"get_params). Got {self.estimator!r}."
            )
        attrs = (self.attributes,) if isinstance(self.attributes, str) else tuple(self.attributes)
        if not attrs or not all(isinstance(a, str) for a in attrs):
            raise MipkitValueError("The 'attributes' parameter of MIPNoise must be attribute names.")
        p["attributes"] = attrs
        return p

    def fit(self, X: Any, y: Any = None, *, progress: Callable[[int], None] | None = None) -> MIPNoise:
        """Train, calibrate and add the noise.

        Parameters
        ----------
        X, y : array-like
            The data (see ``train_on``).
        progress : callable, optional
            Called with 1 after each sigma-estimation fit (the CLI's progress bar).
        """
        p = self._validate()
        n = _num_samples(X)
        if n < 4:
            raise MipkitValueError(f"MIPNoise needs at least 4 records. Got {n}.")
        seed_split, seed_fits, seed_boot, seed_noise = spawn_seeds(self.random_state, 4)
        if p["train_on"] == "half":
            train_idx = _half(n, seed_split)
        else:
            train_idx = np.arange(n)
        est = clone(self.estimator)
        if "random_state" in est.get_params(deep=False) and est.get_params()["random_state"] is None:
            est.set_params(random_state=seed_split)
        Xt = _safe_indexing(X, train_idx)
        try:
            est.fit(Xt) if y is None else est.fit(Xt, _safe_indexing(y, train_idx))
        except ValueError as err:
            raise MipkitValueError(f"Fitting {type(est).__name__} failed: {err}") from None
        theta, shapes = get_parameters(est, p["attributes"])
        outputs = masks = None
        if self.sigma is None:
            outputs, masks = fit_on_halves(
                self.estimator,
                X,
                y,
                n_fits=p["n_estimates"],
                attributes=p["attributes"],
                random_state=seed_fits,
                n_jobs=self.n_jobs,
                progress=progress,
            )
        cal = _calibrate_from_params(
            p,
            dim=theta.size,
            sigma=self.sigma,
            outputs=outputs,
            seed=_seed_of(self.random_state),
            random_state=seed_boot,
        )
        released = theta + cal.noise.sample(1, random_state=seed_noise)[0]
        set_parameters(est, p["attributes"], released, shapes)
        del theta
        self.estimator_ = est
        self.certificate_ = cal.certificate
        self.noise_ = cal.noise
        self.released_ = released
        self.half_outputs_ = outputs
        self.half_masks_ = masks
        self.train_indices_ = train_idx
        if hasattr(est, "classes_"):
            self.classes_ = est.classes_
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    @available_if(_estimator_has("predict"))
    def predict(self, X: Any) -> np.ndarray:
        """Predict with the noisy model."""
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of the noisy model."""
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X: Any) -> np.ndarray:
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X: Any, y: Any = None, **kwargs: Any) -> float:
        return self.estimator_.score(X, y, **kwargs)


# --------------------------------------------------------------------------------------------------
# The function wrapper
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MIPRelease:
    """A noisy release of a vector-valued function of the data, with its certificate."""

    value: np.ndarray
    certificate: MIPCertificate
    noise: NoiseLaw


def mip_release(
    fn: Callable[[Any], Any],
    D: Any,
    *,
    eta: float = 0.05,
    calibration: str = "mipkit-gaussian",
    sigma: Any = None,
    n_estimates: int = 100,
    confidence: float | None = 0.95,
    moment: float = 2.0,
    norm_order: float = 2.0,
    train_on: str = "all",
    sensitivity: float | None = None,
    sensitivity_norm: str = "l2",
    choose: str | None = None,
    random_state: RandomState = None,
) -> MIPRelease:
    """Release ``fn(D_train) + X``, eta-MIP noise for a callable ``D -> vector``.

    ``D`` is indexed by rows (NumPy array, DataFrame or list). Same parameters and guarantee as
    :class:`MIPNoise` (``train_on="all"`` applies ``fn`` to all of ``D``; ``"half"`` to a random half).
    The sigma-estimation evaluations run sequentially (``fn`` may not be picklable).
    """
    owner = "mip_release"
    p = _check_common(
        owner,
        eta=eta,
        calibration=calibration,
        sigma=sigma,
        n_estimates=n_estimates,
        confidence=confidence,
        moment=moment,
        norm_order=norm_order,
        train_on=train_on,
        sensitivity=sensitivity,
        sensitivity_norm=sensitivity_norm,
        choose=choose,
    )
    if not callable(fn):
        raise MipkitValueError(f"The 'fn' parameter of {owner} must be callable.")
    n = _num_samples(D)
    if n < 4:
        raise MipkitValueError(f"{owner} needs at least 4 records. Got {n}.")
    seed_split, seed_fits, seed_boot, seed_noise = spawn_seeds(random_state, 4)

    def evaluate(idx: np.ndarray) -> np.ndarray:
        out = np.atleast_1d(np.asarray(fn(_safe_indexing(D, idx)), dtype=float)).ravel()
        if out.size == 0 or not np.all(np.isfinite(out)):
            raise MipkitValueError(f"The function passed to {owner} returned an empty or non-finite value.")
        return out

    train_idx = _half(n, seed_split) if p["train_on"] == "half" else np.arange(n)
    theta = evaluate(train_idx)
    outputs = None
    if sigma is None:
        seeds = spawn_seeds(seed_fits, p["n_estimates"])
        outputs = np.stack([evaluate(_half(n, s)) for s in seeds])
    cal = _calibrate_from_params(
        p, dim=theta.size, sigma=sigma, outputs=outputs, seed=_seed_of(random_state), random_state=seed_boot
    )
    value = theta + cal.noise.sample(1, random_state=seed_noise)[0]
    return MIPRelease(value=value, certificate=cal.certificate, noise=cal.noise)
