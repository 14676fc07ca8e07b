"""Audit-level resume and Ray checks (issue #4): ``mipkit audit`` run as a separate process.

1. SIGKILL an audit mid-run, re-run the same command: the fits committed before the kill are not refitted,
   and results.json / scores.parquet equal those of an uninterrupted run of the same command.
2. The same small audit with ``--backend ray`` (a local 2-CPU Ray instance) and ``--backend local`` gives
   the same results.json and scores.parquet.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

N_RECORDS = 120
N_MODELS = 8
DELAY = 0.4  # seconds per fit: with 2 workers the fits last ~2 s, long enough to kill the run in between

# the console script may not be on PATH in every environment; the CLI's own entry point always is
CLI = "import sys; from mipkit.cli import main; sys.exit(main(sys.argv[1:]))"
# fields of results.json that record when the run happened rather than what it found
TIME_FIELDS = {"created"}


def _write_csv(path: Path) -> Path:
    X, y = make_classification(N_RECORDS, 5, n_informative=3, n_redundant=0, random_state=7)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    df["label"] = y
    df.to_csv(path, index=False)
    return path


def _audit_argv(data: Path, out: Path, log: Path | None, *, backend: str = "local", delay: float = 0.0):
    params = {"delay": delay, "C": 10.0, **({"log_path": str(log)} if log is not None else {})}
    return [
        sys.executable,
        "-c",
        CLI,
        "audit",
        "--data",
        str(data),
        "--target",
        "label",
        "--model",
        "mipkit.game.testing.SlowTrainer",
        "--params",
        json.dumps(params),
        "--attacks",
        "loss,lira,rmia,ltu",
        "--models",
        str(N_MODELS),
        "--targets",
        "4",
        "--seed",
        "11",
        "--backend",
        backend,
        "--n-jobs",
        "2",
        "--out",
        str(out),
        "--no-report",
        "--json",
    ]


def _run(argv: list[str]) -> dict:
    # no wall-clock limit of its own: a busy machine makes a run slow, not wrong (pytest-timeout still
    # ends a hang)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode == 2 and "Could not start a local Ray instance" in proc.stderr:
        pytest.skip(f"Ray could not start here (a busy machine): {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _ledger_rows(run_dir: Path) -> dict[int, tuple[float, int]]:
    """idx -> (created, pid of the fitting process) of every committed fit, read-only; {} if none yet."""
    path = run_dir / "ledger.sqlite"
    if not path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = conn.execute("SELECT idx, created, meta FROM fits").fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError:  # the file or the table is still being created
        return {}
    return {int(i): (float(created), int(json.loads(meta)["pid"])) for i, created, meta in rows}


def _log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _results(run_dir: Path) -> dict:
    data = json.loads((run_dir / "results.json").read_text())
    return _without_dates({k: v for k, v in data.items() if k not in TIME_FIELDS})


def _without_dates(view: dict) -> dict:
    """The view without the wall-clock date of the run (the one field two equal runs may differ in)."""
    (view.get("provenance") or {}).pop("date", None)
    return view


def _assert_same_scores(a: Path, b: Path) -> None:
    name = "scores.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(a / name), pd.read_parquet(b / name), check_exact=True)


@pytest.mark.timeout(1800)
def test_sigkill_audit_mid_run_then_resume(tmp_path):
    data = _write_csv(tmp_path / "table.csv")
    log = tmp_path / "fits.log"
    run_dir = tmp_path / "run"
    argv = _audit_argv(data, run_dir, log, delay=DELAY)

    proc = subprocess.Popen(
        argv,
        start_new_session=True,  # its own process group: the kill takes the joblib workers too
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while len(_ledger_rows(run_dir)) < 2:  # however long the machine takes; an audit that ends fails here
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    time.sleep(0.5)  # let the killed workers' last log writes (if any) land

    before = _ledger_rows(run_dir)
    assert 2 <= len(before) < N_MODELS, "the audit was not interrupted mid-way"
    assert not (run_dir / "results.json").exists(), "the audit finished before the kill"
    n_log = len(_log_lines(log))
    assert n_log >= len(before)  # every committed fit was logged by its worker

    _run(argv)  # the same command on the same run folder, to the end
    after = _ledger_rows(run_dir)
    assert set(after) == set(range(N_MODELS))
    assert len(_log_lines(log)) - n_log == N_MODELS - len(before)  # no finished fit refitted
    for idx, row in before.items():
        assert after[idx] == row  # the very same ledger row: same commit time, same fitting process
    killed_pids = {pid for _, pid in before.values()}
    assert killed_pids.isdisjoint(pid for i, (_, pid) in after.items() if i not in before)

    # an uninterrupted run of the same command (same trainer parameters, same log file) in another folder
    fresh_dir = tmp_path / "fresh"
    _run(_audit_argv(data, fresh_dir, log, delay=DELAY))
    assert len(_ledger_rows(fresh_dir)) == N_MODELS
    resumed, fresh = _results(run_dir), _results(fresh_dir)
    assert resumed == fresh
    assert resumed["game"]["n_models"] == N_MODELS and resumed["eta"] is not None
    _assert_same_scores(run_dir, fresh_dir)


@pytest.mark.ray
@pytest.mark.timeout(1800)
def test_ray_audit_equals_local_audit(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")
    data = _write_csv(tmp_path / "table.csv")
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    local_json = _run(_audit_argv(data, local_dir, None, backend="local"))
    ray_json = _run(_audit_argv(data, ray_dir, None, backend="ray"))  # --n-jobs 2: a 2-CPU local Ray

    ledger = f"file:{ray_dir / 'ledger.sqlite'}?mode=ro"
    with closing(sqlite3.connect(ledger, uri=True, timeout=5.0)) as conn:
        backends = {json.loads(m)["backend"] for (m,) in conn.execute("SELECT meta FROM fits")}
    assert backends == {"ray"}  # every fit really ran on Ray

    local, on_ray = _results(local_dir), _results(ray_dir)
    assert local["config"].pop("backend") == "local" and on_ray["config"].pop("backend") == "ray"
    assert on_ray == local
    assert np.isfinite(local["auc"]) and local["game"]["n_models"] == N_MODELS
    for view in (local_json, ray_json):
        view.pop("run_dir")
        view.pop("report")
        _without_dates(view)
    assert ray_json == local_json
    _assert_same_scores(local_dir, ray_dir)
