"""Input validation with one error class and scikit-learn's message form.

Every check raises :class:`MipkitValueError` (a ``ValueError``) with a message of the form
``"The 'eta' parameter of MIPNoise must be in (0, 0.5). Got 0.7 instead."``. The CLI turns these into one
line on stderr and exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np


class MipkitValueError(ValueError):
    """Bad input to a mipkit function, estimator or command (a user error, not a bug)."""


def _owner(owner: str | None) -> str:
    return f" of {owner}" if owner else ""


def _as_float(name: str, value: Any, owner: str | None) -> float:
    if isinstance(value, bool):
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be a real number. Got {value!r} instead."
        )
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be a real number. Got {value!r} instead."
        ) from None
    if math.isnan(out):
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be a real number. Got nan instead."
        )
    return out


def check_interval(
    name: str,
    value: Any,
    low: float,
    high: float,
    *,
    closed: str = "neither",
    owner: str | None = None,
) -> float:
    """Return ``float(value)`` if it lies in the interval, else raise :class:`MipkitValueError`.

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    value : Any
        Value to check.
    low, high : float
        Interval ends (``math.inf`` allowed).
    closed : {"neither", "left", "right", "both"}
        Which ends belong to the interval.
    owner : str, optional
        Function or class the parameter belongs to, for the message.
    """
    x = _as_float(name, value, owner)
    left_ok = x >= low if closed in ("left", "both") else x > low
    right_ok = x <= high if closed in ("right", "both") else x < high
    if not (left_ok and right_ok):
        lb = "[" if closed in ("left", "both") else "("
        rb = "]" if closed in ("right", "both") else ")"
        hi = "inf" if math.isinf(high) else f"{high:g}"
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be in {lb}{low:g}, {hi}{rb}. Got {value!r} instead."
        )
    return x


def check_eta(eta: Any, *, owner: str | None = None) -> float:
    """MIP eta must lie in (0, 1/2)."""
    return check_interval("eta", eta, 0.0, 0.5, owner=owner)


def check_epsilon(epsilon: Any, *, owner: str | None = None) -> float:
    """Epsilon must be finite and >= 0."""
    return check_interval("epsilon", epsilon, 0.0, math.inf, closed="left", owner=owner)


def check_delta(delta: Any, *, owner: str | None = None) -> float:
    """Delta must lie in [0, 1)."""
    return check_interval("delta", delta, 0.0, 1.0, closed="left", owner=owner)


def check_probability(name: str, value: Any, *, closed: str = "both", owner: str | None = None) -> float:
    """A probability in [0, 1] (or the sub-interval that ``closed`` says)."""
    return check_interval(name, value, 0.0, 1.0, closed=closed, owner=owner)


def check_sample_rate(q: Any, *, owner: str | None = None) -> float:
    """Poisson sample rate must lie in (0, 1]."""
    return check_interval("sample_rate", q, 0.0, 1.0, closed="right", owner=owner)


def check_positive(name: str, value: Any, *, owner: str | None = None) -> float:
    """A finite number > 0."""
    return check_interval(name, value, 0.0, math.inf, owner=owner)


def check_positive_int(name: str, value: Any, *, minimum: int = 1, owner: str | None = None) -> int:
    """An integer >= ``minimum`` (bools and non-integral floats are refused)."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not ok and isinstance(value, float) and value.is_integer():
        ok = True
    if not ok or int(value) < minimum:
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be an integer >= {minimum}. Got {value!r} instead."
        )
    return int(value)


def check_choice(name: str, value: Any, choices: Iterable[str], *, owner: str | None = None) -> str:
    """One of a fixed set of strings."""
    options = list(choices)
    if value not in options:
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be one of {options}. Got {value!r} instead."
        )
    return str(value)


def check_finite_array(
    name: str, values: Any, *, ndim: int | None = None, owner: str | None = None
) -> np.ndarray:
    """A float array with no NaN or infinity (and the given number of dimensions, if any)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be numeric; it holds non-numeric values."
        ) from None
    if ndim is not None and arr.ndim != ndim:
        raise MipkitValueError(
            f"The {name!r} parameter{_owner(owner)} must be {ndim}-dimensional. "
            f"Got shape {arr.shape} instead."
        )
    if arr.size == 0:
        raise MipkitValueError(f"The {name!r} parameter{_owner(owner)} is empty.")
    if not np.all(np.isfinite(arr)):
        raise MipkitValueError(f"The {name!r} parameter{_owner(owner)} must not contain NaN or infinity.")
    return arr
