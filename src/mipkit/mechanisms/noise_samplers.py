"""Noise laws for MIP noise addition: exp-norm, Gaussian and the published Cor. 10 sampler.

Each law is a frozen record that describes the noise (its scale, the weights of its norm) with the
arithmetic on it in methods: ``sample`` (seeded), ``log_density`` (normalised, used by the optimal
attack in :mod:`mipkit.attacks.bayes`) and ``coordinate_std`` (the per-coordinate standard deviation,
computed from the law, so that calibrations can be compared).

All three laws use the same weighted ``l_p`` norm as Corollary 10 of Izzo et al. (TMLR 2024)::

    ||x||_{w,p} = ( (1/d) * sum_i |x_i / w_i|^p )^(1/p)

over the *active* coordinates (``w_i > 0``). A coordinate with ``w_i = 0`` is declared constant: it gets
no noise, and a released value that differs there has density zero.

Laws (docs/theory.md section 2):

- :class:`ExpNormNoise` - density proportional to ``exp(-||x||_{w,p} / s)``. Its radius ``||X||`` is
  ``Gamma(shape=d, scale=s)`` and its direction ``U = Y / ||Y||_{w,p}`` with ``Y_i = w_i G_i``,
  ``G_i`` i.i.d. generalized normal of order ``p`` (density proportional to ``exp(-|g|^p)``): the cone
  measure of the unit sphere, independent of the radius (Schechtman & Zinn 1990). This is the law of
  mipkit's Theorem A.
- :class:`GaussianNoise` - ``N(0, s^2 d diag(w^2))``, whose Mahalanobis norm is ``||x||_{w,2} / s``
  (Theorem A, Gaussian variant).
- :class:`Izzo2024Noise` - Corollary 10 as published: the same direction (with ``p = M``, the moment
  order) and a *Laplace* radius ``r ~ Laplace((6.16/eta)^(1+2/M))``. For ``d > 1`` its density is
  *not* ``exp(-||x||/c)`` (that needs a ``Gamma(d)`` radius, docs/theory.md section 2a "Caution,
  radius"): it is ``exp(-||x||/c) / (c d V ||x||^(d-1))`` with ``V`` the volume of the unit ball, which is
  what :meth:`Izzo2024Noise.log_density` returns, so the optimal attack uses the law actually sampled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_interval, check_positive, check_positive_int

__all__ = [
    "ExpNormNoise",
    "GaussianNoise",
    "Izzo2024Noise",
    "NoiseLaw",
    "direction_second_moment",
    "generalized_normal",
    "log_unit_ball_volume",
    "weighted_norm",
]


def _check_weights(weights, owner: str) -> np.ndarray:
    w = np.atleast_1d(np.asarray(weights, dtype=float))
    if w.ndim != 1 or w.size == 0:
        raise MipkitValueError(f"The 'weights' parameter of {owner} must be a non-empty 1-d array.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise MipkitValueError(
            f"The 'weights' parameter of {owner} must be finite and >= 0 (0 marks a constant coordinate)."
        )
    if not np.any(w > 0):
        raise MipkitValueError(f"The 'weights' parameter of {owner} must have at least one entry > 0.")
    w = w.copy()
    w.setflags(write=False)
    return w


def weighted_norm(x: np.ndarray, weights: np.ndarray, p: float) -> np.ndarray:
    """``||x||_{w,p} = ((1/d) sum_i |x_i/w_i|^p)^(1/p)`` over the last axis, active coordinates only.

    Parameters
    ----------
    x : ndarray of shape (..., d)
    weights : ndarray of shape (d,), entries >= 0 (0: coordinate left out of the norm)
    p : float >= 1

    Returns
    -------
    ndarray of shape (...)
    """
    x = np.asarray(x, dtype=float)
    active = weights > 0
    d = int(active.sum())
    z = np.abs(x[..., active] / weights[active])
    if p == 2.0:
        return np.sqrt(np.einsum("...i,...i->...", z, z) / d)
    if p == 1.0:
        return z.sum(axis=-1) / d
    return (np.sum(z**p, axis=-1) / d) ** (1.0 / p)


def log_unit_ball_volume(weights: np.ndarray, p: float) -> float:
    """``log Vol{x : ||x||_{w,p} <= 1}`` over the active coordinates.

    The set is ``{sum_i |x_i / (w_i d^(1/p))|^p <= 1}``, a scaled ``l_p`` ball, so its volume is
    ``prod_i (w_i d^(1/p)) * (2 Gamma(1 + 1/p))^d / Gamma(1 + d/p)`` (Dirichlet's formula).
    """
    w = weights[weights > 0]
    d = w.size
    return float(
        np.sum(np.log(w))
        + d * math.log(d) / p
        + d * (math.log(2.0) + math.lgamma(1.0 + 1.0 / p))
        - math.lgamma(1.0 + d / p)
    )


def direction_second_moment(weights: np.ndarray, p: float) -> np.ndarray:
    """``E[U_i^2]`` for ``U = Y / ||Y||_{w,p}``, ``Y_i = w_i G_i``, ``G_i`` generalized normal of order p.

    ``U_i = w_i d^(1/p) V_i`` with ``V = G / ||G||_p`` independent of ``||G||_p`` and
    ``sum_j |G_j|^p ~ Gamma(d/p)``, so ``E V_i^2 = E G_i^2 / E ||G||_p^2
    = [Gamma(3/p)/Gamma(1/p)] * [Gamma(d/p)/Gamma((d+2)/p)]``. For ``p = 2`` this is ``w_i^2``.
    Zero for inactive coordinates.
    """
    active = weights > 0
    d = int(active.sum())
    log_ev = gammaln(3.0 / p) - gammaln(1.0 / p) + gammaln(d / p) - gammaln((d + 2.0) / p)
    return np.where(active, weights**2 * d ** (2.0 / p) * math.exp(log_ev), 0.0)


def generalized_normal(
    size: tuple[int, ...] | int, p: float, *, random_state: RandomState = None
) -> np.ndarray:
    """Standard generalized normal draws of order ``p``: density ``p / (2 Gamma(1/p)) exp(-|g|^p)``.

    Sampled as ``sign * Gamma(1/p, 1)^(1/p)`` (``|G|^p ~ Gamma(1/p)``). ``p = 2`` gives ``N(0, 1/2)``,
    ``p = 1`` the standard Laplace.
    """
    rng = check_random_state(random_state)
    magnitude = rng.gamma(1.0 / p, 1.0, size=size) ** (1.0 / p)
    sign = rng.integers(0, 2, size=size) * 2 - 1
    return sign * magnitude


def _cone_direction(n: int, weights: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of ``Y / ||Y||_{w,p}``: the cone measure of the weighted unit sphere."""
    active = weights > 0
    y = np.zeros((n, weights.size))
    y[:, active] = generalized_normal((n, int(active.sum())), p, random_state=rng) * weights[active]
    return y / weighted_norm(y, weights, p)[:, None]


class NoiseLaw:
    """Common interface of the noise laws (a description; arithmetic in the methods)."""

    weights: np.ndarray
    scale: float
    name: str = "noise"

    @property
    def dim(self) -> int:
        """Length of the released vector (active and constant coordinates)."""
        return int(self.weights.size)

    @property
    def active_dim(self) -> int:
        """Number of coordinates that receive noise."""
        return int(np.sum(self.weights > 0))

    def _off_support(self, x: np.ndarray) -> np.ndarray:
        """True where an inactive (constant) coordinate of ``x`` is non-zero: density zero there."""
        inactive = self.weights == 0
        if not np.any(inactive):
            return np.zeros(x.shape[:-1], dtype=bool)
        return np.any(np.abs(x[..., inactive]) > 1e-12, axis=-1)

    def _check_law(self, order: str | None = None, minimum: float = 1.0) -> None:
        """Validate ``scale`` (> 0), the norm order attribute ``order`` (>= ``minimum``) and the weights."""
        owner = type(self).__name__
        check_positive("scale", self.scale, owner=owner)
        if order is not None:
            check_interval(order, getattr(self, order), minimum, math.inf, closed="left", owner=owner)
        object.__setattr__(self, "weights", _check_weights(self.weights, owner))

    def _radial_sample(
        self,
        size: int,
        p: float,
        radius: Callable[[np.random.Generator, int], np.ndarray],
        random_state: RandomState,
    ) -> np.ndarray:
        """``size`` draws ``r U``: cone-measure direction ``U`` (order ``p``), ``r = radius(rng, size)``."""
        size = check_positive_int("size", size, owner=f"{type(self).__name__}.sample")
        rng = check_random_state(random_state)
        direction = _cone_direction(size, self.weights, p, rng)
        return radius(rng, size)[:, None] * direction

    def sample(self, size: int, *, random_state: RandomState = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def log_density(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def coordinate_std(self) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class ExpNormNoise(NoiseLaw):
    """Density proportional to ``exp(-||x||_{w,p} / scale)`` (mipkit Theorem A, docs/theory.md section 2b).

    Parameters
    ----------
    scale : float
        ``s`` in the density; Theorem A takes ``s = sigma_1 / (2 eta)``.
    weights : array of shape (d,)
        Norm weights ``w_i`` (``0`` = constant coordinate, no noise).
    p : float, default=2.0
        Order of the norm, ``>= 1``.
    """

    scale: float
    weights: np.ndarray
    p: float = 2.0
    name: str = field(default="exp-norm", init=False)

    def __post_init__(self) -> None:
        self._check_law("p")

    def sample(self, size: int, *, random_state: RandomState = None) -> np.ndarray:
        """``size`` draws, shape ``(size, d)``: radius ``Gamma(d, s)`` times the cone-measure direction."""
        d = self.active_dim
        return self._radial_sample(
            size, self.p, lambda rng, m: rng.gamma(d, self.scale, size=m), random_state
        )

    def log_density(self, x: np.ndarray) -> np.ndarray:
        """``-||x||/s - log(s^d Gamma(d+1) V)`` with ``V`` the unit-ball volume (normalised)."""
        x = np.asarray(x, dtype=float)
        d = self.active_dim
        log_z = d * math.log(self.scale) + math.lgamma(d + 1.0) + log_unit_ball_volume(self.weights, self.p)
        out = -weighted_norm(x, self.weights, self.p) / self.scale - log_z
        return np.where(self._off_support(x), -np.inf, out)

    def coordinate_std(self) -> np.ndarray:
        """``sqrt(E r^2 E U_i^2)`` with ``E r^2 = d (d+1) s^2`` (Gamma radius)."""
        d = self.active_dim
        return np.sqrt(d * (d + 1.0) * self.scale**2 * direction_second_moment(self.weights, self.p))

    def to_dict(self) -> dict:
        return {"law": self.name, "scale": self.scale, "p": self.p, "radius": f"Gamma({self.active_dim}, s)"}


@dataclass(frozen=True, eq=False)
class GaussianNoise(NoiseLaw):
    """``N(0, scale^2 * d * diag(w^2))``: Mahalanobis norm ``||x||_{w,2} / scale`` (Theorem A, Gaussian).

    Parameters
    ----------
    scale : float
        ``s``; Theorem A's Gaussian variant takes ``s = sigma_1 / (eta sqrt(2 pi))``.
    weights : array of shape (d,)
        Norm weights (``0`` = constant coordinate, no noise).
    """

    scale: float
    weights: np.ndarray
    name: str = field(default="gaussian", init=False)

    def __post_init__(self) -> None:
        self._check_law()

    def coordinate_std(self) -> np.ndarray:
        """``s sqrt(d) w_i``."""
        return self.scale * math.sqrt(self.active_dim) * self.weights

    def sample(self, size: int, *, random_state: RandomState = None) -> np.ndarray:
        size = check_positive_int("size", size, owner="GaussianNoise.sample")
        rng = check_random_state(random_state)
        return rng.standard_normal((size, self.dim)) * self.coordinate_std()

    def log_density(self, x: np.ndarray) -> np.ndarray:
        """Normalised Gaussian log-density on the active coordinates."""
        x = np.asarray(x, dtype=float)
        std = self.coordinate_std()
        active = std > 0
        z = x[..., active] / std[active]
        out = (
            -0.5 * np.einsum("...i,...i->...", z, z)
            - np.sum(np.log(std[active]))
            - 0.5 * z.shape[-1] * math.log(2 * math.pi)
        )
        return np.where(self._off_support(x), -np.inf, out)

    def to_dict(self) -> dict:
        return {"law": self.name, "scale": self.scale, "covariance": "scale^2 * d * diag(w^2)"}


@dataclass(frozen=True, eq=False)
class Izzo2024Noise(NoiseLaw):
    """Corollary 10 of Izzo et al. (TMLR 2024) as published: ``X = r U``, ``r ~ Laplace(scale)``.

    ``U = Y / ||Y||_{w,M}`` with ``Y_i ~ GenNormal(0, w_i, M)`` and ``scale = (6.16/eta)^(1+2/M)``
    (times ``sigma = 1`` in the normalised norm when ``w_i`` bound the per-coordinate M-th moments).

    The published theorem (Thm 9) assumes the density ``exp(-||x||/c)``, which needs a ``Gamma(d, c)``
    radius; a Laplace radius gives that density only when ``d = 1`` (docs/theory.md section 2a). Kept as
    published for comparison; :meth:`log_density` is the density of what is actually sampled:
    ``|r| ~ Exp(c)`` spread over the sphere of radius ``|r|`` by the cone measure, i.e.
    ``exp(-t/c) / (c * d * V * t^(d-1))`` at ``t = ||x||``.

    Parameters
    ----------
    scale : float
        Laplace scale ``c`` of the radius.
    weights : array of shape (d,)
        ``sigma_i`` of Cor. 10.
    moment : float, default=2.0
        ``M >= 2`` (order of the moments and of the norm).
    """

    scale: float
    weights: np.ndarray
    moment: float = 2.0
    name: str = field(default="izzo2024-laplace-radius", init=False)

    def __post_init__(self) -> None:
        self._check_law("moment", minimum=2.0)

    def sample(self, size: int, *, random_state: RandomState = None) -> np.ndarray:
        """``size`` draws, shape ``(size, d)``: radius ``Laplace(c)`` times the cone-measure direction."""
        return self._radial_sample(
            size, self.moment, lambda rng, m: rng.laplace(0.0, self.scale, size=m), random_state
        )

    def log_density(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        d = self.active_dim
        t = weighted_norm(x, self.weights, self.moment)
        log_v = log_unit_ball_volume(self.weights, self.moment)
        with np.errstate(divide="ignore"):
            radial = 0.0 if d == 1 else (d - 1) * np.log(t)  # d = 1: no singularity at 0
        out = -t / self.scale - math.log(self.scale) - math.log(d) - log_v - radial
        return np.where(self._off_support(x), -np.inf, out)

    def coordinate_std(self) -> np.ndarray:
        """``sqrt(2 c^2 E U_i^2)`` (``E r^2 = 2 c^2`` for a Laplace radius)."""
        return np.sqrt(2.0 * self.scale**2 * direction_second_moment(self.weights, self.moment))

    def to_dict(self) -> dict:
        return {"law": self.name, "scale": self.scale, "moment": self.moment, "radius": "Laplace(c)"}
