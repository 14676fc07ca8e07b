"""The ``mipkit`` command line (Typer).

Each command lives in its own module of this package and exposes ``register(app)``. The modules are loaded
lazily: ``mipkit --help`` and ``mipkit --version`` read the command table :data:`COMMANDS` and import no
command module, and ``mipkit risk ...`` imports ``mipkit.cli.risk`` only. Help is rendered as plain text
(no Rich markup), so ``[loss,lira,rmia]`` in a help string is shown as written.

:func:`main` owns the exit codes and what reaches stderr:

* 0: success;
* 1: a finding over ``--fail-above`` (the command says which), or an internal error: one line naming it,
  with ``MIPKIT_DEBUG=1`` to see the traceback;
* 2: bad input - a usage error, a :class:`~mipkit.MipkitValueError` (a run folder in use, a trainer class
  that is not allowed, a size over its limit, ...), an unreadable / unwritable file (a full disk) or a run
  too large for the memory - as one line ``mipkit: error: ...`` on stderr;
* 130: interrupted (Ctrl-C), ``Aborted.`` on stderr;
* 141 (128 + SIGPIPE): the reader of stdout went away (``mipkit --help | head -1``); nothing is printed.

Never a traceback, unless ``MIPKIT_DEBUG=1`` asks for one.
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import sys
import traceback
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from mipkit import __version__

__all__ = ["COMMANDS", "EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "EXIT_USAGE", "app", "fail", "main"]

#: Command name -> (module of ``mipkit.cli`` that registers it, the one-line summary ``mipkit --help``
#: lists; the first sentence of the command's docstring, checked by the tests).
COMMANDS: dict[str, tuple[str, str]] = {
    "risk": (
        "risk",
        "Certify: turn a DP / GDP / Laplace / DP-SGD guarantee into membership, re-identification and "
        "attribute-inference risk.",
    ),
    "calibrate": ("calibrate", "Calibrate: find the smallest noise whose certified risk meets a target."),
    "protect": ("protect", "Protect: train a model and add noise to its parameters so that it is eta-MIP."),
    "audit-noise": (
        "protect",
        "Audit: the Bayes-optimal membership attack on the MIP-noise-wrapped model (the MIP game).",
    ),
    "audit": (
        "audit",
        "Audit a trainer: K models on random halves, LOSS/LiRA/RMIA/LTU attacks, metrics and a report.",
    ),
    "audit-fitted": (
        "audit_fitted",
        "Audit a fitted model: its outputs on members vs non-members (LOSS; LiRA/RMIA with references).",
    ),
    "audit-scores": (
        "audit_scores",
        "Audit a model from a predictions file: labels, membership and outputs in, metrics out.",
    ),
    "audit-synthetic": (
        "audit_synthetic",
        "Audit synthetic data: NNAA privacy loss, DCR attack, attribute inference vs non-member baseline.",
    ),
    "train-private": (
        "train_private",
        "Train with DP-SGD to a risk target; writes the model and its certificate.",
    ),
    "audit-one-run": (
        "audit_one_run",
        "Audit DP training in one run: canaries, abstaining guesses and an epsilon lower bound.",
    ),
    "synthesize": (
        "synthesize",
        "Make private synthetic data: DP-WGAN-GP, AIM, MST or CTGAN, with a certificate of its privacy.",
    ),
    "domain": (
        "domain",
        "Write a domain template for --domain from a table's schema only; you fill in its public values.",
    ),
    "report": (
        "report",
        "Rebuild RUN_DIR/report.html from results.json and the other files of the run (no refitting).",
    ),
    "demo": (
        "demo",
        "Audit -> protect (MIP noise) -> audit again on breast-cancer data; writes a before/after report.",
    ),
}

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe
DEBUG_ENV = "MIPKIT_DEBUG"

_APP_SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "pretty_exceptions_enable": False,
    # plain help: Rich markup would eat "[loss,lira,rmia]" and print "--json <bool>"
    "rich_markup_mode": None,
}


def _load_module_commands(module: str) -> dict[str, Any]:
    """Import ``mipkit.cli.<module>`` and return the click commands its ``register(app)`` defines."""
    sub = typer.Typer(**_APP_SETTINGS)
    importlib.import_module(f"mipkit.cli.{module}").register(sub)
    return dict(typer.main.get_group(sub).commands)


class _LazyCommands(MutableMapping):
    """The group's command table: names from :data:`COMMANDS`, each module imported on first use."""

    def __init__(self, initial: MutableMapping | None = None) -> None:
        self._loaded: dict[str, Any] = dict(initial or {})

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded and name in COMMANDS:
            self._loaded.update(_load_module_commands(COMMANDS[name][0]))
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._loaded


class LazyGroup(TyperGroup):
    """A Typer group whose commands are imported only when one of them is run or asked for help."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _LazyCommands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of ``mipkit --help``, from :data:`COMMANDS` (no command module imported)."""
        from typer._click.utils import make_default_short_help

        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, make_default_short_help(summary, limit)) for name, (_, summary) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="mipkit",
    cls=LazyGroup,
    help="Membership-inference and re-identification risk: certify, protect and audit releases.",
    no_args_is_help=True,
    **_APP_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mipkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Membership-inference and re-identification risk: certify, protect and audit releases."""


def fail(message: str) -> typer.Exit:
    """Print one line of bad-input error to stderr and return the exit to raise (code 2)."""
    _error_line(message)
    return typer.Exit(EXIT_USAGE)


# -- error handling ------------------------------------------------------------------------------------------
def _one_line(text: object) -> str:
    return re.sub(r"\s*\n\s*", " ", str(text)).strip()


def _error_line(message: object, prefix: str = "mipkit: error: ") -> None:
    try:
        sys.stderr.write(f"{prefix}{_one_line(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed too: nothing more can be said
        pass


def _is_broken_pipe(err: BaseException | None) -> bool:
    """True if ``err`` is, or was raised while handling, a write to a closed pipe."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in (errno.EPIPE, errno.ESHUTDOWN):
            return True
        err = err.__cause__ or err.__context__
    return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again.

    The recipe of the Python documentation ("Note on SIGPIPE", :mod:`signal`).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. captured output)
        pass


def _is_input_error(err: BaseException) -> bool:
    # MipkitValueError lives in mipkit._validation (which imports numpy); if that module was never imported,
    # no such error can have been raised, so do not import it here.
    validation = sys.modules.get("mipkit._validation")
    return validation is not None and isinstance(err, validation.MipkitValueError)


#: Library remedies (Python arguments) -> the command line's flags, in error messages.
_FLAG_OF_ARGUMENT = (("pass encode='onehot'", "pass --encode onehot"), ("(dropna=True)", "(--dropna)"))


def _cli_text(err: BaseException) -> str:
    """A library error's message in the command line's words (a remedy naming its flag, say)."""
    trainers = sys.modules.get("mipkit.game.trainers")
    if trainers is not None and isinstance(err, trainers.UntrustedTrainerError) and err.allowable:
        path, env = err.import_path, trainers.ALLOWED_MODELS_ENV
        return f"{err.reason} To use it, pass --allow-model {path} (or set {env}={path})."
    text = str(err)
    for argument, flag in _FLAG_OF_ARGUMENT:
        text = text.replace(argument, flag)
    return text


def _os_error_text(err: OSError) -> str:
    text = err.strerror or str(err)
    names = [n for n in (err.filename, getattr(err, "filename2", None)) if n is not None]
    return f"{text}: {' -> '.join(str(n) for n in names)}" if names else text


def _handle(err: BaseException) -> int:
    """Map an exception out of the command to its exit code, saying at most one line on stderr."""
    from typer._click import exceptions as click_exc

    if _is_broken_pipe(err):
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    if isinstance(err, typer.Exit):
        return int(err.exit_code or 0)
    if isinstance(err, (KeyboardInterrupt, typer.Abort, EOFError)):
        _error_line("Aborted.", prefix="")
        return EXIT_INTERRUPTED
    if isinstance(err, SystemExit):
        if err.code is None or isinstance(err.code, int):
            return int(err.code or 0)
        _error_line(err.code)
        return 1
    if isinstance(err, click_exc.NoArgsIsHelpError):
        err.show()
        return EXIT_USAGE
    if isinstance(err, click_exc.UsageError):
        hint = ""
        if err.ctx is not None:
            hint = f" (see '{err.ctx.command_path} --help')"
        _error_line(f"{err.format_message()}{hint}")
        return EXIT_USAGE
    if isinstance(err, click_exc.ClickException):
        _error_line(err.format_message())
        return EXIT_USAGE
    if _is_input_error(err):
        _error_line(_cli_text(err))
        return EXIT_USAGE
    if isinstance(err, OSError):
        _error_line(_os_error_text(err))
        return EXIT_USAGE
    if isinstance(err, MemoryError):
        _error_line(f"Not enough memory for this run ({err or 'MemoryError'}); ask for a smaller one.")
        return EXIT_USAGE
    debug = os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")
    if debug:
        traceback.print_exception(err)
    where = "" if debug else f" (run with {DEBUG_ENV}=1 to see the traceback)"
    _error_line(
        f"{type(err).__name__}: {err} - a bug in mipkit{where}; please report it.",
        prefix="mipkit: internal error: ",
    )
    return 1


def _invoke(args: Sequence[str]) -> int:
    command = typer.main.get_command(app)
    with command.make_context("mipkit", list(args)) as ctx:
        code = command.invoke(ctx)
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    Never raises and never prints a traceback (unless ``MIPKIT_DEBUG=1``); see the module docstring for the
    exit codes.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        code = _invoke(args)
        sys.stdout.flush()  # a closed pipe shows up here, not in the interpreter's exit
    except BaseException as err:  # the one place where every error becomes an exit code
        code = _handle(err)
    return code


def _entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
