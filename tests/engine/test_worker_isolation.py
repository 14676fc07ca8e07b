"""Processes of a run neither outlive it nor talk on its stdout or the network (issue 10, item 8).

* After a SIGKILL of the parent, joblib's workers (and the resource trackers waiting on them) end with it,
  not when their fits would, so a ``mipkit audit ... | tee log`` pipeline reaches EOF instead of hanging.
* What a trainer prints in a worker goes to stderr, never into ``--json`` output on stdout.
* A local Ray instance listens on loopback only, and its notices stay off the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PYTHON = sys.executable
FIT_SECONDS = 600  # each fit of the killed run: far longer than killing it takes on a busy machine


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "table.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(path, index=False)
    return path


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.timeout(1800)  # a busy machine makes the run slow to start, not wrong
def test_killing_the_parent_ends_its_workers_and_releases_the_pipe(table, tmp_path):
    args = [
        PYTHON,
        "-m",
        "mipkit",
        "audit",
        "--data",
        str(table),
        "--target",
        "label",
        "--model",
        "mipkit.game.testing.SlowTrainer",
        "--params",
        json.dumps({"delay": FIT_SECONDS}),
        "--models",
        "4",
        "--attacks",
        "loss",
        "--n-jobs",
        "2",
        "--json",
        "--out",
        str(tmp_path / "run"),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    workers: set[int] = set()
    while len(workers) < 2:  # two loky workers busy in their fits, however long the start takes
        assert proc.poll() is None, proc.stderr.read().decode()
        workers = {
            p for p in _children(proc.pid) if "loky" in Path(f"/proc/{p}/cmdline").read_bytes().decode()
        }
        time.sleep(0.2)
    time.sleep(3)  # inside the fits
    everything = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    eof: list[bool] = []
    reader = threading.Thread(target=lambda: (proc.stdout.read(), eof.append(True)), daemon=True)
    reader.start()
    # a worker that outlived the parent would hold stdout until its fit ends, FIT_SECONDS after it began:
    # waiting half of that tells the two apart on any machine
    reader.join(FIT_SECONDS / 2)
    assert eof, "stdout never reached EOF: a process of the run still holds it"
    proc.wait()
    proc.stderr.close()
    deadline = time.monotonic() + FIT_SECONDS / 2
    while [p for p in everything if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in everything if _alive(p)], "processes of the run outlived it"


PRINTER = textwrap.dedent(
    """
    from sklearn.linear_model import LogisticRegression

    class Printer(LogisticRegression):
        def fit(self, X, y):
            print("PRINTED BY THE TRAINER", flush=True)
            return super().fit(X, y)
    """
)

RUN = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from mipkit.engine import run_fits, tasks_from_membership
    from mipkit.game import independent_halves, resolve_trainer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    tasks = tasks_from_membership(independent_halves(40, 4, random_state=0), random_state=0)
    proba = run_fits(resolve_trainer("printer_module_xyz.Printer"), X, y, tasks, n_jobs=2)
    print(json.dumps({"shape": list(proba.shape)}))
    """
)


@pytest.mark.timeout(1800)
def test_what_a_trainer_prints_in_a_worker_stays_off_stdout(tmp_path):
    (tmp_path / "printer_module_xyz.py").write_text(PRINTER)
    env = {**os.environ, "MIPKIT_ALLOWED_MODELS": "printer_module_xyz.Printer"}
    proc = subprocess.run(
        [PYTHON, "-c", RUN], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"shape": [4, 40, 2]}  # stdout holds the one JSON object
    assert proc.stderr.count("PRINTED BY THE TRAINER") == 4


RAY_RUN = textwrap.dedent(
    """
    import json, os, re, subprocess
    from pathlib import Path
    from mipkit.engine.ray_backend import ray_session

    def children(pid):
        parents = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except OSError:
                    pass
        found, frontier = {pid}, {pid}
        while frontier:
            frontier = {c for c, p in parents.items() if p in frontier} - found
            found |= frontier
        return found

    with ray_session(n_cpus=1, address=None) as ray:
        assert ray.get(ray.remote(lambda: 41 + 1).remote()) == 42
        ours = children(os.getpid())
        listening = []
        for line in subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout.splitlines():
            pids = {int(p) for p in re.findall(r"pid=(\\d+)", line)}
            if pids & ours:
                listening.append(line.split()[3])
    print(json.dumps(listening))
    """
)


@pytest.mark.ray
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
@pytest.mark.timeout(1800)
def test_a_local_ray_instance_listens_on_loopback_only_and_quietly(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")
    proc = subprocess.run([PYTHON, "-c", RAY_RUN], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    listening = json.loads(proc.stdout.strip().splitlines()[-1])
    assert listening, "no listening socket of the Ray processes was found"
    loopback = re.compile(r"^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]|\[::1\]):\d+$")
    assert all(loopback.match(addr) for addr in listening), listening
    assert proc.stdout.strip().count("\n") == 0  # nothing but our line on stdout
    assert "WARNING" not in proc.stderr and "Token authentication" not in proc.stderr, proc.stderr[-2000:]


def test_a_ray_start_failure_is_one_clear_error(monkeypatch):
    """Ray's start-up failures (a node timing out on a busy machine raises a bare ``Exception``) reach the
    user as one line that points to the local backend, not as an internal error."""
    import types

    from mipkit._validation import MipkitValueError
    from mipkit.engine import ray_backend

    def fail(**kwargs):
        raise Exception("The current node timed out during startup.")

    fake = types.SimpleNamespace(is_initialized=lambda: False, init=fail, shutdown=lambda: None)
    monkeypatch.setattr(ray_backend, "import_ray", lambda: fake)
    monkeypatch.setattr(ray_backend, "_node_address_mode", lambda ray, loopback: contextlib.nullcontext())
    local = r"Could not start a local Ray instance \(Exception: The current node"
    with pytest.raises(MipkitValueError, match=local), ray_backend.ray_session(n_cpus=1, address=None):
        pass
    remote = ray_backend.ray_session(n_cpus=1, address="10.0.0.1:6379")
    with pytest.raises(MipkitValueError, match="The local backend runs the same fits"), remote:
        pass
