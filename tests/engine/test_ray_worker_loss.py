"""A Ray worker process SIGKILLed in the middle of an audit (``audit``, ``audit_fitted``, ``audit_synthetic``)
does not change its result, nor does a lost worker node: the engine's fits and the neighbour-search blocks
are retried by Ray (their ``max_retries``), each fit committed once.

Every test runs on one real cluster started with ``ray start`` (the module's ``ray_cluster`` fixture: a
head node and two worker nodes of one CPU each). The driver runs with ``RAY_TASK_MAX_RETRIES=0`` - Ray's
default retries turned off in its environment - so that only the engine's own ``max_retries`` can save a
killed fit. Each fit sleeps (``SlowTrainer``) so that a fit is still running when the first result has
arrived; the killer waits for that result, kills a worker process whose title says it runs the task, and
records it: a test whose kill did not happen fails, it cannot pass vacuously.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_problem import open_ledger, problem
from ray_cluster import Cluster, command_line
from sklearn.datasets import make_classification

from mipkit._validation import MipkitValueError
from mipkit.data.io import Dataset
from mipkit.engine import ray_backend, run_fits
from mipkit.engine.ray_blocks import RayBlockMapper
from mipkit.game.testing import SlowTrainer, SlowWork
from mipkit.workflows.audit import AuditConfig, audit
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
from mipkit.workflows.audit_synthetic.scale import NOT_COMPARED

pytestmark = [pytest.mark.ray, pytest.mark.timeout(900)]

DELAY = 0.5  # seconds per fit
FIT_TASK = "fit_one"  # the engine's Ray task (mipkit.engine.workers.fit_one)
BLOCK_TASK = "_run_block"  # a neighbour-search block (mipkit.engine.ray_blocks)
# where a result says how and when it ran rather than what it found
HOW_AND_WHEN = {"backend", "address", "n_jobs", "date", "created"}


@pytest.fixture(autouse=True)
def no_default_retries(monkeypatch):
    """Ray's default ``max_retries`` off in the driver: a surviving fit is retried by the engine's own."""
    monkeypatch.setenv("RAY_TASK_MAX_RETRIES", "0")


class Killer:
    """Once the first fit has arrived (``progress`` reports ``done >= 1``), SIGKILL one worker process of the
    cluster that runs a task named ``task`` (from a thread); ``killed`` holds ``(pid, title)``."""

    def __init__(self, cluster: Cluster, task: str = FIT_TASK, patience: float = 60.0) -> None:
        self.cluster, self.task, self.patience = cluster, task, patience
        self.first = threading.Event()
        self.killed: list[tuple[int, str]] = []
        self.thread = threading.Thread(target=self._kill, name="ray-worker-killer", daemon=True)

    def progress(self, stage: str, done: int, total: int) -> None:
        if done >= 1:
            self.first.set()

    def __enter__(self) -> Killer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.first.set()
        self.thread.join()

    def _kill(self) -> None:
        if not self.first.wait(self.patience):
            return
        deadline = time.monotonic() + self.patience
        while time.monotonic() < deadline:
            for node in [*self.cluster.workers, self.cluster.head]:
                for pid in node.workers_running(self.task):
                    title = command_line(pid)  # read again just before the kill: still running the task?
                    if not title.startswith(f"ray::{self.task}"):
                        continue
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:  # it finished and exited meanwhile: find another
                        continue
                    self.killed.append((pid, title))
                    return
            time.sleep(0.01)


def _ledger_pids(run_dir: Path) -> dict[int, int]:
    """Task index -> pid of the process that fitted it, for every fit committed to the run's ledger."""
    uri = f"file:{run_dir / 'ledger.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=5.0)) as conn:
        rows = conn.execute("SELECT idx, meta FROM fits").fetchall()
    return {int(idx): int(json.loads(meta)["pid"]) for idx, meta in rows}


def _what(view):
    """A result's ``to_dict`` without the fields that say how and when it ran (backend, address, date...)."""
    if isinstance(view, dict):
        return {k: _what(v) for k, v in view.items() if k not in HOW_AND_WHEN}
    if isinstance(view, list):
        return [_what(v) for v in view]
    return view


def _assert_killed_mid_run(killer: Killer, run_dir: Path, n_fits: int) -> None:
    """A worker was killed while running a fit, and every fit is in the ledger once, none by that worker."""
    assert killer.killed, "no Ray worker was running a fit after the first result: nothing was killed"
    (pid, title), *_ = killer.killed
    assert title.startswith(f"ray::{killer.task}")
    fitted_by = _ledger_pids(run_dir)
    assert sorted(fitted_by) == list(range(n_fits))  # each fit committed, and once (idx is the key)
    assert pid not in fitted_by.values()  # the killed worker's fit was run again elsewhere


# -- the model audit ------------------------------------------------------------------------------------


def _records() -> Dataset:
    X, y = make_classification(96, 5, n_informative=3, n_redundant=0, random_state=3)
    return Dataset(X=X, y=y, feature_names=[f"x{i}" for i in range(5)], classes=np.array([0, 1]))


def _audit_config(**engine) -> AuditConfig:
    return AuditConfig(
        model="mipkit.game.testing.SlowTrainer",
        params={"delay": DELAY, "C": 10.0},
        attacks=("loss", "lira"),
        n_models=8,
        n_targets=2,
        seed=5,
        n_boot=100,
        **engine,
    )


def test_a_worker_killed_mid_audit_leaves_the_audit_unchanged(ray_cluster, tmp_path):
    config = _audit_config(backend="ray", address=ray_cluster.address, n_jobs=1)
    with Killer(ray_cluster) as killer:
        killed = audit(_records(), config, run_dir=tmp_path / "ray", progress=killer.progress, report=False)
    _assert_killed_mid_run(killer, tmp_path / "ray", 8)

    local = audit(_records(), _audit_config(n_jobs=2), report=False)
    assert _what(killed.to_dict()) == _what(local.to_dict())
    pd.testing.assert_frame_equal(killed.to_frame(), local.to_frame(), check_exact=True)


# -- the audit of a fitted model: its reference models ---------------------------------------------------


def _release() -> FittedRelease:
    X, y = make_classification(120, 5, n_informative=3, n_redundant=0, random_state=4)
    table = pd.DataFrame(X, columns=list("abcde")).assign(target=y)
    members, non_members = table.iloc[:60], table.iloc[60:]
    model = SlowTrainer(delay=DELAY, C=10.0).fit(members[list("abcde")].to_numpy(), members["target"])
    return FittedRelease(model, members, non_members)


def _fitted_config(**engine) -> AuditFittedConfig:
    return AuditFittedConfig(target="target", n_reference=8, attacks=("loss", "lira"), n_boot=100, **engine)


def test_a_worker_killed_mid_audit_fitted_leaves_the_audit_unchanged(ray_cluster, tmp_path):
    config = _fitted_config(backend="ray", address=ray_cluster.address, n_jobs=1)
    with Killer(ray_cluster) as killer:
        killed = audit_fitted(_release(), config, run_dir=tmp_path / "ray", progress=killer.progress)
    _assert_killed_mid_run(killer, tmp_path / "ray", 8)

    local = audit_fitted(_release(), _fitted_config(n_jobs=2))
    assert _what(killed.to_dict()) == _what(local.to_dict())
    pd.testing.assert_frame_equal(killed.to_frame(), local.to_frame(), check_exact=True)


# -- the audit of a synthetic table: its neighbour-search blocks -----------------------------------------

BLOCK_DELAY = 0.02  # seconds per block task, so that a block is still running when its worker is killed
SYN_ROWS = 600  # 600 training records, block_rows 40: about 1,100 block tasks over the audit's searches


def _synthetic_release() -> SyntheticRelease:
    rng = np.random.default_rng(6)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 80, n).astype(float),
                "income": rng.normal(40, 10, n).round(1),
                "sex": rng.choice(["F", "M"], n),
                "city": rng.choice(["a", "b", "c", "d"], n),
            }
        )

    original = table(SYN_ROWS)
    synthetic = pd.concat([original.sample(SYN_ROWS // 4, random_state=1), table(SYN_ROWS // 2)])
    return SyntheticRelease(original, synthetic.reset_index(drop=True), control=table(SYN_ROWS // 2))


def _synthetic_config(**engine) -> AuditSyntheticConfig:
    return AuditSyntheticConfig(checks=("nnaa", "dcr"), n_bootstrap=50, random_state=2, n_jobs=1, **engine)


def test_a_worker_killed_mid_audit_synthetic_leaves_the_audit_unchanged(ray_cluster, monkeypatch):
    """The neighbour searches' block tasks (``ray::_run_block``): one worker killed after the first
    search's blocks have arrived (signalled from the driver's block mapper). Each block sleeps
    ``BLOCK_DELAY`` first (``SlowWork``), so a worker found running a block is still running it when the
    SIGKILL lands, not back to idle."""
    killer = Killer(ray_cluster, task=BLOCK_TASK)
    search = RayBlockMapper.__call__

    def search_then_signal(self, work, tables, specs):
        out = search(self, SlowWork(work, BLOCK_DELAY), tables, specs)
        killer.first.set()
        return out

    monkeypatch.setattr(RayBlockMapper, "__call__", search_then_signal)
    config = _synthetic_config(backend="ray", address=ray_cluster.address, block_rows=40)
    with killer:
        killed = audit_synthetic(_synthetic_release(), config)
    assert killer.killed, "no Ray worker was running a block after the first blocks arrived"
    assert killer.killed[0][1].startswith(f"ray::{BLOCK_TASK}")
    assert killed.backend["name"] == "ray" and killed.backend["blocks"] > 100

    local = audit_synthetic(_synthetic_release(), _synthetic_config())
    on_ray, here = killed.to_dict(), local.to_dict()
    for name in NOT_COMPARED:  # where and how long, not what was measured
        on_ray.pop(name), here.pop(name)
    assert on_ray == here
    pd.testing.assert_frame_equal(killed.to_frame(), local.to_frame(), check_exact=True)


# -- the engine: retries used up; a lost worker node -----------------------------------------------------


def test_a_fit_lost_beyond_its_retries_is_a_clear_error_and_the_ledger_keeps_the_rest(ray_cluster, tmp_path):
    trainer, X, y, tasks = problem(delay=DELAY)
    session = ray_backend.ray_session(n_cpus=1, address=ray_cluster.address)
    with session, open_ledger(tmp_path, trainer, X, y, tasks) as ledger:
        with pytest.MonkeyPatch.context() as patch, Killer(ray_cluster) as killer:
            patch.setattr(ray_backend, "MAX_RETRIES", 0)
            with pytest.raises(MipkitValueError, match="its 0 retries were lost"):
                run_fits(trainer, X, y, tasks, ledger=ledger, backend="ray", progress=killer.progress)
        assert killer.killed
        kept = {r["idx"]: r["meta"]["pid"] for r in ledger.records()}
        assert 1 <= len(kept) < len(tasks)  # the fits that arrived before the loss are committed
        assert killer.killed[0][0] not in kept.values()

        resumed = run_fits(trainer, X, y, tasks, ledger=ledger, backend="ray")
        again = {r["idx"]: r["meta"]["pid"] for r in ledger.records()}
    assert sorted(again) == list(range(len(tasks)))
    assert {i: again[i] for i in kept} == kept  # the kept fits were read back, not fitted again
    np.testing.assert_array_equal(resumed, run_fits(trainer, X, y, tasks, n_jobs=2))


# -- a lost worker node (last: it leaves the cluster a node short) ----------------------------------------


def test_a_lost_worker_node_leaves_the_fits_unchanged(ray_cluster):
    """The worker node the driver is not attached to is killed whole (raylet, workers, object store) after
    the first fit: its running fits are retried on the other nodes once the cluster marks it dead."""
    trainer, X, y, tasks = problem(delay=DELAY)
    expected = run_fits(trainer, X, y, tasks, n_jobs=2)
    lost: list[int] = []
    first = threading.Event()

    with ray_backend.ray_session(n_cpus=1, address=ray_cluster.address) as ray:
        ports = {n["NodeID"]: n["NodeManagerPort"] for n in ray.nodes()}
        here = ports[ray.get_runtime_context().get_node_id()]
        victim = next(
            node
            for node in ray_cluster.workers
            if f"--node_manager_port={here} " not in command_line(node.raylet or 0) + " "
        )

        def kill_node() -> None:
            first.wait(60)
            deadline = time.monotonic() + 60
            while out is None and time.monotonic() < deadline:
                if victim.workers_running(FIT_TASK):
                    lost.append(victim.pgid)
                    victim.kill()
                    return
                time.sleep(0.01)

        out = None
        thread = threading.Thread(target=kill_node, daemon=True)
        thread.start()
        try:
            out = run_fits(
                trainer, X, y, tasks, backend="ray", progress=lambda s, done, t: done and first.set()
            )
        finally:
            first.set()
            thread.join()
    assert lost, "the worker node ran no fit after the first result: it was not killed mid-run"
    np.testing.assert_array_equal(out, expected)
