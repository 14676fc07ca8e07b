"""The fuzz suite's working folder and its rule for a refusal (tests/cli/test_fuzz*.py).

A refusal is: exit code 2, exactly one line ``mipkit: error: ...`` on stderr, nothing on stdout, no
traceback, and the working folder - the inputs, a finished run folder ``prev/`` that commands are pointed at
with ``--out``, a run folder ``busy/`` locked by another process and a saved model - byte for byte as it was
(nothing written, replaced or created). With :func:`no_computation`, a command that gets past its checks to
its heavy work (fitting, scoring, synthesizing) raises :class:`ReachedComputation`: a refusal comes first.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from fuzz_inputs import AUDIT, AUDIT_RUN, HEAVY, HOLDER, PYTHON, ReachedComputation, hash_tree, write_inputs

import mipkit.cli as cli


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    """The working folder of every case: inputs, a finished audit run ``prev/`` and a locked ``busy/``."""
    root = tmp_path_factory.mktemp("fuzz")
    write_inputs(root)
    here = os.getcwd()
    os.chdir(root)
    try:
        assert cli.main([*AUDIT, *AUDIT_RUN]) == 0, "the previous run could not be made"
        shutil.copytree(root / "prev", root / "busy")
        shutil.copytree(root / "prev", root / "damaged")  # a scores.parquet cut short (by an older mipkit)
        (root / "damaged" / "scores.parquet").write_bytes(
            (root / "prev" / "scores.parquet").read_bytes()[:999]
        )
        holder = subprocess.Popen(
            [PYTHON, "-c", HOLDER, str(root / "busy")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout.readline().strip() == "locked"
        yield root
    finally:
        os.chdir(here)
        if "holder" in locals():
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            holder.stdin.close()


@pytest.fixture(scope="session")
def big_json(tmp_path_factory) -> Path:
    """A 50 MB JSON file (valid JSON: one long string), outside the working folder so it is hashed never."""
    path = tmp_path_factory.mktemp("big") / "big.json"
    with path.open("w") as fh:
        fh.write('{"method": "mst", "certified": true, "notes": ["')
        fh.write("x" * (50 * 2**20))
        fh.write('"]}')
    return path


@pytest.fixture
def no_computation(monkeypatch):
    """Every command's heavy entry point (:data:`HEAVY`) raises :class:`ReachedComputation`."""
    import importlib

    def reached(*args, **kwargs):
        raise ReachedComputation("the command got past its checks to its computation")

    for target in HEAVY:
        module, _, name = target.rpartition(".")
        try:
            owner = importlib.import_module(module)
        except ImportError:  # a class attribute: module.Class.method
            module, _, cls = module.rpartition(".")
            owner = getattr(importlib.import_module(module), cls)
        monkeypatch.setattr(owner, name, reached)


@pytest.fixture
def refused(sandbox, capsys, monkeypatch):
    """``refused(args)``: run ``mipkit args`` in the working folder and check it is a clean refusal."""
    monkeypatch.chdir(sandbox)
    monkeypatch.delenv("MIPKIT_DEBUG", raising=False)
    monkeypatch.delenv("MIPKIT_ALLOWED_MODELS", raising=False)

    def check(args: list[str]) -> str:
        before = hash_tree(sandbox)
        capsys.readouterr()
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        assert "Traceback" not in err and "Traceback" not in out
        assert "ReachedComputation" not in err, f"not refused before the computation: {err!r}"
        assert code == 2, f"exit {code}; stderr: {err!r}"
        lines = err.splitlines()
        assert len(lines) == 1 and err.endswith("\n"), f"stderr is not one line: {err!r}"
        assert lines[0].startswith("mipkit: error: "), lines[0]
        assert out == "", f"a refusal printed on stdout: {out!r}"
        assert hash_tree(sandbox) == before, "the working folder or the run folder changed"
        assert not (sandbox / "X").exists()
        return lines[0]

    return check


@pytest.fixture
def reaches(sandbox, capsys, monkeypatch, no_computation):
    """``reaches(args)``: ``mipkit args`` passes every check and gets to its computation (accepted)."""
    monkeypatch.chdir(sandbox)
    monkeypatch.delenv("MIPKIT_DEBUG", raising=False)

    def check(args: list[str]) -> None:
        capsys.readouterr()
        code = cli.main(list(args))
        err = capsys.readouterr().err
        assert code == 1 and "ReachedComputation" in err, f"exit {code}; stderr: {err!r}"

    return check
