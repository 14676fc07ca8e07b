"""The attacks of an audit of one model's outputs, with the registry's own code
(:data:`mipkit.attacks.registry.ATTACKS`):

* LOSS (Yeom et al. 2018) always: it needs the target model's outputs only;
* LiRA (Carlini et al. 2022) and RMIA (Zarifzadeh et al. 2024), offline with at least two reference models,
  online too when some reference models were trained on audited records (``reference member`` = 1).

The game has one target model (index 0 of the registry's ``(K, n, C)`` layout) and ``n`` records; the
reference models are models ``1..R``. The metrics are measured on a game at the MIP prior 1/2
(:func:`balanced_trials`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.attacks.registry import ATTACKS, AttackInputs, _finite, run_score_attacks

__all__ = [
    "BALANCE_STREAM",
    "MIN_REFERENCE_MODELS",
    "attack_scores",
    "balanced_trials",
    "check_attacks_can_run",
    "utility",
]

MIN_REFERENCE_MODELS = 2
"""LiRA fits a Gaussian per record to the reference models' confidences: at least two are needed."""
BALANCE_STREAM = 0xBA1A


def balanced_trials(member: np.ndarray, seed: int) -> np.ndarray:
    """Indices of a game with the MIP prior 1/2: every record of the smaller side (members or
    non-members) and as many of the larger side, drawn at random (seeded); all records when equal.

    Eta is accuracy - 1/2 in a game where a record is a member with probability 1/2 (docs/theory.md
    section 1); measured on an 80/20 mix, the accuracy of cross-fitted guesses is not that game's and a model
    that leaks nothing can show an interval away from 0.
    """
    members, others = np.flatnonzero(member), np.flatnonzero(~member)
    if members.size == others.size:
        return np.arange(member.size)
    small, large = (members, others) if members.size < others.size else (others, members)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), BALANCE_STREAM]))
    return np.sort(np.concatenate([small, rng.choice(large, size=small.size, replace=False)]))


def check_attacks_can_run(requested: Sequence[str], n_reference: int) -> None:
    """Refuse a list of attacks none of which can run: LiRA and RMIA alone without reference models."""
    if "loss" not in requested and n_reference < MIN_REFERENCE_MODELS:
        raise MipkitValueError(
            f"None of the attacks asked for ({', '.join(requested)}) can run: LiRA and RMIA need the outputs "
            f"of at least {MIN_REFERENCE_MODELS} reference models (got {n_reference}). Add loss to the "
            "attacks, or give reference models' outputs."
        )


def reference_plan(requested: Sequence[str], ref_member: np.ndarray | None) -> tuple[list[str], dict]:
    """Which requested attacks run, and why the others are skipped."""
    run, skipped = [], {}
    n_refs = 0 if ref_member is None else ref_member.shape[0]
    for name in requested:
        spec = ATTACKS[name]
        if spec.family != "score":
            skipped[name] = "a pairwise game that needs the training procedure, not one fitted model"
        elif "reference models" in spec.needs and n_refs < MIN_REFERENCE_MODELS:
            for row in spec.rows:
                skipped[row] = (
                    f"needs the outputs of at least {MIN_REFERENCE_MODELS} reference models trained like the "
                    f"target (got {n_refs})"
                )
        else:
            run.append(name)
    if n_refs >= MIN_REFERENCE_MODELS and not ref_member.any():
        for name in run:
            for row in ATTACKS[name].rows:
                if row.endswith("-online"):
                    skipped[row] = (
                        "online attacks need reference models trained on the audited records (IN); these "
                        "reference models never saw them (offline)"
                    )
    return run, skipped


def _offline_scores(inputs: AttackInputs, names: Sequence[str]) -> tuple[dict, dict]:
    """LOSS and the offline rows of LiRA and RMIA when no reference model was trained on an audited record.

    The registry computes the online rows with the offline ones, and online LiRA needs IN reference models;
    here the offline rows are computed with the same functions (:func:`mipkit.attacks.lira.lira_offline`,
    :func:`mipkit.attacks.rmia.rmia_scores`). RMIA's ``a`` cannot be tuned on these reference models (the
    authors tune it by attacking a reference model, which needs its members among the records), so it keeps
    :func:`mipkit.attacks.rmia.rmia_scores`' default 0.3.
    """
    from mipkit.attacks.lira import lira_offline
    from mipkit.attacks.rmia import rmia_scores

    scores, settings = run_score_attacks(inputs, [n for n in names if n == "loss"])
    r, member = inputs.references(0), inputs.in_mask
    if "lira" in names:
        conf = inputs.confidence
        scores["lira-offline"] = _finite(lira_offline(conf[0], conf[r], member[r])[None, :])
    if "rmia" in names:
        p = inputs.true_probability
        scores["rmia-offline"] = _finite(
            rmia_scores(p[0], p[r], member[r], p[0], p[r], online=False)[None, :]
        )
        settings = {
            **settings,
            "rmia_a": {"0": 0.3},
            "rmia_a_source": "default 0.3: offline reference models hold no audited record to tune it on",
            "rmia_population": "every audited record",
        }
    return scores, settings


def attack_scores(
    probs: np.ndarray, y: np.ndarray, in_mask: np.ndarray, requested: Sequence[str]
) -> tuple[AttackInputs, dict[str, np.ndarray], dict, dict[str, str]]:
    """Run the requested attacks the outputs allow on the target model (model 0 of ``probs``).

    Parameters
    ----------
    probs : array of shape (1 + R, n, C)
        The target model's probabilities, then the reference models'.
    y : int array of shape (n,)
        The true class codes.
    in_mask : bool array of shape (1 + R, n)
        Who trained on what (the target's row is the audited membership).
    requested : names of :data:`mipkit.attacks.registry.ATTACKS`

    Returns
    -------
    inputs, scores, settings, skipped
        The attacks' inputs, each run row's scores ``(1, n)``, what the attacks chose, and the rows skipped
        with the reason.
    """
    ref_member = in_mask[1:] if probs.shape[0] > 1 else None
    run, skipped = reference_plan(requested, ref_member)
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=np.array([0]), random_state=None)
    offline_only = ref_member is not None and not ref_member.any()
    all_scores, settings = _offline_scores(inputs, run) if offline_only else run_score_attacks(inputs, run)
    scores = {row: s for row, s in all_scores.items() if row not in skipped}
    return inputs, scores, settings, skipped


def utility(probs: np.ndarray, y: np.ndarray, member: np.ndarray, kind: str, loss: np.ndarray) -> dict:
    """The target model's utility: its accuracy (or mean loss) on members and non-members, and the rate of
    the majority class (a model that learns beats it)."""
    if kind == "loss":
        return {
            "mean_loss_members": float(loss[member].mean()),
            "mean_loss_nonmembers": float(loss[~member].mean()),
            "note": "mean per-record loss of the target model on its training records and on the others",
        }
    correct = probs.argmax(axis=1) == y
    top = np.bincount(y[member], minlength=probs.shape[1]).argmax()
    rate = float(np.mean(y[~member] == top))
    acc = float(correct[~member].mean())
    return {
        "accuracy_nonmembers": acc,
        "accuracy_members": float(correct[member].mean()),
        "majority_class_rate": rate,
        "learns": bool(acc > rate),
        "note": "accuracy of the target model on the non-members and on its training records (members)",
    }
