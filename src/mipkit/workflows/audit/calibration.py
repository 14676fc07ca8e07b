"""Calibration of the model audit's verdict: null trainers and one-call null audits.

A *null trainer* outputs seeded uniform noise whatever it was trained on, so no attack can do better than
chance and every "measurably reveals" is a false alarm. :func:`null_audit` runs exactly the audit's code
after the fits (:func:`mipkit.workflows.audit.measure.measure`, same seeding as
:func:`mipkit.workflows.audit.run.audit`) on the null trainer's outputs, and reports the headline under
the uncorrected rule (Clopper-Pearson on pooled trials, strongest attack, no correction) and under mipkit's
(two-way cluster bootstrap, simultaneous over the attacks). ``tests/verdicts`` and
``benchmarks/verdict_calibration_model.py`` count false alarms over many seeds (docs/theory.md section 11).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from mipkit._random import spawn_seeds
from mipkit.attacks.registry import AttackInputs
from mipkit.game.trainers import register_trainer
from mipkit.workflows.audit.config import AuditConfig
from mipkit.workflows.audit.measure import measure
from mipkit.workflows.audit.verdict import old_headline_reveals

__all__ = ["NullTrainer", "null_audit"]


@register_trainer
class NullTrainer(ClassifierMixin, BaseEstimator):
    """A classifier whose ``predict_proba`` is seeded uniform noise, independent of its training data.

    ``predict_proba(X)[i, 1] = u_i`` with ``u ~ U(0, 1)^n`` drawn from ``random_state`` (two classes; the
    training labels only fix ``classes_``). Any membership attack on it has eta 0.

    Parameters
    ----------
    random_state : int or None
    """

    def __init__(self, random_state: int | None = None):
        self.random_state = random_state

    def fit(self, X, y) -> NullTrainer:
        self.classes_ = np.unique(np.asarray(y))
        return self

    def predict_proba(self, X) -> np.ndarray:
        p = np.random.default_rng(self.random_state).uniform(size=len(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.predict_proba(X)[:, 1] >= 0.5).astype(int)]


def null_audit(X: np.ndarray, y: np.ndarray, config: AuditConfig) -> dict:
    """The audit of :class:`NullTrainer` on ``(X, y)`` under ``config`` (its seed, models, attacks), without
    fits or a run folder: the same membership matrix, fit seeds and analysis as
    :func:`mipkit.workflows.audit.run.audit`.

    Returns
    -------
    dict
        ``old_reveals`` (the uncorrected rule), ``new_reveals`` (the cluster-bootstrap headline's lower
        end above 0), ``old_per_attack`` / ``new_per_attack`` (each attack's own interval above 0:
        Clopper-Pearson, and marginal cluster), ``eta`` and ``eta_ci`` of the headline, and
        ``design_effect`` per attack.
    """
    from mipkit.game.splits import independent_halves

    n, K, T = len(y), config.n_models, config.n_targets_used
    ss_members, ss_fits, ss_eval = np.random.SeedSequence(config.seed).spawn(3)
    in_mask = independent_halves(n, K, random_state=np.random.default_rng(ss_members))
    probs = np.stack([NullTrainer(s).fit(X, y).predict_proba(X) for s in spawn_seeds(ss_fits, K)])
    inputs = AttackInputs(
        probs=probs,
        y=np.asarray(y),
        in_mask=in_mask,
        targets=np.arange(T),
        random_state=np.random.default_rng(ss_eval),
    )
    _, _, summaries, stats = measure(inputs, config)
    conf = config.confidence
    head = stats["headline"]
    return {
        "old_reveals": old_headline_reveals(summaries, conf),
        "new_reveals": bool(head["reveals"]),
        "old_per_attack": {a: bool(s.eta.interval(conf)[0] > 0) for a, s in summaries.items()},
        "new_per_attack": {a: bool(r["eta_ci"][0] > 0) for a, r in stats["attacks"].items()},
        "eta": head["eta"],
        "eta_ci": head["eta_ci"],
        "design_effect": {a: r["design_effect_eta"] for a, r in stats["attacks"].items()},
        "eta_per_attack": {a: s.eta.eta for a, s in summaries.items()},
        "trials": int(T * n),
    }
