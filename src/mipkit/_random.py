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


def spawn_seed(random_state: RandomState) -> int:
    """One 32-bit integer seed derived from ``random_state``: :func:`spawn_seeds` of one.

    For a library that takes an integer seed (torch, the global NumPy state ctgan and mbi draw from); a
    ``Generator`` hands over the next draw of its stream, ``None`` a seed from fresh OS entropy.
    """
    return spawn_seeds(random_state, 1)[0]


# ---------------------------------------------------------------------------------------- protective noise
#: ``noise_source`` of a release whose protective randomness came from the operating system.
OS_ENTROPY = "os-entropy"
#: ``noise_source`` of a release made with an explicit ``noise_seed``.
SEEDED = "seeded: not private against anyone who holds the noise seed"
_NOISE_KEY = 0x6E6F697365  # "noise": keeps a noise stream apart from a random_state stream of the same int


def check_noise_seed(noise_seed: int | None, owner: str = "noise_generator") -> int | None:
    """``noise_seed`` validated: None or a non-negative integer (as an int ``random_state``)."""
    if noise_seed is None:
        return None
    if isinstance(noise_seed, bool) or not isinstance(noise_seed, (int, np.integer)) or noise_seed < 0:
        raise MipkitValueError(
            f"The 'noise_seed' parameter of {owner} must be None or a non-negative integer. "
            f"Got {noise_seed!r} instead."
        )
    return int(noise_seed)


def noise_source(noise_seed: int | None) -> str:
    """What a certificate says about its protective randomness: :data:`OS_ENTROPY` or :data:`SEEDED`."""
    return OS_ENTROPY if noise_seed is None else SEEDED


def noise_generator(noise_seed: int | None, *, stream: tuple[int, ...] = ()) -> np.random.Generator:
    """The generator of *protective* randomness: DP noise, secret batches and halves, private selections.

    A certificate's premise treats these draws as unknown to the attacker, so by default (``None``) they
    come from 128 bits of operating-system entropy (``np.random.SeedSequence()``): no seed that a user
    writes down or a results file records reproduces them. An integer ``noise_seed`` gives a reproducible
    stream, for tests and audits only: the release is then not private against anyone who holds it.

    Parameters
    ----------
    noise_seed : int or None
    stream : tuple of int
        Keys that tell apart several streams of one ``noise_seed`` (e.g. the ``random_state`` of each of
        many models trained with the same ``noise_seed``); ignored with ``noise_seed=None``.

    Notes
    -----
    The stream is NumPy's PCG64, whose 128-bit state ``SeedSequence`` fills from all of the entropy. Torch
    is not used for protective draws: its CPU generator keeps only the low 32 bits of a seed
    (``manual_seed(s)`` and ``manual_seed(s + 2**32)`` give the same stream), at most 32 secret bits, which
    an attacker can try exhaustively. Callers draw with NumPy and hand the values to torch as tensors.
    """
    seed = check_noise_seed(noise_seed)
    if seed is None:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence()))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([_NOISE_KEY, seed, *map(int, stream)])))
