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

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mipkit._random import check_random_state
from mipkit._validation import MipkitValueError, check_choice, check_finite_array
from mipkit.attacks.ltu_rounds import (
    LTU_SCENARIOS,
    LTU_STRATEGIES,
    check_game_inputs,
    check_game_options,
    defender_model,
    draw_rounds,
    loss_evidence,
    pair_verdicts,
    retrain_evidence,
    verdicts,
)
from mipkit.attacks.model_compare import (
    model_outputs,
    parameter_distance,
)
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
    n_rounds, n_retrains = check_game_options(strategy, compare, scenario, n_rounds, n_retrains)
    trainer, features, labels, defenders, reserves = check_game_inputs(
        trainer, X, y, defender_idx, reserve_idx
    )
    rng = check_random_state(random_state)
    rounds = draw_rounds(
        rng, defenders, reserves, n_rounds, n_retrains, scenario, fixed_defender, fixed_reserve
    )
    model, utility = defender_model(trainer, features, labels, defenders, reserves, rounds, utility_idx)
    bounded = strategy == "bounded-loss"
    if strategy == "retrain":
        score_d, score_r = retrain_evidence(
            trainer, features, labels, (defenders, reserves), rounds, model, compare, probe_X, n_jobs
        )
    else:
        score_d, score_r = loss_evidence(model, features, labels, rounds, bounded=bounded)
    tie, correct = verdicts(score_d, score_r, rounds, bounded=bounded)
    table = {"round": np.arange(n_rounds), "defender": rounds.defender, "reserve": rounds.reserve}
    return _result(
        table, score_d, score_r, tie, correct, strategy, scenario, compare, utility, n_retrains=n_retrains
    )


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
    tie, correct = pair_verdicts(score_d, score_r, coins)
    table = {"round": np.arange(round_d.size), "model": model, "defender": round_d, "reserve": round_r}
    return _result(table, score_d, score_r, tie, correct, "loss", "fitted", "predictions", float("nan"))
