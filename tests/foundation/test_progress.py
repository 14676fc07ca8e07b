"""The helpers of the one progress protocol: a Tally never runs past its total, and Pooled adds the runs of
an inner function into one stage that ends at its total (what the neighbour searches of NNAA and DCR use)."""

from __future__ import annotations

import numpy as np

from mipkit._progress import Pooled, Tally, announce
from mipkit.data.neighbors import kneighbors


def test_a_tally_counts_to_its_total_and_no_further():
    calls: list = []
    tally = Tally(lambda *c: calls.append(c), "steps", 3)
    tally.add(2)
    tally.add(5)
    tally.finish()  # already at the total: nothing more
    assert calls == [("steps", 0, 3), ("steps", 2, 3), ("steps", 3, 3)]
    Tally(None, "steps", 3).add()  # no progress: nothing to call
    empty: list = []
    Tally(lambda *c: empty.append(c), "steps", 0).add()  # nothing to count: nothing reported
    announce(lambda *c: empty.append(c), "a step")
    assert empty == [("a step", 0, 0)]


def test_pooled_runs_of_a_search_make_one_rising_stage():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    calls: list = []
    pooled = Pooled(lambda *c: calls.append(c), "DCR", 50)
    kneighbors(a, b, k=1, metric="euclidean", progress=pooled)
    kneighbors(b, a, k=1, metric="euclidean", progress=pooled)
    done = [d for _, d, _ in calls]
    assert {(s, t) for s, _, t in calls} == {("DCR", 50)}
    assert done[0] == 0 and done[-1] == 50 and done == sorted(done)
