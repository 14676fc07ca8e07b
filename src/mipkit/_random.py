"""One place that turns ``random_state`` into a NumPy Generator; no module-level RNG anywhere."""

from __future__ import annotations

import numpy as np

from mipkit._validation import MipkitValueError

RandomState = int | np.random.Generator | np.random.SeedSequence | None


def check_random_state(random_state: RandomState) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``random_state``.

    ``None`` gives fresh OS entropy, an ``int`` or ``SeedSequence`` a reproducible stream, and a
    ``Generator`` is returned as is (so callers share its stream).
    """
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        is_int = isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
        if is_int and random_state < 0:
            raise MipkitValueError(
                f"The 'random_state' parameter must be a non-negative integer. Got {random_state}."
            )
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise MipkitValueError(
        "The 'random_state' parameter must be None, an int, a SeedSequence or a numpy Generator. "
        f"Got {random_state!r} instead."
    )


def spawn_seeds(random_state: RandomState, n: int) -> list[int]:
    """``n`` independent 32-bit integer seeds derived from ``random_state``.

    Used to hand each parallel job (a fit, a bootstrap replicate) its own seed, so that the results do not
    depend on which worker or backend runs the job.
    """
    rng = check_random_state(random_state)
    return [int(s) for s in rng.integers(0, 2**31 - 1, size=n)]
