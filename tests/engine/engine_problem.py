"""A small, deterministic audit-like problem shared by the engine tests (and run as a script by the
SIGKILL resume test: ``python engine_problem.py LEDGER_DIR LOG_PATH``)."""

from __future__ import annotations

import sys

from sklearn.datasets import make_classification

from mipkit.engine import Ledger, make_run_key, run_fits, tasks_from_membership
from mipkit.game import balanced_membership, resolve_trainer

N_RECORDS = 240
N_MODELS = 12


def problem(log_path: str | None = None, delay: float = 0.0):
    X, y = make_classification(N_RECORDS, 8, n_informative=5, n_redundant=0, n_classes=3, random_state=0)
    in_mask = balanced_membership(N_RECORDS, N_MODELS, random_state=1)
    tasks = tasks_from_membership(in_mask, random_state=2)
    trainer = resolve_trainer("mipkit.game.testing.SlowTrainer", {"delay": delay, "log_path": log_path})
    return trainer, X, y, tasks


def open_ledger(ledger_dir, trainer, X, y, tasks) -> Ledger:
    return Ledger(ledger_dir, make_run_key(trainer, X, y, tasks))


def main(ledger_dir: str, log_path: str, delay: float) -> None:
    trainer, X, y, tasks = problem(log_path, delay)
    with open_ledger(ledger_dir, trainer, X, y, tasks) as ledger:
        run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
