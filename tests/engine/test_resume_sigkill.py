"""Kill a run with SIGKILL in the middle, re-run it: finished fits are not refitted, results are exact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from engine_problem import N_MODELS, open_ledger, problem

from mipkit.engine import run_fits

HELPER = Path(__file__).with_name("engine_problem.py")
DELAY = 0.5


def _log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.timeout(1800)  # a busy machine makes the runs slow, not wrong
def test_sigkill_mid_run_then_resume(tmp_path):
    log = tmp_path / "fits.log"
    run_dir = tmp_path / "run"
    trainer, X, y, tasks = problem(str(log), DELAY)
    ledger_probe = open_ledger(run_dir, trainer, X, y, tasks)

    proc = subprocess.Popen(
        [sys.executable, str(HELPER), str(run_dir), str(log), str(DELAY)],
        start_new_session=True,  # its own process group: the kill takes its worker processes too
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while len(ledger_probe.done()) < 2:  # however long the machine takes; a run that ends fails here
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    time.sleep(0.5)
    assert proc.returncode == -signal.SIGKILL

    done_before = ledger_probe.done()
    records_before = {r["idx"]: r for r in ledger_probe.records()}
    assert 2 <= len(done_before) < N_MODELS, "the run was not interrupted mid-way"
    assert all(r["meta"]["pid"] != os.getpid() for r in records_before.values())
    n_log = len(_log_lines(log))

    # re-run the same configuration (in this process) on the same run folder
    resumed = run_fits(trainer, X, y, tasks, ledger=ledger_probe, n_jobs=2)
    assert len(_log_lines(log)) - n_log == N_MODELS - len(done_before)  # no finished fit refitted
    records_after = {r["idx"]: r for r in ledger_probe.records()}
    assert set(records_after) == set(range(N_MODELS))
    for i in done_before:
        assert records_after[i]["created"] == records_before[i]["created"]
        assert records_after[i]["meta"]["pid"] == records_before[i]["meta"]["pid"]
    ledger_probe.close()

    uninterrupted_trainer, *_ = problem(None, 0.0)
    uninterrupted = run_fits(uninterrupted_trainer, X, y, tasks, n_jobs=2)
    np.testing.assert_array_equal(resumed, uninterrupted)
