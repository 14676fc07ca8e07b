"""Run folders through the commands: nothing lost by a failed, killed or concurrent rerun (issue 10).

The previous run's files must survive any failed or killed rerun; a second run into a busy folder is refused
naming the first; leftovers of a killed run are removed by the next one; a full disk ends in one line, exit 2,
with the old files in place and no empty ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mipkit._runfolder as rf
import mipkit.cli as cli
from mipkit._runfolder import LOCK_FILE, TEMP_SUFFIX

PYTHON = sys.executable
RUN_FILES = ("config.json", "results.json", "scores.parquet", "report.html")


def _audit_args(data: Path, out: Path, *extra: str, seed: int = 0) -> list[str]:
    return [
        "audit",
        "--data",
        str(data),
        "--target",
        "label",
        "--model",
        "sklearn.linear_model.LogisticRegression",
        "--models",
        "4",
        "--attacks",
        "loss",
        "--n-jobs",
        "1",
        "--seed",
        str(seed),
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and not p.name.startswith("ledger.sqlite")
    }


def _assert_whole(folder: Path, *, temporaries_allowed: bool = False) -> int:
    """Every run file is complete and the three data files belong to one run; returns that run's seed.

    ``temporaries_allowed``: a run killed while writing leaves its temporary file behind (the next run
    removes it); the run files themselves must still be whole."""
    temps = [p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    assert temporaries_allowed or not temps
    assert not [p.name for p in folder.iterdir() if p.name not in temps and p.stat().st_size == 0]
    config = json.loads((folder / "config.json").read_text())
    results = json.loads((folder / "results.json").read_text())
    scores = pd.read_parquet(folder / "scores.parquet")
    assert (folder / "report.html").read_text().rstrip().endswith("</html>")
    assert config["seed"] == results["config"]["seed"], "config.json and results.json of different runs"
    assert config["run_key"] == json.loads((folder / "config.json").read_text())["run_key"]
    assert len(scores) == results["game"]["n_records"]
    return int(config["seed"])


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    rng = np.random.default_rng(1)
    n = 60
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    path = tmp_path_factory.mktemp("data") / "table.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def previous(table, tmp_path_factory) -> Path:
    """A finished audit run (seed 0); tests copy it."""
    out = tmp_path_factory.mktemp("prev") / "run"
    assert cli.main(_audit_args(table, out)) == 0
    return out


@pytest.fixture
def run(previous, tmp_path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(previous, dst)
    return dst


def test_a_failed_rerun_keeps_config_results_and_scores(table, run, capsys):
    before = _digest(run)
    code = cli.main(_audit_args(table, run, "--params", '{"C": -1}', seed=1))  # fails in the fits
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Fitting trainer" in err
    assert _digest(run) == before
    assert _assert_whole(run) == 0


def test_config_json_is_written_with_the_results_only(table, run, monkeypatch, capsys):
    """A rerun that fails after its fits (while writing) leaves config.json of the previous run."""
    import mipkit.workflows.audit.result as audit_result

    before = _digest(run)

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device", str(run / "scores.parquet"))

    monkeypatch.setattr(audit_result, "atomic_write", fail)
    assert cli.main(_audit_args(table, run, seed=2)) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert _digest(run) == before and _assert_whole(run) == 0


def test_a_simulated_full_disk_in_every_writer(table, run, tmp_path, monkeypatch, capsys):
    """ENOSPC at the sync of every file a command writes: one line, exit 2, old files, no temporaries."""

    def no_space(fd):
        raise OSError(28, "No space left on device")

    model = tmp_path / "model.joblib"
    model.write_bytes(b"the previous model")
    plot = tmp_path / "figure.png"
    plot.write_bytes(b"the previous figure")
    monkeypatch.setattr(rf.os, "fsync", no_space)
    commands = [
        _audit_args(table, run),  # the same run again: resumed from its ledger, then the writes fail
        ["report", str(run)],
        [
            "protect",
            "--data",
            str(table),
            "--target",
            "label",
            "--model",
            "sklearn.linear_model.LogisticRegression",
            "--eta",
            "0.1",
            "--sigma",
            "0.5",
            "--out",
            str(model),
        ],
        ["risk", "--epsilon", "1", "--plot", str(plot)],
    ]
    before = _digest(run)
    for args in commands:
        capsys.readouterr()
        assert cli.main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err
    assert _digest(run) == before and _assert_whole(run) == 0
    assert model.read_bytes() == b"the previous model" and plot.read_bytes() == b"the previous figure"
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_leftovers_of_a_killed_run_are_removed_by_the_next(table, run):
    left = [run / f".results.json.4242.deadbeef{TEMP_SUFFIX}", run / "report.html.tmp"]
    for p in left:
        p.write_text("half a file")
    assert cli.main(_audit_args(table, run)) == 0
    assert not any(p.exists() for p in left)
    assert _assert_whole(run) == 0


def test_a_planted_symlink_is_never_written_through(run, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (run / "report.html.tmp").symlink_to(victim)
    (run / f".report.html.1.00000000{TEMP_SUFFIX}").symlink_to(victim)
    assert cli.main(["report", str(run)]) == 0
    assert victim.read_text() == "precious"
    assert not (run / "report.html").is_symlink()
    assert not (run / "report.html.tmp").exists()  # the planted link is removed, its target is not


HOLDER = textwrap.dedent(
    """
    import sys
    from mipkit._runfolder import lock_run_folder
    lock_run_folder(sys.argv[1], command="mipkit audit --seed 0 --out " + sys.argv[1]).acquire()
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until the test closes this pipe or ends, however long it runs
    """
)


def test_a_second_run_into_a_busy_folder_names_the_first(table, run, capsys):
    holder = subprocess.Popen(
        [PYTHON, "-c", HOLDER, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _digest(run)
        for args in (_audit_args(table, run, seed=1), ["report", str(run)]):
            assert cli.main(args) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "is in use by another mipkit run" in err
            assert f"pid {holder.pid}" in err and "started 20" in err and "mipkit audit --seed 0" in err
        assert _digest(run) == before
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdin.close()


@pytest.mark.timeout(1800)  # a busy machine makes the runs slow, not wrong
def test_two_audits_at_once_one_wins_and_the_other_is_refused(table, tmp_path):
    out = tmp_path / "race"
    procs = [
        subprocess.Popen(
            [PYTHON, "-m", "mipkit", *_audit_args(table, out, seed=seed)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (0, 1)
    ]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    if codes == [0, 0]:  # pragma: no cover - the second started only after the first had finished
        pytest.skip("the two runs did not overlap on this machine")
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert "is in use by another mipkit run" in refused and refused.count("\n") == 1
    winner = next(seed for (code, _), seed in zip(results, (0, 1), strict=True) if code == 0)
    assert _assert_whole(out) == winner
    assert not (out / LOCK_FILE).exists()


@pytest.mark.timeout(1800)  # a busy machine makes the runs slow, not wrong
def test_sigkill_at_random_points_never_loses_the_previous_run(table, run):
    """Kill a rerun (another seed) at random moments: each file is whole, old or new, and the data files
    belong to one run; a final rerun completes and cleans up."""
    args = [PYTHON, "-m", "mipkit", *_audit_args(table, run, "--models", "6", seed=3)]
    t0 = time.perf_counter()
    subprocess.run([PYTHON, "-c", "import mipkit.cli, pandas, sklearn"], check=True)
    start_up = time.perf_counter() - t0
    rng = random.Random(20261126)
    for delay in sorted(rng.uniform(0.2, start_up + 4.0) for _ in range(4)):
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _assert_whole(run, temporaries_allowed=True) in (0, 3)
    assert subprocess.run(args, stdout=subprocess.DEVNULL).returncode == 0
    assert _assert_whole(run) == 3
    assert not [p for p in run.iterdir() if p.name.endswith(TEMP_SUFFIX) or p.name == LOCK_FILE]


@pytest.fixture
def full_disk(tmp_path):
    """A 1 MiB tmpfs (root only; skipped where mounting is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_real_full_disk(table, full_disk, capsys):
    run = full_disk / "run"
    assert cli.main(_audit_args(table, run)) == 0
    before = _digest(run)
    fd = os.open(full_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill what is left
        for size in (1 << 16, 1 << 10, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(full_disk).free < 4096
    capsys.readouterr()
    for args in (_audit_args(table, run, seed=5), _audit_args(table, run), ["report", str(run)]):
        code = cli.main(args)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (args, err)
        assert any(m in err for m in ("No space left on device", "disk is full", "is the disk full")), err
        assert _digest(run) == before
    assert _assert_whole(run) == 0
