"""The Ray backend gives the same outputs as the local backend (one local Ray instance, ~10-30 s)."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problem import open_ledger, problem

from mipkit.engine import run_fits

ray = pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")


@pytest.mark.ray
def test_ray_backend_equals_local_backend(tmp_path):
    trainer, X, y, tasks = problem()
    tasks = tasks[:4]
    query = X[::3]
    local = run_fits(trainer, X, y, tasks, query_X=query, n_jobs=1)
    with open_ledger(tmp_path, trainer, X, y, tasks) as ledger:
        # one task already committed: Ray fits only the other three
        ledger_first = run_fits(trainer, X, y, tasks[:1], query_X=query, ledger=ledger, n_jobs=1)
        calls = []
        on_ray = run_fits(
            trainer,
            X,
            y,
            tasks,
            query_X=query,
            ledger=ledger,
            backend="ray",
            n_jobs=2,
            progress=lambda stage, done, total: calls.append((done, total)),
        )
        backends = {r["idx"]: r["meta"]["backend"] for r in ledger.records()}
    assert not ray.is_initialized()  # the local instance started for the run is shut down
    np.testing.assert_array_equal(ledger_first[0], local[0])
    np.testing.assert_array_equal(on_ray, local)
    assert backends == {0: "local", 1: "ray", 2: "ray", 3: "ray"}
    # the Ray backend reports to the same callback: the resumed fit first, then one call per new fit
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
