"""Distance to closest record (DCR): a membership attack on synthetic data.

The attacker holds the synthetic table and a candidate record. If the generator copied or nearly copied its
training records, training records lie closer to the synthetic data than records it never saw. The score
of a record is ``-DCR``, minus its distance to the closest synthetic record (higher = more likely a member;
``docs/theory.md`` section 9). This module only produces the distances and scores; the attack's ROC, TPR at
low FPR, precision at base rates and the DCR protection scores are measured by :mod:`mipkit.metrics.dcr`.
"""

from __future__ import annotations

import numpy as np

from mipkit._progress import Progress
from mipkit.data.neighbors import Table, kneighbors


def distance_to_closest_record(
    records: Table,
    synthetic: Table,
    *,
    metric: str = "mixed",
    n_jobs: int = 2,
    progress: Progress | None = None,
) -> np.ndarray:
    """DCR of each record: its distance to the closest synthetic record (exact, blocked or tree search)."""
    d, _ = kneighbors(records, synthetic, k=1, metric=metric, n_jobs=n_jobs, progress=progress)
    return d[:, 0]


def dcr_scores(dcr: np.ndarray) -> np.ndarray:
    """The DCR attack's membership scores ``-DCR`` (higher = more likely a training record)."""
    return -np.asarray(dcr, float)
