"""Neighbour searches as Ray block tasks (mipkit.engine.ray_blocks): the same answers as local, the tables
sent once through the object store, and the synthetic audit's results.json equal on both backends.

One local Ray instance (loopback only) serves the whole module; the audits join it (``ray_session`` uses an
instance that is already running and leaves it running).
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

from mipkit.data.neighbors import kneighbors, kneighbors_both_ways
from mipkit.data.neighbors.blocks import BlockPlan, in_blocks
from mipkit.data.tables import check_tables, encode_mixed
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
from mipkit.workflows.audit_synthetic.scale import NOT_COMPARED

ray = pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def session():
    from mipkit.engine.ray_backend import ray_session

    with ray_session(n_cpus=2, address=None) as r:
        yield r


class CountingRay:
    """The ``ray`` module, counting ``put`` calls."""

    def __init__(self, real):
        self._real = real
        self.puts = 0

    def put(self, value):
        self.puts += 1
        return self._real.put(value)

    def __getattr__(self, name):
        return getattr(self._real, name)


def _population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.integers(10, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(list("abcdef"), n),
            "income": rng.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]),
        }
    )


def test_tasks_get_object_refs_and_each_table_is_put_once(session):
    from mipkit.engine.ray_blocks import RayBlockMapper

    rng = np.random.default_rng(0)
    df = _population(600, rng)
    schema = check_tables(df, {})
    a, b = encode_mixed(df.iloc[:300], schema), encode_mixed(df.iloc[300:], schema)
    counting = CountingRay(session)
    mapper = RayBlockMapper(counting)
    args = mapper.task_args((a, b), (0, 100, 0, 100, 2, False, "mixed", "pruned", None))
    assert all(isinstance(x, ray.ObjectRef) for x in args[:2])
    assert not any(isinstance(x, np.ndarray) for x in args)
    assert len(pickle.dumps(args[2:])) < 500  # the spec: row ranges, k, metric
    with in_blocks(BlockPlan(block_rows=70, mapper=mapper)):
        got = kneighbors(a, b, k=2)
        own = kneighbors(a, a, k=2, exclude_self=True)
        both = kneighbors_both_ways(a, b, k=2)
    assert counting.puts == 2  # a and b, once each, for every search of the plan
    assert mapper.tasks > 3 * 25
    for g, w in ((got, kneighbors(a, b, k=2)), (own, kneighbors(a, a, k=2, exclude_self=True))):
        np.testing.assert_array_equal(g[0], w[0])
        np.testing.assert_array_equal(g[1], w[1])
    np.testing.assert_array_equal(both[1][1], kneighbors(b, a, k=2)[1])


def test_a_task_error_is_the_library_error(session):
    from mipkit._validation import MipkitValueError
    from mipkit.engine.ray_blocks import RayBlockMapper

    def work(x, spec):
        raise MipkitValueError(f"bad block {spec}")

    with pytest.raises(MipkitValueError, match="bad block 3"):
        RayBlockMapper(session)(work, (np.zeros(3),), [(3,)])


def test_audit_on_ray_has_the_results_of_the_local_audit(session):
    """Many small blocks (150 x 150 rows) on 1,200-row tables: results.json equal but for NOT_COMPARED
    (the 8,000-row comparison is in benchmarks/ray_synthetic_scaling.py)."""
    rng = np.random.default_rng(4)
    train, holdout = _population(1200, rng), _population(1200, rng)
    syn = pd.concat([train.iloc[:60], _population(1140, rng)], ignore_index=True)
    data = SyntheticRelease(train, syn, holdout=holdout)
    common = {"secrets": ["income"], "n_attacks": 80, "n_bootstrap": 50, "random_state": 1}
    local = audit_synthetic(data, AuditSyntheticConfig(**common)).to_dict()
    on_ray = audit_synthetic(data, AuditSyntheticConfig(**common, backend="ray", block_rows=150))
    remote = on_ray.to_dict()
    assert ray.is_initialized()  # the module's instance: joined, left running

    def compared(d):
        return json.dumps({k: v for k, v in d.items() if k not in NOT_COMPARED}, sort_keys=True)

    assert compared(remote) == compared(local)
    backend = remote["backend"]
    assert backend["name"] == "ray" and backend["block_rows"] == 150 and not backend["cluster"]
    assert backend["blocks"] > 100 and backend["peak_task_bytes"] > 0
    assert local["backend"]["name"] == "local" and local["backend"]["blocks"] is None
    assert "ran on Ray in" in on_ray.summary() and f"{backend['blocks']} blocks" in on_ray.summary()
