"""The ``mipkit`` command line (Typer + Rich).

Each command lives in its own module of this package and exposes ``register(app)``; this module
assembles them and turns bad input (:class:`~mipkit.MipkitValueError`, unreadable files, usage errors)
into one line on stderr and exit code 2. Exit code 1 is reserved for a finding over a threshold
(``--fail-above``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

try:  # typer >= 0.20 vendors click as typer._click
    from typer._click import exceptions as _click_exc
except ImportError:  # pragma: no cover - older typer depends on click
    from click import exceptions as _click_exc

from mipkit import __version__
from mipkit._validation import MipkitValueError

COMMAND_MODULES = ("risk", "calibrate", "protect", "audit", "audit_synthetic", "report", "demo")

app = typer.Typer(
    name="mipkit",
    help="Membership-inference and re-identification risk: certify, protect and audit releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


for _name in COMMAND_MODULES:
    if importlib.util.find_spec(f"mipkit.cli.{_name}") is not None:
        importlib.import_module(f"mipkit.cli.{_name}").register(app)


def fail(message: str) -> typer.Exit:
    """Print one line of bad-input error to stderr and return the exit to raise (code 2)."""
    typer.echo(f"mipkit: error: {message}", err=True)
    return typer.Exit(2)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, mapping bad input to exit code 2 with one clear line."""
    try:
        # with standalone_mode=False click returns the code of a typer.Exit raised in a command
        code = app(args=argv, standalone_mode=False, prog_name="mipkit")
    except MipkitValueError as err:
        typer.echo(f"mipkit: error: {err}", err=True)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as err:
        typer.echo(f"mipkit: error: {err.strerror or err}: {err.filename}", err=True)
        return 2
    except _click_exc.UsageError as err:
        err.show()
        return 2
    except (typer.Abort, _click_exc.Abort):
        typer.echo("Aborted.", err=True)
        return 1
    except (typer.Exit, _click_exc.Exit) as err:
        return int(getattr(err, "exit_code", 0) or 0)
    except _click_exc.ClickException as err:
        err.show()
        return 2
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def _entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
