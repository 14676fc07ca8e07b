"""The command line's error handler: every failure is one line on stderr and a documented exit code.

Exit codes (``mipkit.cli``): 0 ok, 1 finding or internal error, 2 bad input, 130 interrupted, 141 closed pipe.
The commands here are injected test modules, so each kind of exception is raised from inside a real command.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import types

import pytest
import typer

import mipkit.cli as cli
from mipkit._validation import MipkitValueError

PYTHON = sys.executable


def _boom_module(exc: BaseException | None, *, echo: str | None = None) -> types.ModuleType:
    """A module whose ``register(app)`` adds a command ``boom`` that prints ``echo`` and raises ``exc``."""
    module = types.ModuleType("mipkit.cli._test_boom")

    def register(app: typer.Typer) -> None:
        @app.command("boom")
        def boom() -> None:
            """Raise the exception under test."""
            if echo is not None:
                typer.echo(echo)
            if exc is not None:
                raise exc

    module.register = register
    return module


@pytest.fixture
def boom(monkeypatch):
    """Install a ``boom`` command raising the given exception; returns a function running it."""

    def install(exc: BaseException | None, **kwargs) -> None:
        monkeypatch.setitem(sys.modules, "mipkit.cli._test_boom", _boom_module(exc, **kwargs))
        monkeypatch.setitem(cli.COMMANDS, "boom", ("_test_boom", "Raise the exception under test."))

    return install


@pytest.mark.parametrize(
    ("exc", "code", "expected"),
    [
        (MipkitValueError("The 'eta' parameter must be in (0, 0.5). Got 0.7 instead."), 2, "mipkit: error: "),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/no/such.csv"), 2, "/no/such.csv"),
        (
            PermissionError(errno.EACCES, "Permission denied", "/root/x"),
            2,
            "mipkit: error: Permission denied",
        ),
        (OSError(errno.ENOSPC, "No space left on device", "/full/results.json"), 2, "No space left"),
        (typer.BadParameter("must be positive"), 2, "mipkit: error: Invalid value: must be positive"),
        (KeyboardInterrupt(), 130, "Aborted."),
        (typer.Abort(), 130, "Aborted."),
        (typer.Exit(1), 1, None),
        (SystemExit(3), 3, None),
        (RuntimeError("unexpected state"), 1, "mipkit: internal error: RuntimeError: unexpected state"),
        (OverflowError("math range error"), 1, "MIPKIT_DEBUG=1"),
        # an AttributeError is what the old handler itself raised; now it is just an internal error
        (AttributeError("no attribute 'Abort'"), 1, "internal error: AttributeError"),
    ],
)
def test_each_error_is_one_line_and_an_exit_code(boom, capsys, monkeypatch, exc, code, expected):
    monkeypatch.delenv("MIPKIT_DEBUG", raising=False)
    boom(exc)
    assert cli.main(["boom"]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if expected is None:
        assert err == ""
    else:
        assert err.count("\n") == 1 and err.endswith("\n"), err
        assert expected in err


def test_multi_line_messages_become_one_line(boom, capsys):
    boom(MipkitValueError("first line\n  second line"))
    assert cli.main(["boom"]) == 2
    assert capsys.readouterr().err == "mipkit: error: first line second line\n"


def test_debug_shows_the_traceback_of_an_internal_error(boom, capsys, monkeypatch):
    monkeypatch.setenv("MIPKIT_DEBUG", "1")
    boom(RuntimeError("unexpected state"))
    assert cli.main(["boom"]) == 1
    err = capsys.readouterr().err
    assert err.count("Traceback (most recent call last)") == 1  # one traceback, not two
    assert err.rstrip().splitlines()[-1].startswith("mipkit: internal error: RuntimeError: unexpected state")


def test_success_and_usage_errors(boom, capsys):
    boom(None, echo="done")
    assert cli.main(["boom"]) == 0
    assert capsys.readouterr().out == "done\n"
    assert cli.main(["boom", "--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert err == "mipkit: error: No such option: --no-such-flag (see 'mipkit boom --help')\n"
    assert cli.main(["bomo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mipkit: error: No such command 'bomo'.") and err.count("\n") == 1
    assert "Did you mean 'boom'?" in err


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"mipkit {cli.__version__}\n"


# -- closed pipes, in a real process -------------------------------------------------------------------------
def _run_into_closed_pipe(args: list[str]) -> subprocess.CompletedProcess:
    """Run ``python -m mipkit ARGS`` with stdout a pipe whose reader has already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [PYTHON, "-m", "mipkit", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=900,
        )
    finally:
        os.close(write_end)


@pytest.mark.timeout(1800)  # a busy machine is slow, not wrong
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["risk", "--epsilon", "1"], ["demo", "--help"]])
def test_a_closed_pipe_ends_quietly(args):
    proc = _run_into_closed_pipe(args)
    assert proc.stderr == ""  # no traceback, no message
    assert proc.returncode == cli.EXIT_BROKEN_PIPE


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("command", ["mipkit --help | head -1", "mipkit risk --epsilon 1 | head -1"])
def test_head_minus_one_in_a_shell(command, tmp_path):
    """The issue's reproduction: the first line arrives, and mipkit's stderr stays empty."""
    bindir = os.path.dirname(PYTHON)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run(
        ["bash", "-c", f"{command} 2>err.txt; cat err.txt"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=tmp_path,
    )
    lines = proc.stdout.splitlines()
    assert lines and lines[0].strip(), proc.stdout
    assert "Traceback" not in proc.stdout and "Error" not in proc.stdout
    assert len(lines) == 1  # the one line from head; err.txt is empty
