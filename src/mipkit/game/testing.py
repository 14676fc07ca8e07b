"""Slow work for tests, examples and benchmarks of the engine (not meant for real audits).

They are importable by path (``"mipkit.game.testing.SlowTrainer"``), so worker processes and Ray workers can
build them like any other trainer, and unpickle a :class:`SlowWork` by reference.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from mipkit.game.trainers import register_trainer

__all__ = ["SlowTrainer", "SlowWork"]


@register_trainer
class SlowTrainer(ClassifierMixin, BaseEstimator):
    """Logistic regression whose ``fit`` also sleeps ``delay`` seconds and can log each fit to a file.

    Used to make a run last long enough to be killed in the middle (resume tests) and to count how many fits
    actually happened: with ``log_path`` set, every finished ``fit`` appends one line ``"<pid>\\n"`` to that
    file (a single ``O_APPEND`` write, so lines from concurrent processes do not interleave).

    Parameters
    ----------
    delay : float
        Seconds to sleep inside ``fit``.
    log_path : str or None
        File to append one line per finished fit to.
    C : float
        Inverse regularisation strength of the logistic regression.
    random_state : int or None
        Passed to the logistic regression.
    """

    def __init__(self, delay: float = 0.0, log_path: str | None = None, C: float = 1.0, random_state=None):
        self.delay = delay
        self.log_path = log_path
        self.C = C
        self.random_state = random_state

    def fit(self, X, y):
        self.model_ = LogisticRegression(C=self.C, max_iter=500, random_state=self.random_state).fit(X, y)
        self.classes_ = self.model_.classes_
        if self.delay > 0:
            time.sleep(self.delay)
        if self.log_path:
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{os.getpid()}\n".encode())
            finally:
                os.close(fd)
        return self

    def predict_proba(self, X) -> np.ndarray:
        return self.model_.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(X)


@dataclass(frozen=True)
class SlowWork:
    """``work(*args)`` after sleeping ``delay`` seconds: a neighbour-search block (or any task body) that
    lasts long enough for a test to kill the worker running it.

    Parameters
    ----------
    work : callable
        The task body to run.
    delay : float
        Seconds to sleep before running it.
    """

    work: Callable[..., Any]
    delay: float

    def __call__(self, *args: Any) -> Any:
        time.sleep(self.delay)
        return self.work(*args)
