"""Run many fits of one trainer - on local processes or a Ray cluster - and collect their class probabilities.

A run is a list of :class:`FitTask` (which rows to train on, in which order, with which seed). Each task is
fitted by a fresh estimator built from the :class:`~mipkit.game.trainers.TrainerSpec` with ``random_state``
set to the task's seed, and queried with ``predict_proba`` on the query rows. The output of the run is the
float array ``(n_tasks, n_query, n_classes)`` in task order, whatever order the fits finish in.

Reproducibility: a task's output depends only on the trainer, the data, its training indices (and their
order) and its seed. Every fit runs with BLAS / OpenMP limited to one thread (``threadpoolctl``), so the
numerical path is the same on 1 or many workers and on either backend; the same seeds therefore give
bit-identical outputs with ``backend="local"`` (any ``n_jobs``) and ``backend="ray"`` on the same software.

Resume: with a :class:`~mipkit.engine.ledger.Ledger`, each finished fit is committed by the parent process as
soon as it arrives, and tasks already in the ledger are not fitted again.

Progress: the engine draws nothing. It reports to one optional ``progress(stage, done, total)``
(:class:`mipkit._progress.Progress`; counts of fits, those read back from the ledger included) and the caller
- the command line's Rich bar, a notebook widget, a log line - decides what to show.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import numpy as np

from mipkit._progress import Progress
from mipkit._validation import MipkitValueError, check_choice
from mipkit.engine.ledger import Ledger, hash_array
from mipkit.engine.tasks import FitTask, tasks_from_membership
from mipkit.engine.workers import fit_one, run_local
from mipkit.game.trainers import TrainerSpec

__all__ = [
    "BACKENDS",
    "FitTask",
    "FitWarning",
    "resolve_n_jobs",
    "run_fits",
    "tasks_from_membership",
]

BACKENDS = ("local", "ray")

#: The stage :func:`run_fits` reports to ``progress`` by default (units: fits).
STAGE = "model fits"


class FitWarning(UserWarning):
    """Warnings raised inside the fits of a run, summarised once per distinct message."""


def resolve_n_jobs(n_jobs: int) -> int:
    """joblib's convention: ``-1`` all cores, ``-2`` all but one, ...; a positive int as is; 0 refused."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise MipkitValueError(f"The 'n_jobs' parameter must be a non-zero integer. Got {n_jobs!r} instead.")
    cpus = os.cpu_count() or 1
    return int(n_jobs) if n_jobs > 0 else max(1, cpus + 1 + int(n_jobs))


def _check_inputs(
    trainer: Any, X: Any, y: Any, tasks: Sequence[FitTask], query_X: Any, n_classes: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    if not isinstance(trainer, TrainerSpec):
        raise MipkitValueError(
            "The 'trainer' parameter of run_fits must be a TrainerSpec (see mipkit.game.resolve_trainer). "
            f"Got {type(trainer).__name__} instead."
        )
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim < 2 or X.dtype == object:
        raise MipkitValueError(f"X must be a numeric array with at least 2 dimensions. Got shape {X.shape}.")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise MipkitValueError(f"y must be 1-D with one label per row of X. Got y {y.shape} for X {X.shape}.")
    if not np.issubdtype(y.dtype, np.integer):
        if np.issubdtype(y.dtype, np.floating) and np.all(np.isfinite(y)) and np.all(np.mod(y, 1) == 0):
            y = y.astype(np.int64)
        else:
            raise MipkitValueError(
                "y must hold integer class codes 0..C-1 (encode labels first, e.g. with "
                "mipkit.data.features_target)."
            )
    if y.size and y.min() < 0:
        raise MipkitValueError("y must hold integer class codes 0..C-1; found negative labels.")
    if n_classes is None:
        n_classes = int(y.max()) + 1 if y.size else 0
    elif int(n_classes) <= (int(y.max()) if y.size else -1):
        raise MipkitValueError(f"n_classes={n_classes} but y has labels up to {int(y.max())}.")
    if n_classes < 2:
        raise MipkitValueError("y must contain at least two classes.")
    if query_X is not None:
        query_X = np.asarray(query_X)
        if query_X.ndim != X.ndim or query_X.shape[1:] != X.shape[1:] or query_X.dtype == object:
            raise MipkitValueError(
                f"query_X must be numeric with the same columns as X. Got {query_X.shape} for X {X.shape}."
            )
    seen: set[int] = set()
    for task in tasks:
        if not isinstance(task, FitTask):
            raise MipkitValueError(f"tasks must be FitTask objects. Got {type(task).__name__}.")
        if task.index in seen:
            raise MipkitValueError(f"Task index {task.index} appears twice; task indices must be unique.")
        seen.add(task.index)
        if task.train_idx.min() < 0 or task.train_idx.max() >= X.shape[0]:
            raise MipkitValueError(f"Task {task.index} has training indices outside 0..{X.shape[0] - 1}.")
    return X, y, query_X, int(n_classes)


def _task_keys(
    trainer: TrainerSpec, X: np.ndarray, y: np.ndarray, query_X: np.ndarray | None, tasks, n_classes: int
) -> dict[int, str]:
    """Per-task hash of everything its output depends on (guards against stale ledger rows)."""
    base = hashlib.sha256()
    for part in (
        trainer.fingerprint(),
        hash_array(X),
        hash_array(y),
        "X" if query_X is None else hash_array(query_X),
        str(n_classes),
    ):
        base.update(part.encode() + b"|")
    keys = {}
    for task in tasks:
        h = base.copy()
        h.update(f"{task.index}:{task.seed}:".encode())
        h.update(hash_array(task.train_idx).encode())
        keys[task.index] = h.hexdigest()
    return keys


def _check_progress(value: Any) -> Progress | None:
    """The ``progress`` argument of :func:`run_fits` as a callable or None (the engine draws nothing)."""
    if value is None:
        return None
    if not callable(value):
        raise MipkitValueError(
            "The 'progress' parameter of run_fits must be None or a callable progress(stage, done, total). "
            f"Got {type(value).__name__} instead."
        )
    return value


def run_fits(
    trainer: TrainerSpec,
    X: np.ndarray,
    y: np.ndarray,
    tasks: list[FitTask],
    *,
    query_X: np.ndarray | None = None,
    ledger: Ledger | None = None,
    backend: str = "local",
    n_jobs: int = -1,
    address: str | None = None,
    progress: Progress | None = None,
    stage: str = STAGE,
    n_classes: int | None = None,
) -> np.ndarray:
    """Fit one model per task and return every model's class probabilities on the query rows.

    Parameters
    ----------
    trainer : TrainerSpec
        What to fit (see :func:`mipkit.game.resolve_trainer`).
    X : ndarray, shape (n, ...)
        Numeric features; task ``t`` trains on ``X[t.train_idx]``.
    y : ndarray of int, shape (n,)
        Class codes ``0..C-1``.
    tasks : list of FitTask
        The fits; indices unique.
    query_X : ndarray, optional
        Rows every model is queried on (default ``X``).
    ledger : Ledger, optional
        Tasks already committed in it are read back instead of fitted (resume); every new fit is committed
        to it as soon as it finishes. A stored row made for a different task definition (its per-task key
        differs) is refitted and replaced.
    backend : {"local", "ray"}
        ``"local"``: joblib (loky) worker processes on this machine. ``"ray"``: Ray tasks, on the cluster at
        ``address`` or on a local Ray instance with ``n_jobs`` CPUs (an already initialised Ray is reused).
    n_jobs : int
        Local workers (joblib convention: ``-1`` = all cores); for Ray, the CPUs of a local instance.
    address : str, optional
        Ray cluster address (``"auto"``, ``"host:6379"``, ``"ray://host:10001"``); only with
        ``backend="ray"``.
    progress : Progress, optional
        ``progress(stage, done, total)``, called in this process once before the first new fit (``done`` = the
        fits read back from the ledger) and after each fit finishes; ``total = len(tasks)``. Not called when
        every task is already in the ledger. The engine itself prints nothing.
    stage : str
        The stage named to ``progress`` (default ``"model fits"``; ``"reference fits"``, say).
    n_classes : int, optional
        Number of classes ``C`` (default ``max(y) + 1``).

    Returns
    -------
    proba : ndarray of float64, shape (n_tasks, n_query, n_classes)
        ``proba[j]`` is ``predict_proba(query_X)`` of the model of ``tasks[j]``, over all classes
        ``0..C-1`` (0 for a class its training set lacked), in the order of ``tasks``.

    Warns
    -----
    FitWarning
        Warnings raised inside the fits (a ``ConvergenceWarning`` per model, say) are collected in the
        workers, stored in each ledger row's ``meta["warnings"]`` and issued once per distinct message in
        this process as a :class:`FitWarning` ("12 of 64 fits warned: ConvergenceWarning: ...").
    """
    backend = _check_backend(backend, address)
    n_workers = resolve_n_jobs(n_jobs)
    report = _check_progress(progress)
    tasks = list(tasks)
    X, y, query_X, n_classes = _check_inputs(trainer, X, y, tasks, query_X, n_classes)
    n_query = X.shape[0] if query_X is None else query_X.shape[0]
    keys = {} if ledger is None else _task_keys(trainer, X, y, query_X, tasks, n_classes)
    results = _Results(
        np.empty((len(tasks), n_query, n_classes)), tasks, ledger, keys, backend, report, stage
    )
    todo = [task for task in tasks if task.index not in results.reuse()]
    if not todo:
        return results.out
    _fit_all(results, (n_workers, address), trainer, X, y, query_X, todo, n_classes)
    results.warn(len(todo))
    return results.out


def _fit_all(
    results: _Results,
    workers: tuple[int, str | None],
    trainer: TrainerSpec,
    X: np.ndarray,
    y: np.ndarray,
    query_X: np.ndarray | None,
    todo: list[FitTask],
    n_classes: int,
) -> None:
    """Fit the tasks ``todo`` on the results' backend (``workers``: local workers or Ray CPUs, and the Ray
    address), each result handed to ``results`` as it arrives."""
    n_workers, address = workers
    with ExitStack() as stack:
        if results.backend == "ray":
            from mipkit.engine.ray_backend import ray_session, run_ray

            stack.enter_context(ray_session(n_cpus=n_workers, address=address))
        results.report_done()
        if results.backend == "local":
            run_local(trainer, X, y, query_X, todo, n_classes, n_workers, results.put)
        else:
            run_ray(fit_one, trainer, X, y, query_X, todo, n_classes, on_result=results.put)


def _check_backend(backend: str, address: str | None) -> str:
    """``backend`` checked; ``address`` only with Ray."""
    backend = check_choice("backend", backend, BACKENDS, owner="run_fits")
    if address is not None and backend != "ray":
        raise MipkitValueError(
            f"The 'address' parameter of run_fits only applies to backend='ray'. Got backend={backend!r}."
        )
    return backend


class _Results:
    """The run's output ``out`` (task order), filled from the ledger and by each fit as it arrives; each new
    fit is committed to the ledger and reported to ``progress``, and its warnings counted."""

    def __init__(
        self,
        out: np.ndarray,
        tasks: list[FitTask],
        ledger: Ledger | None,
        keys: dict[int, str],
        backend: str,
        report: Progress | None,
        stage: str,
    ) -> None:
        self.out, self.ledger, self.keys, self.backend, self.report = out, ledger, keys, backend, report
        self.stage = stage
        self.position = {task.index: j for j, task in enumerate(tasks)}
        self.total = len(tasks)
        self.done = 0
        self.fit_warnings: Counter[str] = Counter()

    def reuse(self) -> set[int]:
        """Read back the ledger's rows made for these very tasks (same key and shape); their indices."""
        reused: set[int] = set()
        if self.ledger is None:
            return reused
        for index in self.ledger.done() & set(self.position):
            try:
                stored_key = self.ledger.meta(index).get("task_key")
            except KeyError:  # pragma: no cover - a concurrent purge
                continue
            if stored_key != self.keys[index]:
                continue
            stored = self.ledger.get(index)
            if stored.shape != self.out.shape[1:]:
                continue
            self.out[self.position[index]] = stored
            reused.add(index)
        self.done = len(reused)
        return reused

    def report_done(self) -> None:
        if self.report is not None:
            self.report(self.stage, self.done, self.total)

    def put(self, index: int, proba: np.ndarray, meta: dict) -> None:
        """One finished fit: stored, committed to the ledger, reported."""
        self.out[self.position[index]] = proba
        self.fit_warnings.update(meta.get("warnings", ()))
        if self.ledger is not None:
            self.ledger.put(index, proba, {**meta, "backend": self.backend, "task_key": self.keys[index]})
        self.done += 1
        self.report_done()

    def warn(self, n_fitted: int) -> None:
        """One :class:`FitWarning` per distinct warning of the fits (issued for run_fits's caller)."""
        for message, count in sorted(self.fit_warnings.items()):
            warnings.warn(f"{count} of {n_fitted} fits warned: {message}", FitWarning, stacklevel=3)
