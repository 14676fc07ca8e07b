"""The limits of the commands' sizes: counts, workers and seeds checked before anything is allocated.

:func:`check_count` checks a size flag (models, fits, steps, targets, rows, workers, layer widths) against
:data:`LIMITS`, whose ``soft`` limit ``--yes-i-mean-it`` lifts where a large run is legitimate and whose
``hard`` limit nothing lifts; :func:`check_n_jobs` and :func:`check_seed` check ``--n-jobs`` and ``--seed``.
Re-exported by :mod:`mipkit.cli.options`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LIMITS", "OVERRIDE_FLAG", "Limit", "check_count", "check_n_jobs", "check_seed"]

OVERRIDE_FLAG = "--yes-i-mean-it"


@dataclass(frozen=True)
class Limit:
    """Bounds of a size flag: ``soft`` may be lifted with ``--yes-i-mean-it`` (when given), ``hard`` never."""

    soft: int | None
    hard: int
    cost: str


LIMITS: dict[str, Limit] = {
    "models": Limit(1024, 10**6, "each model is a full fit and its outputs are kept in memory"),
    "targets": Limit(None, 10**6, "each target model is attacked with all the others"),
    "steps": Limit(None, 10**6, "the accountant's memory and time grow with the number of steps"),
    "fits": Limit(None, 10**6, "each is a full fit of the model"),
    "rows": Limit(None, 10**8, "the rows are held in memory"),
    "workers": Limit(None, 4096, "each worker is a process or a thread"),
    "width": Limit(None, 10**4, "a layer's weights grow with the product of its width and the next one's"),
}
"""The limits of :func:`check_count` by kind of size."""


def check_count(
    flag: str,
    value: Any,
    *,
    kind: str,
    minimum: int | None = 1,
    maximum: int | None = None,
    even: bool = False,
    override: bool | None = None,
) -> int | None:
    """Check a size flag before anything is allocated; returns ``value`` (None passes through).

    Parameters
    ----------
    flag : str
        The flag, as the message shows it (``"--models"``).
    value : int or None
    kind : {"models", "targets", "steps", "fits", "rows", "workers", "width"}
        Which :data:`LIMITS` apply.
    minimum : int or None
        Smallest value accepted (None: the caller checks it).
    maximum : int, optional
        A bound of this run (e.g. the number of rows of the table), applied with the kind's limits.
    even : bool
        Refuse odd values.
    override : bool, optional
        The command's ``--yes-i-mean-it`` flag; None when the command has none (the soft limit is then a
        hard one).
    """
    from mipkit._validation import MipkitValueError

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MipkitValueError(f"{flag} must be an integer. Got {value!r}.")
    if minimum is not None and value < minimum:
        raise MipkitValueError(f"{flag} must be at least {minimum}. Got {value}.")
    if even and value % 2:
        raise MipkitValueError(f"{flag} must be even. Got {value}.")
    if maximum is not None and value > maximum:
        raise MipkitValueError(f"{flag} must be at most {maximum} here. Got {value}.")
    limit = LIMITS[kind]
    if value > limit.hard:
        raise MipkitValueError(f"{flag} must be at most {limit.hard:,} ({limit.cost}). Got {value:,}.")
    if limit.soft is not None and value > limit.soft and not override:
        lift = f"; pass {OVERRIDE_FLAG} to run it anyway" if override is not None else ""
        raise MipkitValueError(f"{flag} {value:,} is over the limit of {limit.soft:,} ({limit.cost}){lift}.")
    return value


def check_n_jobs(value: Any, flag: str = "--n-jobs", *, negative: bool = True) -> int | None:
    """A number of parallel workers: an integer >= 1, or (``negative``) -1 for every core and -2, -3, ...
    for all but 1, 2, ... (joblib's convention); 0 means nothing. None passes through."""
    from mipkit._validation import MipkitValueError

    if value is None:
        return None
    low = -(LIMITS["workers"].hard) if negative else 1
    if isinstance(value, bool) or not isinstance(value, int) or value == 0 or value < low:
        what = "an integer >= 1 or -1 (every core)" if negative else "an integer >= 1"
        raise MipkitValueError(f"{flag} must be {what}. Got {value!r}.")
    return check_count(flag, abs(value), kind="workers") and value


def check_seed(value: Any, flag: str = "--seed") -> int | None:
    """A random seed: an integer in [0, 2**63) (NumPy's seeds are non-negative). None passes through."""
    from mipkit._validation import MipkitValueError

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise MipkitValueError(f"{flag} must be an integer >= 0. Got {value!r}.")
    return value
