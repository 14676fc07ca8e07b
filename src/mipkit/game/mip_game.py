"""The MIP game against a noise-wrapped release: rounds, guesses and the counts they give.

Setting (Izzo et al., TMLR 2024, Def. 1; docs/theory.md section 1): ``D`` has ``n`` records, ``D_train`` is
a uniformly random half, the release is ``theta_hat = A(D_train) + X`` with ``X`` drawn from a known noise
law. Each round of :func:`mip_game` draws ``D_train`` from a pool of halves (with their outputs ``A(H)``),
releases ``A(D_train) + X`` and asks an attack for ``P(target in D_train | theta_hat)``; the guess is
"member" iff that is ``>= 1/2`` (the optimal rule when the attack is the exact posterior, Prop. 2). The game
takes the attack as an argument (e.g. :func:`mipkit.attacks.bayes.membership_posterior`), so it knows
nothing of how the posterior is computed; :class:`MIPGameResult` holds the counts and gives the intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.stats import EtaEstimate

__all__ = ["MIPGameResult", "PosteriorAttack", "ReleaseNoise", "check_pool", "mip_game"]


class ReleaseNoise(Protocol):
    """What the game needs of a noise law: seeded draws of shape ``(size, d)``."""

    def sample(self, size: int, *, random_state: RandomState = None) -> np.ndarray: ...


PosteriorAttack = Callable[..., np.ndarray]
"""``attack(released, outputs, halves, noise, *, targets) -> P(member)`` of shape ``(m, n_targets)``."""


def check_pool(outputs: Any, halves: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """A game pool: ``outputs`` (H, d) float (1-d input read as ``d = 1``) and ``halves`` (H, n) bool."""
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
        The certified eta of the release, if any: the accuracy bound is ``max(p, 1 - p) + eta_bound``.
    posterior : str
        ``"exact"`` (all halves) or ``"monte-carlo (H halves)"``.
    membership_probability : float
        ``p = k/n``, the chance that a record is in a half of the game pool (1/2 for an even pool).
    per_target : tuple of EtaEstimate
        One estimate per target (derived from ``correct`` and ``trials``).
    """

    targets: tuple[int, ...]
    correct: tuple[int, ...]
    trials: tuple[int, ...]
    eta_bound: float | None = None
    posterior: str = "exact"
    membership_probability: float = 0.5
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
        """Pooled accuracy ``sum(correct) / sum(trials)``."""
        return self.overall.accuracy.value

    def accuracy_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Clopper-Pearson interval of the pooled accuracy."""
        return self.overall.accuracy.interval(confidence)

    def to_dict(self, confidence: float = 0.95) -> dict:
        """JSON-ready summary: pooled and per-target accuracy with intervals, next to the accuracy bound
        ``max(p, 1 - p) + eta_bound``."""
        lo, hi = self.accuracy_interval(confidence)
        p = self.membership_probability
        bound = None if self.eta_bound is None else max(p, 1.0 - p) + self.eta_bound
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
            "membership_probability": p,
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
    noise: ReleaseNoise,
    *,
    attack: PosteriorAttack,
    targets: np.ndarray | Sequence[int],
    n_releases: int,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    eta_bound: float | None = None,
    random_state: RandomState = None,
    draw: str = "random",
    batch_size: int = 2000,
) -> MIPGameResult:
    """Play the MIP game ``n_releases`` times against ``attack``.

    Each round draws a half ``D_train`` from the game pool (``outputs``, ``halves``), releases
    ``A(D_train) + X`` with ``X ~ noise``, and for every target guesses "member" iff
    ``attack(...) >= 1/2``. A guess is correct when it equals ``1{target in D_train}``. With the exact
    posterior as the attack this is the Bayes-optimal attacker (Izzo et al. 2024, Prop. 2), whose accuracy
    is ``1/2 + TV(P_in, P_out)/2``.

    Parameters
    ----------
    outputs, halves : ndarray (H, d), bool ndarray (H, n)
        The game pool: ``A(H)`` for each half and the half's membership. With
        :func:`mipkit.game.splits.all_halves` the game is exactly the MIP game.
    noise : noise law
        Anything with ``sample(size, *, random_state) -> (size, d)``; passed on to ``attack``.
    attack : callable
        ``attack(released, ref_outputs, ref_halves, noise, *, targets)`` returning the posterior
        ``P(target in D_train | released)`` of shape ``(m, n_targets)``, e.g.
        :func:`mipkit.attacks.bayes.membership_posterior`.
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

    Returns
    -------
    MIPGameResult
        ``posterior`` is ``"exact"`` when the attacker's pool is the game pool and holds all
        ``C(n, k)`` halves, ``"monte-carlo (H halves)"`` otherwise.
    """
    outputs, halves = check_pool(outputs, halves, "mip_game")
    n_releases = check_positive_int("n_releases", n_releases, owner="mip_game")
    if not callable(attack):
        raise MipkitValueError(
            f"The 'attack' parameter of mip_game must be callable. Got {attack!r} instead."
        )
    targets = np.asarray(targets, dtype=int).ravel()
    if targets.size == 0 or targets.min() < 0 or targets.max() >= halves.shape[1]:
        raise MipkitValueError(f"Targets must be record indices in [0, {halves.shape[1]}).")
    ref_outputs, ref_halves = (outputs, halves) if reference is None else check_pool(*reference, "mip_game")
    exhaustive = reference is None and halves.shape[0] == math.comb(halves.shape[1], int(halves[0].sum()))
    check_choice("draw", draw, ("random", "sequential"), owner="mip_game")
    rounds = _Rounds(outputs, halves, noise, attack, (ref_outputs, ref_halves), targets)
    correct = rounds.play(n_releases, check_random_state(random_state), draw, batch_size)
    label = "exact" if exhaustive else f"monte-carlo ({ref_outputs.shape[0]} halves)"
    return MIPGameResult(
        targets=tuple(int(t) for t in targets),
        correct=tuple(int(c) for c in correct),
        trials=tuple(n_releases for _ in targets),
        eta_bound=eta_bound,
        posterior=label,
        membership_probability=float(halves[0].sum()) / halves.shape[1],
    )


class _Rounds:
    """The rounds of one game: each releases a pool half's output plus noise, and ``attack`` guesses every
    target's membership from the release with the reference pool ``reference``."""

    def __init__(self, outputs, halves, noise, attack, reference, targets) -> None:
        self.outputs, self.halves, self.noise, self.attack = outputs, halves, noise, attack
        self.ref_outputs, self.ref_halves = reference
        self.targets = targets

    def play(self, n_releases: int, rng: np.random.Generator, draw: str, batch_size: int) -> np.ndarray:
        """Correct guesses per target over ``n_releases`` rounds, ``batch_size`` releases at a time."""
        outputs, targets = self.outputs, self.targets
        correct = np.zeros(targets.size, dtype=np.int64)
        done = 0
        while done < n_releases:
            m = min(batch_size, n_releases - done)
            if draw == "random":
                idx = rng.integers(0, outputs.shape[0], size=m)
            else:
                idx = (done + np.arange(m)) % outputs.shape[0]
            released = outputs[idx] + self.noise.sample(m, random_state=rng)
            post = self.attack(released, self.ref_outputs, self.ref_halves, self.noise, targets=targets)
            guess = post >= 0.5
            truth = self.halves[idx][:, targets]
            correct += np.sum(guess == truth, axis=0)
            done += m
        return correct
