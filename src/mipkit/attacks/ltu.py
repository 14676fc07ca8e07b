"""The Leave-Two-Unlabeled (LTU) attacker of Pedersen et al. (thesis ch. 4.2 and 5.2; MATH.md 5).

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

from mipkit._random import check_random_state
from mipkit._validation import MipkitValueError, check_choice, check_positive_int
from mipkit.attacks.signals import cross_entropy_loss, true_class_probability
from mipkit.game.trainers import TrainerSpec, predict_full_proba, resolve_trainer
from mipkit.metrics import Proportion

__all__ = [
    "LTU_SCENARIOS",
    "LTU_STRATEGIES",
    "LTUResult",
    "ltu_game",
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
# comparing models


def model_outputs(model: Any, X: np.ndarray) -> np.ndarray:
    """Black-box outputs of a fitted model on ``X``: ``predict_proba``, else ``decision_function``, else
    ``predict``, as a float array. (RidgeClassifier and Perceptron have no ``predict_proba``; their
    ``decision_function`` values are what a black-box query returns.)"""
    for method in ("predict_proba", "decision_function", "predict"):
        fn = getattr(model, method, None)
        if callable(fn):
            return np.asarray(fn(X), dtype=float)
    raise MipkitValueError(f"{type(model).__name__} has no predict_proba, decision_function or predict.")


def _numeric_arrays(value: Any, depth: int = 0) -> list[np.ndarray]:
    """Numeric content of a fitted attribute, flattened to float arrays (recursing into lists of estimators,
    object arrays and objects whose pickled state is a dict, e.g. scikit-learn's ``Tree``)."""
    if depth > 4 or value is None or isinstance(value, (str, bytes)):
        return []
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return [np.array([float(value)])]
    if isinstance(value, np.ndarray):
        if value.dtype.names:
            from numpy.lib import recfunctions

            return [recfunctions.structured_to_unstructured(value).astype(float).ravel()]
        if value.dtype == object:
            return [a for item in value.ravel() for a in _numeric_arrays(item, depth + 1)]
        if np.issubdtype(value.dtype, np.number) or value.dtype == bool:
            return [value.astype(float).ravel()]
        return []
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _numeric_arrays(item, depth + 1)]
    if hasattr(value, "get_params") and hasattr(value, "__dict__"):
        return _fitted_parameters(value, depth + 1)
    getstate = getattr(value, "__getstate__", None)
    if callable(getstate):
        try:
            state = getstate()
        except TypeError:
            return []
        if isinstance(state, dict):
            return [a for key in sorted(state) for a in _numeric_arrays(state[key], depth + 1)]
    return []


def _fitted_parameters(model: Any, depth: int = 0) -> list[np.ndarray]:
    names = sorted(k for k in vars(model) if k.endswith("_") and not k.startswith("_"))
    return [a for name in names for a in _numeric_arrays(getattr(model, name), depth)]


def _squared_distance(first: list[np.ndarray], second: list[np.ndarray]) -> float:
    if len(first) != len(second) or any(a.shape != b.shape for a, b in zip(first, second, strict=True)):
        return math.inf
    total = 0.0
    for a, b in zip(first, second, strict=True):
        both_nan = np.isnan(a) & np.isnan(b)
        diff = np.where(both_nan, 0.0, a - b)
        total += float(np.sum(np.where(np.isnan(diff), np.inf, diff * diff)))
    return total


def parameter_distance(model_a: Any, model_b: Any) -> float:
    """Sum of squared differences between two fitted models' numeric fitted attributes (white-box); ``inf``
    when their structures differ (e.g. trees of different shapes)."""
    return _squared_distance(_fitted_parameters(model_a), _fitted_parameters(model_b))


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
    """Play ``n_rounds`` rounds of the LTU game against ``trainer`` (Pedersen ch. 4.2, MATH.md 5).

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
    defender_seed = int(rng.integers(0, 2**31 - 1))
    permutation = rng.permutation(defenders.size)
    round_d = _draw(rng, defenders, n_rounds, fixed_defender, "defender")
    round_r = _draw(rng, reserves, n_rounds, fixed_reserve, "reserve")
    attacker_seeds = rng.integers(0, 2**31 - 1, size=(n_rounds, n_retrains))
    coins = rng.random(n_rounds)
    first_is_defender = rng.random(n_rounds) < 0.5  # the pair's order, for "bounded-loss"

    train_order = defenders if scenario == "original" else defenders[permutation]
    if scenario == "unseeded":
        defender_seed_used = int(rng.integers(0, 2**31 - 1))  # the secret seed: never handed to the attacker
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

    tie = score_d == score_r
    if strategy == "bounded-loss":
        # first record u_1 is called "reserve" with probability loss(u_1) = 1 - p_y(u_1)
        loss_first = np.where(first_is_defender, 1.0 - score_d, 1.0 - score_r)
        first_called_reserve = coins < loss_first
        correct = np.where(first_is_defender, ~first_called_reserve, first_called_reserve)
        tie = np.zeros(n_rounds, dtype=bool)
    else:
        correct = np.where(tie, coins < 0.5, score_d > score_r)
    n_correct = int(np.sum(correct))
    privacy, error = ltu_privacy(n_correct, n_rounds)
    per_record = pd.DataFrame(
        {
            "round": np.arange(n_rounds),
            "defender": round_d,
            "reserve": round_r,
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
        extra={"n_rounds": n_rounds, "n_ties": int(np.sum(tie)), "n_retrains": n_retrains},
    )
