"""What runs in a worker of :func:`mipkit.engine.run_fits`: one fit (both backends run :func:`fit_one`) and
the local backend (joblib's loky processes, each tied to the run that started it)."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.engine.tasks import FitTask
from mipkit.game.trainers import TrainerSpec, predict_full_proba

__all__ = ["fit_one", "run_local"]


def fit_one(
    trainer: TrainerSpec,
    X: np.ndarray,
    y: np.ndarray,
    query_X: np.ndarray | None,
    task: FitTask,
    n_classes: int,
) -> tuple[int, np.ndarray, dict]:
    """Fit one task and return ``(index, proba (n_query, n_classes), meta)``; runs in a worker."""
    from threadpoolctl import threadpool_limits

    try:
        with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator = trainer.build(task.seed)
            start = time.perf_counter()  # fit + predict, not the first import of the trainer's package
            estimator.fit(X[task.train_idx], y[task.train_idx])
            proba = predict_full_proba(estimator, X if query_X is None else query_X, n_classes)
    except MipkitValueError:
        raise
    except Exception as exc:
        raise MipkitValueError(
            f"Fitting trainer {trainer.import_path!r} for task {task.index} failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    meta = {
        "seed": task.seed,
        "n_train": int(task.train_idx.size),
        "seconds": time.perf_counter() - start,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught})[:10],
    }
    return task.index, proba, meta


_GUARDED = False


def _guard_worker(parent_pid: int) -> None:
    """Tie a local worker process to the run that started it (called in the worker, once).

    * Its stdout becomes its stderr, so that nothing a trainer prints reaches the run's standard output
      (``--json`` stays one object).
    * A watchdog thread ends the worker within a quarter of a second of its parent's death (a SIGKILL of
      the run included); otherwise joblib's workers, and the resource trackers waiting on them, would keep
      running for minutes and hold the terminal's pipes open (``mipkit audit ... | tee log`` would hang).
    """
    global _GUARDED
    if _GUARDED or os.getpid() == parent_pid:
        return
    _GUARDED = True
    try:
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real descriptors
        pass

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.25)
        os._exit(1)

    threading.Thread(target=watch, name="mipkit-parent-watch", daemon=True).start()


def run_local(
    trainer: TrainerSpec,
    X: np.ndarray,
    y: np.ndarray,
    query_X: np.ndarray | None,
    todo: list[FitTask],
    n_classes: int,
    n_workers: int,
    on_result: Callable[[int, np.ndarray, dict], None],
) -> None:
    """joblib (loky) processes; results are handed to ``on_result`` in the parent as each fit finishes.

    Each worker starts with :func:`_guard_worker` (its output kept off stdout, and ended with the run).
    """
    from joblib import Parallel, delayed, parallel_config

    n_workers = min(n_workers, len(todo))
    with parallel_config(backend="loky", initializer=_guard_worker, initargs=(os.getpid(),)):
        parallel = Parallel(n_jobs=n_workers, return_as="generator_unordered", batch_size=1)
    for index, proba, meta in parallel(
        delayed(fit_one)(trainer, X, y, query_X, task, n_classes) for task in todo
    ):
        on_result(index, proba, meta)
