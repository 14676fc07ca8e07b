"""mipkit._runfolder: atomic files, staged runs, leftovers and the run-folder lock (issue 10, item 3)."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import mipkit._runfolder as rf
from mipkit._runfolder import (
    LOCK_FILE,
    TEMP_SUFFIX,
    RunFolderBusyError,
    atomic_write,
    check_output_path,
    lock_run_folder,
    remove_leftovers,
    staged_writes,
)
from mipkit._validation import MipkitValueError

PYTHON = sys.executable


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX))


# -- atomic files -------------------------------------------------------------------------------------------
def test_atomic_write_bytes_text_and_writer(tmp_path):
    assert atomic_write(tmp_path / "a.bin", b"\x00\x01") == tmp_path / "a.bin"
    atomic_write(tmp_path / "b.txt", "h\u00e9")
    atomic_write(tmp_path / "sub" / "c.txt", lambda f: f.write(b"from a writer"))
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_bytes() == "h\u00e9".encode()
    assert (tmp_path / "sub" / "c.txt").read_bytes() == b"from a writer"
    assert _temporaries(tmp_path) == [] and _temporaries(tmp_path / "sub") == []


def test_atomic_write_mode_follows_the_umask_or_is_given(tmp_path):
    old = os.umask(0o027)
    rf._umask = None  # read again
    try:
        atomic_write(tmp_path / "u.txt", "x")
        atomic_write(tmp_path / "m.txt", "x", mode=0o644)
    finally:
        os.umask(old)
        rf._umask = None
    assert (tmp_path / "u.txt").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "m.txt").stat().st_mode & 0o777 == 0o644


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "scores.parquet"
    target.write_bytes(b"old run")

    def half_then_fail(f):
        f.write(b"half of the new")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        atomic_write(target, half_then_fail)
    assert target.read_bytes() == b"old run"
    assert _temporaries(tmp_path) == []


def test_a_full_disk_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "results.json"
    target.write_text('{"old": true}')

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rf.os, "fsync", no_space)
    with pytest.raises(OSError) as info:
        atomic_write(target, '{"new": true}')
    assert info.value.errno == errno.ENOSPC
    assert json.loads(target.read_text()) == {"old": True}
    assert _temporaries(tmp_path) == []


def test_a_symlink_at_the_final_name_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.html").symlink_to(victim)
    atomic_write(run / "report.html", "<html></html>")
    assert victim.read_text() == "precious"
    assert not (run / "report.html").is_symlink()
    assert (run / "report.html").read_text() == "<html></html>"


def test_the_old_fixed_temporary_name_is_never_written_through(tmp_path):
    """``report.html.tmp`` planted as a symlink to another file."""
    from mipkit.report.html import write_html_report

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.html.tmp").symlink_to(victim)
    write_html_report(run, title="t", summary=["s"], sections=[])
    assert victim.read_text() == "precious"
    assert "<html" in (run / "report.html").read_text().lower()
    with lock_run_folder(run):  # the next run removes the planted link (and only the link)
        pass
    assert not (run / "report.html.tmp").is_symlink() and victim.read_text() == "precious"


def test_atomic_write_refuses_a_folder(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path / "d", "x")


def test_a_long_name_still_gets_a_temporary(tmp_path):
    name = "r" * 200 + ".json"
    atomic_write(tmp_path / name, "{}")
    assert (tmp_path / name).read_text() == "{}"


# -- staged runs --------------------------------------------------------------------------------------------
def test_staged_files_appear_together_at_the_end(tmp_path):
    (tmp_path / "config.json").write_text("old config")
    with staged_writes(tmp_path):
        atomic_write(tmp_path / "config.json", "new config")
        atomic_write(tmp_path / "results.json", "new results")
        atomic_write(tmp_path / "results.json", "newer results")  # written twice: the last one wins
        assert (tmp_path / "config.json").read_text() == "old config"
        assert not (tmp_path / "results.json").exists()
        assert len(_temporaries(tmp_path)) == 2
    assert (tmp_path / "config.json").read_text() == "new config"
    assert (tmp_path / "results.json").read_text() == "newer results"
    assert _temporaries(tmp_path) == []


def test_a_failed_stage_keeps_every_old_file(tmp_path):
    (tmp_path / "config.json").write_text("old config")
    (tmp_path / "results.json").write_text("old results")
    with pytest.raises(OSError), staged_writes(tmp_path):
        atomic_write(tmp_path / "config.json", "new config")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert (tmp_path / "config.json").read_text() == "old config"
    assert (tmp_path / "results.json").read_text() == "old results"
    assert _temporaries(tmp_path) == []


def test_writes_into_other_folders_are_not_staged(tmp_path):
    other = tmp_path / "other"
    with staged_writes(tmp_path / "run"):
        atomic_write(other / "x.txt", "now")
        assert (other / "x.txt").read_text() == "now"


# -- leftovers ----------------------------------------------------------------------------------------------
def test_remove_leftovers_touches_only_mipkit_temporaries(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run = tmp_path / "run"
    (run / "before").mkdir(parents=True)
    left = [
        run / f".results.json.123.abcd{TEMP_SUFFIX}",
        run / "before" / f".scores.parquet.9.ffff{TEMP_SUFFIX}",
        run / "report.html.tmp",
        run / ".config.json.k2j3.tmp",
    ]
    for p in left:
        p.write_text("partial")
    (run / f".link{TEMP_SUFFIX}").symlink_to(victim)
    kept = [run / "results.json", run / "notes.tmp", run / "my.mipkit-tmp.txt", run / "before" / "x.tmp"]
    for p in kept:
        p.write_text("user file")
    removed = remove_leftovers(run)
    assert sorted(removed) == sorted([*left, run / f".link{TEMP_SUFFIX}"])
    assert all(p.exists() for p in kept) and victim.read_text() == "precious"
    assert not any(p.exists() for p in left)


# -- the lock -----------------------------------------------------------------------------------------------
def test_check_output_path_refuses_an_empty_name():
    for bad in ("", "   ", None):
        with pytest.raises(MipkitValueError, match="non-empty path"):
            check_output_path(bad)
    assert check_output_path("runs/a") == Path("runs/a")


def test_lock_is_reentrant_and_leaves_nothing_behind(tmp_path):
    run = tmp_path / "new" / "run"
    with lock_run_folder(run, command="mipkit audit --seed 0") as outer:
        holder = json.loads((run / LOCK_FILE).read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        assert holder["command"] == "mipkit audit --seed 0" and holder["started"]
        with lock_run_folder(run):  # a run inside a run (the demo's audits) shares it
            pass
        assert (run / LOCK_FILE).exists()
        assert outer.folder == run
    assert not (tmp_path / "new").exists()  # created for the run, left empty: removed with its parent


def test_a_folder_with_files_is_kept_after_the_lock(tmp_path):
    run = tmp_path / "run"
    with lock_run_folder(run):
        atomic_write(run / "results.json", "{}")
    assert sorted(p.name for p in run.iterdir()) == ["results.json"]


def test_a_symlinked_lock_file_is_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).symlink_to(victim)
    with pytest.raises(MipkitValueError, match="symbolic link"):
        lock_run_folder(run).acquire()
    assert victim.read_text() == "precious"


def test_a_file_is_not_a_run_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(MipkitValueError, match="not a folder"):
        lock_run_folder(tmp_path / "f").acquire()


HOLDER = textwrap.dedent(
    """
    import sys
    from mipkit._runfolder import lock_run_folder
    lock = lock_run_folder(sys.argv[1], command="mipkit audit --seed 1").acquire()
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until the test closes this pipe or ends, however long it runs
    """
)


def _hold(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [PYTHON, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_run_is_refused_naming_the_first_and_a_killed_holder_frees_the_folder(tmp_path):
    run = tmp_path / "run"
    proc = _hold(run)
    try:
        with pytest.raises(RunFolderBusyError) as info:
            lock_run_folder(run).acquire()
        message = str(info.value)
        assert f"pid {proc.pid}" in message and socket.gethostname() in message
        assert "mipkit audit --seed 1" in message and "started 20" in message
        assert info.value.holder["pid"] == proc.pid
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
    # the kernel released the flock with the process: the stale lock file does not block the next run
    assert (run / LOCK_FILE).exists()
    deadline = time.time() + 300  # generous: a busy machine is slow, not wrong
    while True:
        try:
            with lock_run_folder(run) as lock:
                assert json.loads((run / LOCK_FILE).read_text())["pid"] == os.getpid()
            break
        except RunFolderBusyError:  # pragma: no cover - the kernel has not released it yet
            assert time.time() < deadline
            time.sleep(0.1)
    assert lock.folder == run and not (run / LOCK_FILE).exists()
