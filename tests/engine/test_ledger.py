"""The SQLite ledger: round trips, namespacing by run key, and resuming run_fits without refitting."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from engine_problem import open_ledger, problem

from mipkit._validation import MipkitValueError
from mipkit.engine import FitTask, Ledger, make_run_key, run_fits
from mipkit.game import resolve_trainer


def _count_lines(path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_put_get_round_trip_and_persistence(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.random((5, 3))
    b = rng.integers(0, 9, size=(2, 4), dtype=np.int32)
    with Ledger(tmp_path, "key-1", info={"what": "test"}) as ledger:
        assert ledger.path == tmp_path / "ledger.sqlite"
        assert ledger.done() == set()
        ledger.put(3, a, {"seed": 7, "seconds": 0.25})
        ledger.put(1, b, {})
        assert ledger.done() == {1, 3}
    # a new connection (a new process, after a crash) sees the committed rows bit for bit
    with Ledger(tmp_path / "ledger.sqlite", "key-1") as again:
        got = again.get(3)
        assert got.dtype == a.dtype and np.array_equal(got, a)
        assert np.array_equal(again.get(1), b) and again.get(1).dtype == np.int32
        assert again.meta(3) == {"seed": 7, "seconds": 0.25}
        rec = {r["idx"]: r for r in again.records()}
        assert rec[3]["seconds"] == 0.25 and rec[3]["shape"] == (5, 3)
        np.testing.assert_array_equal(again.get_all([3, 3]), np.stack([a, a]))
        with pytest.raises(KeyError):
            again.get(0)
        again.put(3, a + 1, {"seed": 8})  # replaces
        assert np.array_equal(again.get(3), a + 1) and again.done() == {1, 3}
    # journal mode is WAL
    con = sqlite3.connect(tmp_path / "ledger.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_other_run_keys_are_separate_namespaces(tmp_path):
    with Ledger(tmp_path, "config-A") as a:
        a.put(0, np.zeros(2), {})
    with Ledger(tmp_path, "config-B") as b:
        assert b.done() == set()  # never reads config A's fits
        with pytest.raises(KeyError):
            b.get(0)
        b.put(0, np.ones(2), {})
        assert b.other_run_keys() == ["config-A"]
        assert b.purge_other_runs() == 1
        assert b.other_run_keys() == []
    with Ledger(tmp_path, "config-A") as a:
        assert a.done() == set()


def test_bad_ledger_inputs(tmp_path):
    with pytest.raises(MipkitValueError, match="run_key"):
        Ledger(tmp_path, "")
    not_sqlite = tmp_path / "junk.sqlite"
    not_sqlite.write_text("this is not a database" * 100)
    with pytest.raises(MipkitValueError, match="not a usable mipkit ledger"):
        Ledger(not_sqlite, "k")
    with Ledger(tmp_path, "k") as ledger, pytest.raises(MipkitValueError, match="numeric"):
        ledger.put(0, np.array([object()]), {})


def test_run_key_changes_with_every_input():
    trainer, X, y, tasks = problem()
    base = make_run_key(trainer, X, y, tasks)
    assert base == make_run_key(trainer, X.copy(), y.copy(), list(tasks))
    other_trainer = resolve_trainer("mipkit.game.testing.SlowTrainer", {"C": 0.5})
    X2 = X.copy()
    X2[0, 0] += 1e-9
    swapped = [FitTask(t.index, t.train_idx[::-1], t.seed) for t in tasks]
    reseeded = [FitTask(t.index, t.train_idx, (t.seed or 0) + 1) for t in tasks]
    variants = [
        make_run_key(other_trainer, X, y, tasks),
        make_run_key(trainer, X2, y, tasks),
        make_run_key(trainer, X, (y + 1) % 3, tasks),
        make_run_key(trainer, X, y, tasks[:-1]),
        make_run_key(trainer, X, y, swapped),
        make_run_key(trainer, X, y, reseeded),
        make_run_key(trainer, X, y, tasks, query_X=X[:5]),
        make_run_key(trainer, X, y, tasks, extra={"attack": "lira"}),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_resume_reuses_committed_fits_and_equals_an_uninterrupted_run(tmp_path):
    log = tmp_path / "fits.log"
    trainer, X, y, tasks = problem(str(log))
    uninterrupted = run_fits(trainer, X, y, tasks, n_jobs=1)
    assert _count_lines(log) == len(tasks)

    with open_ledger(tmp_path / "run", trainer, X, y, tasks) as ledger:
        # a first, partial run: only the first 5 tasks
        run_fits(trainer, X, y, tasks[:5], ledger=ledger, n_jobs=1)
        assert ledger.done() == {0, 1, 2, 3, 4}
        before = {r["idx"]: r for r in ledger.records()}
        n_log = _count_lines(log)
        resumed = run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=2)
        assert _count_lines(log) - n_log == len(tasks) - 5  # only the missing fits ran
        after = {r["idx"]: r for r in ledger.records()}
        for i in range(5):
            assert after[i]["created"] == before[i]["created"]
        assert set(after) == set(range(len(tasks)))
        np.testing.assert_array_equal(resumed, uninterrupted)
        # a third run fits nothing
        n_log = _count_lines(log)
        again = run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=2)
        assert _count_lines(log) == n_log
        np.testing.assert_array_equal(again, uninterrupted)


def test_stale_rows_under_the_same_run_key_are_refitted(tmp_path):
    """A row whose per-task key does not match (e.g. a caller's coarse run key) is not trusted."""
    trainer, X, y, tasks = problem()
    tasks = tasks[:3]
    expected = run_fits(trainer, X, y, tasks, n_jobs=1)
    with Ledger(tmp_path, "coarse-key") as ledger:
        ledger.put(1, np.full((len(y), 3), 0.5), {"task_key": "something else"})
        ledger.put(2, np.full((4, 3), 0.5), {})  # no key, wrong shape
        out = run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=1)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(ledger.get(1), expected[1])
        assert ledger.meta(2)["backend"] == "local"
