"""The rounds of the LTU game (:func:`mipkit.attacks.ltu.ltu_game`): every random choice drawn up front, the
defender's model, the evidence of each strategy and the verdicts (Pedersen, thesis ch. 4.2; docs/theory.md
section 5). The strategies and scenarios are described in :mod:`mipkit.attacks.ltu`.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import ThreadpoolController

from mipkit._random import spawn_seed, spawn_seeds
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.attacks.model_compare import _fitted_parameters, _squared_distance, model_outputs
from mipkit.attacks.signals import cross_entropy_loss, true_class_probability
from mipkit.game.trainers import TrainerSpec, predict_full_proba, resolve_trainer

__all__ = [
    "LTU_SCENARIOS",
    "LTU_STRATEGIES",
    "Rounds",
    "check_game_options",
    "check_game_inputs",
    "defender_model",
    "draw_rounds",
    "loss_evidence",
    "pair_verdicts",
    "retrain_evidence",
    "verdicts",
]

LTU_STRATEGIES = ("loss", "bounded-loss", "retrain")
LTU_SCENARIOS = ("original", "random", "unseeded")


@functools.lru_cache(maxsize=1)
def _thread_controller() -> ThreadpoolController:
    return ThreadpoolController()  # discovering the BLAS/OpenMP libraries is the slow part: do it once


def _fit(trainer: TrainerSpec, seed: int, X: np.ndarray, y: np.ndarray) -> Any:
    with warnings.catch_warnings(), _thread_controller().limit(limits=1):
        # one BLAS/OpenMP thread per fit: small fits run 10-20x slower when threads fight over busy cores;
        # parallelism comes from n_jobs (joblib) instead
        warnings.simplefilter("ignore")  # convergence warnings of small fits are expected here
        return trainer.build(seed).fit(X, y)


def _retrain_round(
    trainer: TrainerSpec,
    X: np.ndarray,
    y: np.ndarray,
    order: np.ndarray,
    position: int,
    candidates: tuple[int, int],
    seeds: list[int],
    compare: str,
    probe: np.ndarray | None,
    reference: Any,
) -> tuple[float, float]:
    """Mean distance to the defender's model of the models retrained with each candidate in ``position``."""
    distances = []
    for candidate in candidates:
        rows = order.copy()
        rows[position] = candidate
        total = 0.0
        for seed in seeds:
            model = _fit(trainer, seed, X[rows], y[rows])
            if compare == "predictions":
                diff = model_outputs(model, probe) - reference
                total += float(np.sum(diff * diff))
            else:
                total += _squared_distance(_fitted_parameters(model), reference)
        distances.append(total / len(seeds))
    return distances[0], distances[1]


def _check_indices(name: str, idx, n: int) -> np.ndarray:
    arr = np.asarray(idx)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise MipkitValueError(
            f"The {name!r} parameter of ltu_game must be a non-empty 1-D array of row indices."
        )
    if arr.min() < 0 or arr.max() >= n:
        raise MipkitValueError(f"The {name!r} parameter of ltu_game holds indices outside 0..{n - 1}.")
    if np.unique(arr).size != arr.size:
        raise MipkitValueError(f"The {name!r} parameter of ltu_game holds repeated indices.")
    return arr.astype(np.int64)


def _draw(
    rng: np.random.Generator, pool: np.ndarray, n_rounds: int, fixed: int | None, name: str
) -> np.ndarray:
    if fixed is not None:
        if int(fixed) not in set(pool.tolist()):
            raise MipkitValueError(f"The 'fixed_{name}' record {fixed} is not in the {name} set.")
        return np.full(n_rounds, int(fixed), dtype=np.int64)
    return rng.choice(pool, size=n_rounds, replace=n_rounds > pool.size)


def pair_verdicts(
    score_d: np.ndarray, score_r: np.ndarray, coins: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(tie, correct)`` of rounds in which the record with the higher evidence is called the member; an
    exact tie is settled by the fair coin ``coins < 1/2``."""
    tie = score_d == score_r
    return tie, np.where(tie, coins < 0.5, score_d > score_r)


def check_game_options(
    strategy: str, compare: str, scenario: str, n_rounds: int, n_retrains: int
) -> tuple[int, int]:
    """``(n_rounds, n_retrains)`` after checking every option of ltu_game."""
    owner = "ltu_game"
    check_choice("strategy", strategy, LTU_STRATEGIES, owner=owner)
    check_choice("compare", compare, ("predictions", "parameters"), owner=owner)
    check_choice("scenario", scenario, LTU_SCENARIOS, owner=owner)
    n_rounds = check_positive_int("n_rounds", n_rounds, owner=owner)
    return n_rounds, check_positive_int("n_retrains", n_retrains, owner=owner)


def check_game_inputs(
    trainer: Any, X: Any, y: Any, defender_idx: Any, reserve_idx: Any
) -> tuple[TrainerSpec, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(trainer, features, labels as codes 0..C-1, defenders, reserves)``, each checked for ltu_game."""
    if isinstance(trainer, str):
        trainer = resolve_trainer(trainer)
    if not callable(getattr(trainer, "build", None)):
        raise MipkitValueError(f"The 'trainer' parameter of ltu_game must be a TrainerSpec. Got {trainer!r}.")
    features = np.asarray(X)
    if features.ndim != 2:
        raise MipkitValueError(f"X must be 2-dimensional (n, d). Got shape {features.shape} instead.")
    labels_raw = np.asarray(y)
    if labels_raw.shape != (features.shape[0],):
        raise MipkitValueError(f"y must have shape ({features.shape[0]},). Got {labels_raw.shape} instead.")
    _, labels = np.unique(labels_raw, return_inverse=True)
    defenders = _check_indices("defender_idx", defender_idx, features.shape[0])
    reserves = _check_indices("reserve_idx", reserve_idx, features.shape[0])
    if np.intersect1d(defenders, reserves).size:
        raise MipkitValueError("defender_idx and reserve_idx must be disjoint.")
    return trainer, features, labels, defenders, reserves


@dataclass(frozen=True)
class Rounds:
    """Every random choice of one game, drawn from one generator by :func:`draw_rounds`.

    Attributes
    ----------
    scenario : str
    defender_seed : int
        The defender's seed as the attacker knows it (``"original"``, ``"random"``).
    permutation : ndarray
        The defender's secret order of its records (``"random"``, ``"unseeded"``).
    defender, reserve : ndarray
        Each round's record from ``D_D`` and from ``D_R``.
    attacker_seeds : ndarray of shape (n_rounds, n_retrains)
        The attacker's own seeds (``"unseeded"``).
    coins : ndarray
        A uniform draw per round: the fair coin of a tie, the call of ``"bounded-loss"``.
    first_is_defender : ndarray of bool
        The order of each round's pair, for ``"bounded-loss"``.
    secret_seed : int or None
        The defender's secret seed (``"unseeded"``): never handed to the attacker.
    """

    scenario: str
    defender_seed: int
    permutation: np.ndarray
    defender: np.ndarray
    reserve: np.ndarray
    attacker_seeds: np.ndarray
    coins: np.ndarray
    first_is_defender: np.ndarray
    secret_seed: int | None

    def retrain_seeds(self, t: int) -> list[int]:
        """The seeds the attacker retrains round ``t``'s candidates with: its own when the defender's seed is
        secret, else the defender's."""
        if self.scenario == "unseeded":
            return [int(s) for s in self.attacker_seeds[t]]
        return [self.defender_seed]


def draw_rounds(
    rng: np.random.Generator,
    defenders: np.ndarray,
    reserves: np.ndarray,
    n_rounds: int,
    n_retrains: int,
    scenario: str,
    fixed_defender: int | None = None,
    fixed_reserve: int | None = None,
) -> Rounds:
    """Every random choice of a game, in a fixed order from ``rng`` (so that a game is reproducible)."""
    defender_seed = spawn_seed(rng)
    permutation = rng.permutation(defenders.size)
    round_d = _draw(rng, defenders, n_rounds, fixed_defender, "defender")
    round_r = _draw(rng, reserves, n_rounds, fixed_reserve, "reserve")
    attacker_seeds = np.reshape(spawn_seeds(rng, n_rounds * n_retrains), (n_rounds, n_retrains))
    coins = rng.random(n_rounds)
    first_is_defender = rng.random(n_rounds) < 0.5
    secret_seed = spawn_seed(rng) if scenario == "unseeded" else None
    return Rounds(
        scenario,
        defender_seed,
        permutation,
        round_d,
        round_r,
        attacker_seeds,
        coins,
        first_is_defender,
        secret_seed,
    )


def defender_model(
    trainer: TrainerSpec,
    features: np.ndarray,
    labels: np.ndarray,
    defenders: np.ndarray,
    reserves: np.ndarray,
    rounds: Rounds,
    utility_idx: Any = None,
) -> tuple[Any, float]:
    """The defender's model ``M_D`` (in the scenario's order, with its seed) and its accuracy on
    ``utility_idx`` (default the reserve)."""
    order = defenders if rounds.scenario == "original" else defenders[rounds.permutation]
    seed = rounds.defender_seed if rounds.secret_seed is None else rounds.secret_seed
    model = _fit(trainer, seed, features[order], labels[order])
    held_out = reserves if utility_idx is None else _check_indices("utility_idx", utility_idx, len(labels))
    proba = predict_full_proba(model, features[held_out], int(labels.max()) + 1)
    return model, float(np.mean(np.argmax(proba, axis=1) == labels[held_out]))


def loss_evidence(
    model: Any, features: np.ndarray, labels: np.ndarray, rounds: Rounds, *, bounded: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Evidence of membership of each round's two records under ``M_D``: minus the cross-entropy
    (``"loss"``), or the true-class probability ``1 - bounded loss`` (``"bounded-loss"``)."""
    rows = np.concatenate([rounds.defender, rounds.reserve])
    proba = predict_full_proba(model, features[rows], int(labels.max()) + 1)
    if bounded:
        evidence = true_class_probability(proba, labels[rows])
    else:
        evidence = -cross_entropy_loss(proba, labels[rows])
    n = rounds.defender.size
    return evidence[:n], evidence[n:]


def retrain_evidence(
    trainer: TrainerSpec,
    features: np.ndarray,
    labels: np.ndarray,
    sets: tuple[np.ndarray, np.ndarray],
    rounds: Rounds,
    model: Any,
    compare: str,
    probe_X: Any,
    n_jobs: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Evidence of the retrain strategy: minus the mean distance to ``M_D`` of the models retrained with each
    candidate in the place of the round's defender record (``sets``: ``D_D`` and ``D_R``; ``compare``:
    outputs on ``probe_X``, default every row of both sets, or fitted parameters)."""
    defenders, reserves = sets
    probe = None
    if compare == "predictions":
        both = features[np.concatenate([defenders, reserves])]
        probe = both if probe_X is None else np.asarray(probe_X, dtype=float)
        reference = model_outputs(model, probe)
    else:
        reference = _fitted_parameters(model)
    position_of = {int(row): pos for pos, row in enumerate(defenders)}
    jobs = (
        delayed(_retrain_round)(
            trainer,
            features,
            labels,
            defenders,
            position_of[int(d)],
            (int(d), int(r)),
            rounds.retrain_seeds(t),
            compare,
            probe,
            reference,
        )
        for t, (d, r) in enumerate(zip(rounds.defender, rounds.reserve, strict=True))
    )
    distances = np.array(Parallel(n_jobs=n_jobs)(jobs), dtype=float).reshape(rounds.defender.size, 2)
    return -distances[:, 0], -distances[:, 1]


def verdicts(
    score_d: np.ndarray, score_r: np.ndarray, rounds: Rounds, *, bounded: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(tie, correct)`` of every round: :func:`pair_verdicts`, or with ``bounded`` the call of Thm 4.2.2
    (the first record ``u_1`` is called "reserve" with probability ``loss(u_1) = 1 - p_y(u_1)``; no ties)."""
    if not bounded:
        return pair_verdicts(score_d, score_r, rounds.coins)
    loss_first = np.where(rounds.first_is_defender, 1.0 - score_d, 1.0 - score_r)
    first_called_reserve = rounds.coins < loss_first
    correct = np.where(rounds.first_is_defender, ~first_called_reserve, first_called_reserve)
    return np.zeros(score_d.size, dtype=bool), correct
