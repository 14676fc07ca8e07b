"""The Leave-Two-Unlabeled (LTU) attacker of Pedersen et al. (thesis ch. 4.2 and 5.2).

Theory: docs/theory.md section 5.

Setting (thesis Sec. 4.2.1, Fig. 4.1). A defender trains a model ``M_D`` on its data ``D_D``; a disjoint
reserve ``D_R`` comes from the same source. In each round the evaluator takes one ``d`` from ``D_D`` and one
``r`` from ``D_R`` and removes their membership tags; the attacker knows every other tag, the trainer with
all its hyper-parameters, and ``M_D``, and must say which of the two is the member. Over ``N`` rounds with
accuracy ``A_ltu`` the global privacy is (eq. (4.9))

    privacy = min{2 (1 - A_ltu), 1}  +-  2 sqrt(A_ltu (1 - A_ltu) / N).

Fixing ``d`` (or ``r``) for all rounds gives that record's individual privacy score (Sec. 4.2.4).

Strategies (the attacker's choice):

- ``"loss"`` (Thm 4.2.1): compare a score ``f`` under ``M_D``; the record with the lower loss (here the
  cross-entropy ``-log p_y`` of :func:`mipkit.attacks.cross_entropy_loss`) is called the member.
  ``A >= 1/2 + (p_R - p_D)/2``.
- ``"bounded-loss"`` (Thm 4.2.2): with a loss in [0, 1] (here ``1 - p_y``), take the two records in random
  order and call the first one *reserve* with probability ``loss(u_1)``. ``A >= 1/2 + (e_R - e_D)/2``.
- ``"retrain"`` (Thm 4.2.4): train ``M_1`` on ``(D_D \\ {d}) + {u_1}`` and ``M_2`` on ``(D_D \\ {d}) + {u_2}``
  with the defender's trainer, and call the member the candidate whose model is closer to ``M_D``. The
  models are compared either through their outputs on a probe set (``compare="predictions"``: black-box,
  as Thm 5.2.2 frames it; ``predict_proba``, else ``decision_function``, else ``predict``) or through their
  fitted parameters (``compare="parameters"``: white-box; every numeric fitted attribute). Distance is the
  sum of squared differences; an exact tie is settled by a fair coin from the seeded generator. A
  deterministic, order-invariant, injective trainer gives accuracy 1 (privacy 0).

Scenarios (thesis Sec. 4.2.3): what the defender does and what the attacker can reproduce.

- ``"original"``: the defender trains on ``D_D`` in the given order with a fixed seed; the attacker knows
  both and retrains with the candidate in ``d``'s place and the same seed.
- ``"random"``: the defender trains on ``D_D`` in a secret random order, seed still fixed and known; the
  attacker retrains in the given order.
- ``"unseeded"``: secret random order and a secret random seed; the attacker retrains in the given order
  with seeds of its own (one per round, shared by the two candidates so that they differ only in the data).

Every random choice (rounds, the defender's permutation and seed, the attacker's seeds, coin flips) comes
from ``random_state``, so a game is reproducible; "secret" means the attacker's code never sees it.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import ThreadpoolController

from mipkit._random import check_random_state, spawn_seed, spawn_seeds
from mipkit._validation import MipkitValueError, check_choice, check_finite_array, check_positive_int
from mipkit.attacks.model_compare import (
    _fitted_parameters,
    _squared_distance,
    model_outputs,
    parameter_distance,
)
from mipkit.attacks.signals import cross_entropy_loss, true_class_probability
from mipkit.game.trainers import TrainerSpec, predict_full_proba, resolve_trainer
from mipkit.stats import Proportion

__all__ = [
    "LTU_SCENARIOS",
    "LTU_STRATEGIES",
    "LTUResult",
    "ltu_game",
    "ltu_loss_game",
    "ltu_privacy",
    "model_outputs",
    "parameter_distance",
]

LTU_STRATEGIES = ("loss", "bounded-loss", "retrain")
LTU_SCENARIOS = ("original", "random", "unseeded")


def ltu_privacy(correct: int, trials: int) -> tuple[float, float]:
    """Global LTU privacy and its error bar (Pedersen eq. (4.9)).

    ``A = correct / trials``; returns ``(min{2 (1 - A), 1}, 2 sqrt(A (1 - A) / trials))``. Privacy 1 means
    the attacker does no better than a coin (``A <= 1/2``), 0 that it is always right.
    """
    accuracy = Proportion(int(correct), int(trials)).value
    return min(2.0 * (1.0 - accuracy), 1.0), 2.0 * math.sqrt(accuracy * (1.0 - accuracy) / trials)


@dataclass(frozen=True, eq=False)
class LTUResult:
    """Outcome of an LTU game.

    Attributes
    ----------
    accuracy : Proportion
        Correct rounds out of ``n_rounds`` (exact Clopper-Pearson interval on demand).
    privacy, privacy_error : float
        ``min{2(1 - A), 1}`` and ``2 sqrt(A(1 - A)/N)`` (Pedersen eq. (4.9)).
    per_record : pandas.DataFrame
        One row per round: ``round``, ``defender`` and ``reserve`` (row indices into ``X``),
        ``score_defender`` / ``score_reserve`` (the attacker's membership evidence, higher = member: minus the
        loss, or minus the distance to ``M_D`` for ``"retrain"``), ``tie`` and ``correct``.
    strategy, scenario, compare : str
        What was run (``compare`` only matters for ``"retrain"``).
    utility : float
        Accuracy of the defender's model on held-out records (the reserve set unless ``utility_idx`` was
        given).
    """

    accuracy: Proportion
    privacy: float
    privacy_error: float
    per_record: pd.DataFrame
    strategy: str
    scenario: str
    compare: str
    utility: float
    extra: dict = field(default_factory=dict)

    def individual(self, by: str = "defender") -> pd.DataFrame:
        """Per-record accuracy and privacy: rounds grouped by their defender (or reserve) record.

        Meaningful as individual scores when the game fixed that record for all rounds
        (``fixed_defender=`` / ``fixed_reserve=``) or ran many rounds per record.
        """
        check_choice("by", by, ("defender", "reserve"), owner="LTUResult.individual")
        grouped = self.per_record.groupby(by)["correct"].agg(["sum", "count"]).reset_index()
        grouped = grouped.rename(columns={"sum": "correct", "count": "rounds"})
        grouped["accuracy"] = grouped["correct"] / grouped["rounds"]
        grouped["privacy"] = np.minimum(2.0 * (1.0 - grouped["accuracy"]), 1.0)
        return grouped

    def to_dict(self, confidence: float = 0.95) -> dict:
        """JSON-able summary (without the per-round table)."""
        return {
            "strategy": self.strategy,
            "scenario": self.scenario,
            "compare": self.compare,
            "accuracy": self.accuracy.to_dict(confidence),
            "privacy": self.privacy,
            "privacy_error": self.privacy_error,
            "utility": self.utility,
            **self.extra,
        }


# ---------------------------------------------------------------------------------------------------------
# the game


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


def ltu_game(
    trainer,
    X,
    y,
    *,
    defender_idx,
    reserve_idx,
    strategy: str = "loss",
    n_rounds: int = 100,
    random_state=None,
    compare: str = "predictions",
    scenario: str = "original",
    probe_X=None,
    fixed_defender: int | None = None,
    fixed_reserve: int | None = None,
    n_retrains: int = 1,
    utility_idx=None,
    n_jobs: int | None = 1,
) -> LTUResult:
    """Play ``n_rounds`` rounds of the LTU game against ``trainer`` (Pedersen ch. 4.2; docs/theory.md
    section 5).

    Parameters
    ----------
    trainer : TrainerSpec or str
        The defender's trainer (``mipkit.game.trainers.TrainerSpec``; a string is resolved as an import path).
    X : array of shape (n, d)
    y : array of shape (n,)
        Labels (any values; encoded to ``0..C-1`` internally).
    defender_idx, reserve_idx : int arrays
        Disjoint row indices of ``D_D`` (in the defender's original order) and ``D_R``.
    strategy : {"loss", "bounded-loss", "retrain"}
        Thm 4.2.1, Thm 4.2.2 or Thm 4.2.4 (see the module docstring).
    n_rounds : int
        Number of rounds ``N``. Records are drawn without replacement while ``N`` does not exceed the set
        size, with replacement beyond.
    random_state : int, Generator or None
    compare : {"predictions", "parameters"}
        How the retrain strategy compares models (black-box outputs on ``probe_X``, or fitted parameters).
    scenario : {"original", "random", "unseeded"}
        The defender's randomness (thesis Sec. 4.2.3).
    probe_X : array, optional
        Queries for ``compare="predictions"``; default all rows of ``X`` in ``D_D`` and ``D_R``.
    fixed_defender, fixed_reserve : int, optional
        Row index of a record kept for every round (individual privacy scores).
    n_retrains : int
        Models the attacker trains per candidate (distances averaged); more than 1 only helps when the
        attacker's retraining is random (scenario ``"unseeded"``).
    utility_idx : int array, optional
        Rows on which to measure the defender model's accuracy (``LTUResult.utility``); default the reserve.
    n_jobs : int
        Parallel retraining rounds (joblib); ``-1`` uses every core.

    Returns
    -------
    LTUResult
    """
    owner = "ltu_game"
    check_choice("strategy", strategy, LTU_STRATEGIES, owner=owner)
    check_choice("compare", compare, ("predictions", "parameters"), owner=owner)
    check_choice("scenario", scenario, LTU_SCENARIOS, owner=owner)
    n_rounds = check_positive_int("n_rounds", n_rounds, owner=owner)
    n_retrains = check_positive_int("n_retrains", n_retrains, owner=owner)
    if isinstance(trainer, str):
        trainer = resolve_trainer(trainer)
    if not callable(getattr(trainer, "build", None)):
        raise MipkitValueError(f"The 'trainer' parameter of {owner} must be a TrainerSpec. Got {trainer!r}.")
    features = np.asarray(X)
    if features.ndim != 2:
        raise MipkitValueError(f"X must be 2-dimensional (n, d). Got shape {features.shape} instead.")
    labels_raw = np.asarray(y)
    if labels_raw.shape != (features.shape[0],):
        raise MipkitValueError(f"y must have shape ({features.shape[0]},). Got {labels_raw.shape} instead.")
    _, labels = np.unique(labels_raw, return_inverse=True)
    n_classes = int(labels.max()) + 1
    defenders = _check_indices("defender_idx", defender_idx, features.shape[0])
    reserves = _check_indices("reserve_idx", reserve_idx, features.shape[0])
    if np.intersect1d(defenders, reserves).size:
        raise MipkitValueError("defender_idx and reserve_idx must be disjoint.")

    rng = check_random_state(random_state)
    defender_seed = spawn_seed(rng)
    permutation = rng.permutation(defenders.size)
    round_d = _draw(rng, defenders, n_rounds, fixed_defender, "defender")
    round_r = _draw(rng, reserves, n_rounds, fixed_reserve, "reserve")
    attacker_seeds = np.reshape(spawn_seeds(rng, n_rounds * n_retrains), (n_rounds, n_retrains))
    coins = rng.random(n_rounds)
    first_is_defender = rng.random(n_rounds) < 0.5  # the pair's order, for "bounded-loss"

    train_order = defenders if scenario == "original" else defenders[permutation]
    if scenario == "unseeded":
        defender_seed_used = spawn_seed(rng)  # the secret seed: never handed to the attacker
    else:
        defender_seed_used = defender_seed
    defender_model = _fit(trainer, defender_seed_used, features[train_order], labels[train_order])
    held_out = reserves if utility_idx is None else _check_indices("utility_idx", utility_idx, len(labels))
    held_out_proba = predict_full_proba(defender_model, features[held_out], n_classes)
    utility = float(np.mean(np.argmax(held_out_proba, axis=1) == labels[held_out]))

    if strategy in ("loss", "bounded-loss"):
        rows = np.concatenate([round_d, round_r])
        proba = predict_full_proba(defender_model, features[rows], n_classes)
        if strategy == "loss":
            evidence = -cross_entropy_loss(proba, labels[rows])
        else:
            evidence = true_class_probability(proba, labels[rows])  # = 1 - bounded loss
        score_d, score_r = evidence[:n_rounds], evidence[n_rounds:]
    else:
        position_of = {int(row): pos for pos, row in enumerate(defenders)}
        if compare == "predictions":
            probe = (
                features[np.concatenate([defenders, reserves])]
                if probe_X is None
                else np.asarray(probe_X, dtype=float)
            )
            reference = model_outputs(defender_model, probe)
        else:
            probe = None
            reference = _fitted_parameters(defender_model)
        known_seed = [defender_seed]
        jobs = (
            delayed(_retrain_round)(
                trainer,
                features,
                labels,
                defenders,
                position_of[int(round_d[t])],
                (int(round_d[t]), int(round_r[t])),
                [int(s) for s in attacker_seeds[t]] if scenario == "unseeded" else known_seed,
                compare,
                probe,
                reference,
            )
            for t in range(n_rounds)
        )
        distances = np.array(Parallel(n_jobs=n_jobs)(jobs), dtype=float).reshape(n_rounds, 2)
        score_d, score_r = -distances[:, 0], -distances[:, 1]

    if strategy == "bounded-loss":
        # first record u_1 is called "reserve" with probability loss(u_1) = 1 - p_y(u_1)
        loss_first = np.where(first_is_defender, 1.0 - score_d, 1.0 - score_r)
        first_called_reserve = coins < loss_first
        correct = np.where(first_is_defender, ~first_called_reserve, first_called_reserve)
        tie = np.zeros(n_rounds, dtype=bool)
    else:
        tie, correct = _pair_verdicts(score_d, score_r, coins)
    table = {"round": np.arange(n_rounds), "defender": round_d, "reserve": round_r}
    return _result(
        table, score_d, score_r, tie, correct, strategy, scenario, compare, utility, n_retrains=n_retrains
    )


def _pair_verdicts(
    score_d: np.ndarray, score_r: np.ndarray, coins: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(tie, correct)`` of rounds in which the record with the higher evidence is called the member; an
    exact tie is settled by the fair coin ``coins < 1/2``."""
    tie = score_d == score_r
    return tie, np.where(tie, coins < 0.5, score_d > score_r)


def _result(
    table: dict,
    score_d: np.ndarray,
    score_r: np.ndarray,
    tie: np.ndarray,
    correct: np.ndarray,
    strategy: str,
    scenario: str,
    compare: str,
    utility: float,
    **extra,
) -> LTUResult:
    n_rounds = int(correct.size)
    n_correct = int(np.sum(correct))
    privacy, error = ltu_privacy(n_correct, n_rounds)
    per_record = pd.DataFrame(
        {
            **table,
            "score_defender": score_d,
            "score_reserve": score_r,
            "tie": tie,
            "correct": correct.astype(bool),
        }
    )
    return LTUResult(
        accuracy=Proportion(n_correct, n_rounds),
        privacy=privacy,
        privacy_error=error,
        per_record=per_record,
        strategy=strategy,
        scenario=scenario,
        compare=compare,
        utility=utility,
        extra={"n_rounds": n_rounds, "n_ties": int(np.sum(tie)), **extra},
    )


def ltu_loss_game(loss, in_mask, *, random_state=None) -> LTUResult:
    """The LTU game with the loss strategy (Pedersen Thm 4.2.1) played on models that are already trained.

    Row ``t`` of ``loss`` and ``in_mask`` belongs to one trained model (e.g. each target model of an audit).
    For each model in turn its members and non-members are paired at random, each record in at most one
    pair (``min(#members, #non-members)`` rounds); in each round the record with the lower loss is called
    the member, and an exact tie is settled by a fair coin. The rounds of all models are pooled: accuracy
    ``A`` over ``N`` rounds gives the privacy ``min{2(1 - A), 1} +- 2 sqrt(A(1 - A)/N)`` (eq. (4.9);
    docs/theory.md section 5). It is :func:`ltu_game`'s ``"loss"`` strategy without the training step.

    Parameters
    ----------
    loss : array of shape (T, n)
        Loss of each model on each record (e.g. :func:`mipkit.attacks.cross_entropy_loss`).
    in_mask : bool array of shape (T, n)
        ``in_mask[t, i]`` is True iff record ``i`` was in model ``t``'s training set.
    random_state : int, Generator or None
        Draws, model by model, the pairing (a permutation of the members, then of the non-members) and the
        coins.

    Returns
    -------
    LTUResult
        ``scenario="fitted"``; ``per_record`` has a ``model`` column (the row of ``in_mask``); ``utility`` is
        NaN (no defender model is trained here).
    """
    owner = "ltu_loss_game"
    losses = check_finite_array("loss", loss, ndim=2, owner=owner)
    member = np.asarray(in_mask)
    if member.shape != losses.shape or not (member.dtype == bool or np.all((member == 0) | (member == 1))):
        raise MipkitValueError(
            f"The 'in_mask' parameter of {owner} must be a boolean array of the shape of loss {losses.shape}."
        )
    member = member.astype(bool)
    rng = check_random_state(random_state)
    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for t in range(losses.shape[0]):
        members = rng.permutation(np.flatnonzero(member[t]))
        others = rng.permutation(np.flatnonzero(~member[t]))
        m = min(members.size, others.size)
        parts.append((t, members[:m], others[:m], rng.random(m)))
    if sum(p[1].size for p in parts) == 0:
        raise MipkitValueError(f"{owner} needs a model with both members and non-members.")
    model = np.concatenate([np.full(d.size, t) for t, d, _, _ in parts])
    round_d = np.concatenate([d for _, d, _, _ in parts])
    round_r = np.concatenate([r for _, _, r, _ in parts])
    coins = np.concatenate([c for _, _, _, c in parts])
    score_d, score_r = -losses[model, round_d], -losses[model, round_r]
    tie, correct = _pair_verdicts(score_d, score_r, coins)
    table = {"round": np.arange(round_d.size), "model": model, "defender": round_d, "reserve": round_r}
    return _result(table, score_d, score_r, tie, correct, "loss", "fitted", "predictions", float("nan"))
