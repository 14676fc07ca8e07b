"""MIP by noise addition: the ``MIPNoise`` meta-estimator and the ``mip_release`` function wrapper.

What the guarantee covers (docs/theory.md sections 1-2; Izzo et al., TMLR 2024, Def. 1). Membership
inference privacy is a property of a release *with respect to a pool* ``D`` of ``n`` candidate records: the
released ``theta_hat = A(D_train) + X`` is eta-MIP if no attacker who knows ``D``, the algorithm ``A`` and
the noise law can tell whether a given record of ``D`` is in the uniformly random half ``D_train`` (``n // 2``
records) with accuracy above ``max(p, 1 - p) + eta``, ``p = (n // 2) / n`` (1/2 + eta for an even pool; an
odd pool's bound includes the ``1 - p > 1/2`` that always guessing "out" achieves). The noise is
calibrated to ``sigma``, the spread of ``A(D_train)`` over random halves of ``D``; the calibration must be a
function of ``D`` alone (not of which half was used).

The pieces: the calibrations ``"mipkit-gaussian"`` (default), ``"mipkit-laplace"`` (Theorem A) and
``"izzo2024"`` (Cor. 10 as published) in :mod:`mipkit.mechanisms.mip_calibration`; fits on random halves
and the spread estimate in :mod:`mipkit.mechanisms.spread`; the certificate in
:mod:`mipkit.mechanisms.certificate`. Random halves come from :func:`mipkit.game.splits.random_halves`.

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
noise per coordinate. An estimated sigma, and the noise scaled by it, are statistics of the private data:
:meth:`MIPNoise.release` is the copy to publish, without them (and without the fits on halves and the
secret half). The released estimator holds the noised parameters and the schema alone, none of the wrapped
estimator's other fitted state (:mod:`mipkit.mechanisms.published`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if

from mipkit._progress import Progress
from mipkit._random import RandomState, check_noise_seed, noise_generator, noise_source, spawn_seeds
from mipkit._validation import MipkitValueError
from mipkit.game.splits import membership_probability, random_half, random_halves
from mipkit.game.trainers import trainer_class
from mipkit.mechanisms.certificate import MIPCertificate, certify_noise, seed_of
from mipkit.mechanisms.mip_calibration import MIP_PARAMETERS, MIPParams, check_mip_params
from mipkit.mechanisms.noise_samplers import NoiseLaw
from mipkit.mechanisms.published import published_estimator
from mipkit.mechanisms.spread import (
    DEFAULT_ATTRIBUTES,
    fit_on_halves,
    get_parameters,
    num_samples,
    set_parameters,
)

__all__ = ["MIPNoise", "MIPRelease", "load_estimator", "mip_release"]

PROBE_ROWS = 8
"""Training rows on which the released estimator must predict as the fitted one does (checked, not kept)."""


def load_estimator(import_path: str, params: dict | None = None) -> BaseEstimator:
    """Build an estimator from an import path like ``"sklearn.linear_model.LogisticRegression"``.

    The class is checked by :func:`mipkit.game.trainers.trainer_class` before anything is imported or
    built: a scikit-learn estimator, a registered trainer or an allowed class, with ``fit``. Raises
    :class:`MipkitValueError` if it is none of these, does not import, refuses the parameters, or the
    instance has no ``get_params``.
    """
    if not isinstance(import_path, str) or "." not in import_path:
        raise MipkitValueError(
            f"The model must be an import path like 'sklearn.linear_model.LogisticRegression'. "
            f"Got {import_path!r} instead."
        )
    cls = trainer_class(import_path, classifier=False)
    try:
        est = cls(**(params or {}))
    except TypeError as err:
        raise MipkitValueError(f"Cannot build {import_path!r} with parameters {params}: {err}") from None
    if not callable(getattr(est, "get_params", None)):
        raise MipkitValueError(
            f"The model {import_path!r} is not a scikit-learn style estimator (needs fit and get_params)."
        )
    return est


def _prior(n: int, train_on: str) -> float:
    """The game's ``P(record in D_train)``: ``(n // 2) / n`` on the pool passed (``"half"``), 1/2 on the
    pool of ``2n`` rows that ``"all"`` refers to."""
    return membership_probability(n) if train_on == "half" else 0.5


def _estimator_has(attr: str):
    """For ``available_if``: the wrapped (fitted, else unfitted) estimator has ``attr``."""

    def check(self) -> bool:
        target = getattr(self, "estimator_", self.estimator)
        return hasattr(target, attr)

    return check


class MIPNoise(MetaEstimatorMixin, BaseEstimator):
    """Make any estimator with numeric fitted parameters eta-MIP by adding calibrated noise to them.

    See the module docstring for what the guarantee covers. After ``fit``, ``estimator_`` is an unfitted
    clone of ``estimator`` given the *noisy* ``attributes`` and the public schema alone
    (:func:`~mipkit.mechanisms.published.published_estimator`), so ``predict`` / ``predict_proba`` use the
    released model; the noise-free parameters and the estimator's other fitted state (statistics of the
    private data the certificate does not cover) are not kept, and an estimator that needs that state to
    predict is refused.

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
        Seeds the estimator and the sigma estimation (fits on random halves, bootstrap).
    noise_seed : int or None
        The protective randomness, the added noise and (``train_on="half"``) which half is trained on, comes
        from OS entropy unless this is given (it is also handed to an estimator whose own ``noise_seed`` is
        None). With it the same ``random_state`` and ``noise_seed`` give the same release, which then is not
        private against anyone who holds ``noise_seed``.
    n_jobs : int or None
        joblib workers for the sigma-estimation fits.

    Attributes
    ----------
    estimator_ : estimator
        Clone holding the noisy parameters and the schema (classes, feature count and names) only.
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
        noise_seed: int | None = None,
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
        self.noise_seed = noise_seed
        self.n_jobs = n_jobs

    def _validate(self) -> tuple[MIPParams, tuple[str, ...]]:
        """The validated settings and attribute names (raises before any fitting)."""
        p = check_mip_params("MIPNoise", **{name: getattr(self, name) for name in MIP_PARAMETERS})
        if not all(callable(getattr(self.estimator, m, None)) for m in ("fit", "get_params")):
            raise MipkitValueError(
                "The 'estimator' parameter of MIPNoise must be a scikit-learn style estimator (fit, "
                f"get_params). Got {self.estimator!r}."
            )
        attrs = (self.attributes,) if isinstance(self.attributes, str) else tuple(self.attributes)
        if not attrs or not all(isinstance(a, str) for a in attrs):
            raise MipkitValueError("The 'attributes' parameter of MIPNoise must be attribute names.")
        check_noise_seed(self.noise_seed, owner="MIPNoise")
        return p, attrs

    def fit(self, X: Any, y: Any = None, *, progress: Progress | None = None) -> MIPNoise:
        """Train, calibrate and add the noise.

        Parameters
        ----------
        X, y : array-like
            The data (see ``train_on``).
        progress : Progress, optional
            ``progress("fits on random halves", done, total)`` over the sigma-estimation fits.
        """
        p, attrs = self._validate()
        n = num_samples(X)
        if n < 4:
            raise MipkitValueError(f"MIPNoise needs at least 4 records. Got {n}.")
        seed_est, seed_fits, seed_boot, _ = spawn_seeds(self.random_state, 4)
        secret = noise_generator(self.noise_seed)  # the secret half, then the noise
        if p.train_on == "half":
            train_idx = np.flatnonzero(random_half(n, random_state=secret))
        else:
            train_idx = np.arange(n)
        est = clone(self.estimator)
        params = est.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            est.set_params(random_state=seed_est)
        if self.noise_seed is not None and "noise_seed" in params and params["noise_seed"] is None:
            est.set_params(noise_seed=self.noise_seed)
        Xt = _safe_indexing(X, train_idx)
        try:
            est.fit(Xt) if y is None else est.fit(Xt, _safe_indexing(y, train_idx))
        except ValueError as err:
            raise MipkitValueError(f"Fitting {type(est).__name__} failed: {err}") from None
        theta, shapes = get_parameters(est, attrs)
        probe = _safe_indexing(Xt, np.arange(min(PROBE_ROWS, train_idx.size)))
        est = published_estimator(est, attrs, probe)  # the noised attributes and the schema alone
        outputs = masks = None
        if self.sigma is None:
            outputs, masks = fit_on_halves(
                self.estimator,
                X,
                y,
                n_fits=p.n_estimates,
                attributes=attrs,
                random_state=seed_fits,
                n_jobs=self.n_jobs,
                progress=progress,
            )
        cal = certify_noise(
            p,
            dim=theta.size,
            sigma=self.sigma,
            outputs=outputs,
            seed=seed_of(self.random_state),
            random_state=seed_boot,
            owner="MIPNoise",
            noise_source=noise_source(self.noise_seed),
            membership_probability=_prior(n, p.train_on),
        )
        released = theta + cal.noise.sample(1, random_state=secret)[0]
        set_parameters(est, attrs, released, shapes)
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

    def release(self, *, include_estimates: bool = False) -> MIPNoise:
        """A copy to publish (save, hand over): the noisy model and its certificate, nothing else.

        Left out: the fits on halves (``half_outputs_``, ``half_masks_``, noise-free models of the data), the
        secret half (``train_indices_``, whose knowledge undoes the guarantee of ``train_on="half"``) and,
        with an estimated sigma, the noise law and the certificate's estimates
        (:meth:`MIPCertificate.redacted`), statistics of the private data; ``include_estimates`` keeps the
        last two. ``estimator_`` holds the noisy parameters and the schema alone (see :meth:`fit`), and the
        ``estimator`` parameter is an unfitted clone, whatever was passed. ``predict`` and
        ``predict_proba`` work on the copy.
        """
        out = copy.copy(self)
        for name in ("half_outputs_", "half_masks_", "train_indices_"):
            out.__dict__.pop(name, None)
        out.estimator = clone(self.estimator)
        out.certificate_ = self.certificate_.redacted(include_estimates=include_estimates)
        if out.certificate_.estimates_withheld:
            out.__dict__.pop("noise_", None)
        return out

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
        """Decision function of the noisy model."""
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X: Any, y: Any = None, **kwargs: Any) -> float:
        """The wrapped estimator's score, with the noisy parameters."""
        return self.estimator_.score(X, y, **kwargs)


@dataclass(frozen=True)
class MIPRelease:
    """A noisy release of a vector-valued function of the data, with its certificate."""

    value: np.ndarray
    certificate: MIPCertificate
    noise: NoiseLaw


def _check_release(
    fn: Callable[[Any], Any], D: Any, eta: float, sigma: Any, noise_seed: int | None, options: dict[str, Any]
) -> tuple[MIPParams, int]:
    """The checked MIP parameters of :func:`mip_release` and the number of records of ``D``."""
    owner = "mip_release"
    unknown = sorted(set(options) - set(MIP_PARAMETERS))
    if unknown:
        raise MipkitValueError(
            f"Unknown parameter(s) {unknown} of {owner}; it takes fn, D, random_state and the MIP "
            f"parameters {list(MIP_PARAMETERS)}."
        )
    p = check_mip_params(owner, eta=eta, sigma=sigma, **options)
    if not callable(fn):
        raise MipkitValueError(f"The 'fn' parameter of {owner} must be callable.")
    n = num_samples(D)
    if n < 4:
        raise MipkitValueError(f"{owner} needs at least 4 records. Got {n}.")
    check_noise_seed(noise_seed, owner=owner)
    return p, n


def _evaluate(fn: Callable[[Any], Any], D: Any, idx: np.ndarray) -> np.ndarray:
    """``fn`` of the rows ``idx`` of ``D`` as a flat float vector (refused when empty or not finite)."""
    out = np.atleast_1d(np.asarray(fn(_safe_indexing(D, idx)), dtype=float)).ravel()
    if out.size == 0 or not np.all(np.isfinite(out)):
        raise MipkitValueError("The function passed to mip_release returned an empty or non-finite value.")
    return out


def mip_release(
    fn: Callable[[Any], Any],
    D: Any,
    *,
    eta: float = 0.05,
    sigma: Any = None,
    random_state: RandomState = None,
    noise_seed: int | None = None,
    **options: Any,
) -> MIPRelease:
    """Release ``fn(D_train) + X``, eta-MIP noise for a callable ``D -> vector``.

    ``D`` is indexed by rows (NumPy array, DataFrame or list). Same parameters and guarantee as
    :class:`MIPNoise` (``train_on="all"`` applies ``fn`` to all of ``D``; ``"half"`` to a random half).
    The sigma-estimation evaluations run sequentially (``fn`` may not be picklable).

    Parameters
    ----------
    fn : callable
        ``fn(rows of D) -> numeric vector`` (the released quantity, e.g. a mean).
    D : array-like
        The data (see ``train_on``).
    eta : float in (0, 1/2), default=0.05
        Target: attack accuracy at most ``1/2 + eta``.
    sigma : float or array of shape (d,), optional
        A-priori spread bounds (exact guarantee); estimated from ``n_estimates`` evaluations on random
        halves otherwise.
    random_state : int, Generator or None
        Seeds the sigma estimation (evaluations on random halves, bootstrap).
    noise_seed : int or None
        As :class:`MIPNoise`: the noise and the secret half come from OS entropy unless this is given.
    **options
        The other settings of :class:`MIPNoise`, with its defaults: ``calibration``, ``n_estimates``,
        ``confidence``, ``moment``, ``norm_order``, ``train_on``, ``sensitivity``, ``sensitivity_norm``,
        ``choose``.

    Returns
    -------
    MIPRelease
        The noisy value, its certificate and the noise law.
    """
    owner = "mip_release"
    p, n = _check_release(fn, D, eta, sigma, noise_seed, options)
    _, seed_fits, seed_boot, _ = spawn_seeds(random_state, 4)
    secret = noise_generator(noise_seed)  # the secret half, then the noise
    evaluate = functools.partial(_evaluate, fn, D)
    if p.train_on == "half":
        train_idx = np.flatnonzero(random_half(n, random_state=secret))
    else:
        train_idx = np.arange(n)
    theta = evaluate(train_idx)
    outputs = None
    if sigma is None:
        halves = random_halves(n, p.n_estimates, random_state=seed_fits)
        outputs = np.stack([evaluate(np.flatnonzero(h)) for h in halves])
    cal = certify_noise(
        p,
        dim=theta.size,
        sigma=sigma,
        outputs=outputs,
        seed=seed_of(random_state),
        random_state=seed_boot,
        owner=owner,
        noise_source=noise_source(noise_seed),
        membership_probability=_prior(n, p.train_on),
    )
    value = theta + cal.noise.sample(1, random_state=secret)[0]
    return MIPRelease(value=value, certificate=cal.certificate, noise=cal.noise)
