"""mipkit.engine: running many fits locally (joblib) or on Ray, with a resumable SQLite ledger.

- :func:`run_fits`: fit one model per :class:`FitTask`, return probabilities
  ``(n_tasks, n_query, n_classes)``.
- :class:`Ledger`: ``ledger.sqlite`` in the run folder, one committed row per finished fit.
- :func:`make_run_key`: the ledger namespace of a run (hash of trainer, data and tasks).
- :func:`tasks_from_membership`: tasks from a membership matrix (seeds, fixed or shuffled data order).
"""

from mipkit.engine.ledger import LEDGER_FILENAME, Ledger, hash_array, make_run_key
from mipkit.engine.runner import (
    BACKENDS,
    FitTask,
    FitWarning,
    resolve_n_jobs,
    run_fits,
    tasks_from_membership,
)

__all__ = [
    "BACKENDS",
    "LEDGER_FILENAME",
    "FitTask",
    "FitWarning",
    "Ledger",
    "hash_array",
    "make_run_key",
    "resolve_n_jobs",
    "run_fits",
    "tasks_from_membership",
]
