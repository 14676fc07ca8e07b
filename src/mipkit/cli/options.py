"""Parsing and checking helpers shared by several commands.

Imported when the command modules are, so it imports nothing heavy at module level (see
:mod:`mipkit.cli`). Besides ``--params``, this is where the commands' guards live:

* :func:`check_count`: size flags (models, steps, targets, rows) within limits that say what they cost,
  with ``--yes-i-mean-it`` lifting the soft limit where a large run is legitimate;
* :func:`hold_run_folder`: check a run folder and hold its lock while the command runs;
* :func:`check_out_folder` / :func:`check_out_file`: output paths that are not empty, not the wrong kind of
  thing, and (for figures) of a format that can be written;
* :func:`allow_models`: the ``--allow-model`` allow-list of trainer classes (never from a config file);
* :func:`check_config_types`: config-file values of the type of their flag (``dropna: "no"`` is refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OVERRIDE_FLAG = "--yes-i-mean-it"
ALLOW_MODEL_HELP = (
    "Allow this trainer class (import path, or 'package.*'; repeatable) besides scikit-learn and mipkit's "
    "own. Also MIPKIT_ALLOWED_MODELS. Not accepted from --config."
)
OVERRIDE_HELP = "Lift the soft limits on run sizes (e.g. more than 1024 models)."
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
"""Figure formats ``--plot`` writes (by the file name's suffix)."""


@dataclass(frozen=True)
class Limit:
    """Bounds of a size flag: ``soft`` may be lifted with ``--yes-i-mean-it`` (when given), ``hard`` never."""

    soft: int | None
    hard: int
    cost: str


LIMITS: dict[str, Limit] = {
    "models": Limit(1024, 10**6, "each model is a full fit and its outputs are kept in memory"),
    "targets": Limit(None, 10**6, "each target model is attacked with all the others"),
    "steps": Limit(None, 10**6, "the accountant's memory and time grow with the number of steps"),
    "fits": Limit(None, 10**6, "each is a full fit of the model"),
    "rows": Limit(None, 10**8, "the rows are held in memory"),
}
"""The limits of :func:`check_count` by kind of size."""


def check_count(
    flag: str,
    value: Any,
    *,
    kind: str,
    minimum: int | None = 1,
    maximum: int | None = None,
    even: bool = False,
    override: bool | None = None,
) -> int | None:
    """Check a size flag before anything is allocated; returns ``value`` (None passes through).

    Parameters
    ----------
    flag : str
        The flag, as the message shows it (``"--models"``).
    value : int or None
    kind : {"models", "targets", "steps", "fits", "rows"}
        Which :data:`LIMITS` apply.
    minimum : int or None
        Smallest value accepted (None: the caller checks it).
    maximum : int, optional
        A bound of this run (e.g. the number of rows of the table), applied with the kind's limits.
    even : bool
        Refuse odd values.
    override : bool, optional
        The command's ``--yes-i-mean-it`` flag; None when the command has none (the soft limit is then a
        hard one).
    """
    from mipkit._validation import MipkitValueError

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MipkitValueError(f"{flag} must be an integer. Got {value!r}.")
    if minimum is not None and value < minimum:
        raise MipkitValueError(f"{flag} must be at least {minimum}. Got {value}.")
    if even and value % 2:
        raise MipkitValueError(f"{flag} must be even. Got {value}.")
    if maximum is not None and value > maximum:
        raise MipkitValueError(f"{flag} must be at most {maximum} here. Got {value}.")
    limit = LIMITS[kind]
    if value > limit.hard:
        raise MipkitValueError(f"{flag} must be at most {limit.hard:,} ({limit.cost}). Got {value:,}.")
    if limit.soft is not None and value > limit.soft and not override:
        lift = f"; pass {OVERRIDE_FLAG} to run it anyway" if override is not None else ""
        raise MipkitValueError(f"{flag} {value:,} is over the limit of {limit.soft:,} ({limit.cost}){lift}.")
    return value


def check_out_folder(out: Any, flag: str = "--out") -> Path:
    """A run folder path: not empty (``''`` would be the current folder), not an existing file."""
    from mipkit._validation import MipkitValueError

    if out is None or not str(out).strip():
        raise MipkitValueError(f"{flag} must name a folder. Got an empty path.")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise MipkitValueError(f"{flag} {path} exists and is not a folder.")
    return path


def hold_run_folder(out: Any, flag: str = "--out") -> Path:
    """Check a run folder path and lock it until the command ends (released when click closes its context).

    Raises :class:`mipkit._runfolder.RunFolderBusyError` (exit 2) when another run holds the folder.
    """
    from typer._click.globals import get_current_context

    from mipkit._runfolder import lock_run_folder

    path = check_out_folder(out, flag)
    lock = lock_run_folder(path).acquire()
    get_current_context().call_on_close(lock.release)
    return path


def check_out_file(out: Any, flag: str = "--out", *, suffixes: tuple[str, ...] | None = None) -> Path:
    """An output file path: not empty, not an existing folder, and with one of ``suffixes`` when given."""
    from mipkit._validation import MipkitValueError

    if out is None or not str(out).strip():
        raise MipkitValueError(f"{flag} must name a file. Got an empty path.")
    path = Path(out)
    if path.is_dir() or str(out).endswith(("/", "\\")):
        raise MipkitValueError(f"{flag} {out} is a folder; give a file name.")
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise MipkitValueError(
            f"{flag} must be a file name ending in {', '.join(suffixes)}. Got {str(out)!r}."
        )
    return path


def allow_models(ctx: Any, values: list[str] | tuple[str, ...] | None) -> None:
    """Add ``--allow-model`` values to the trainer allow-list; refused when they come from ``--config``."""
    from mipkit._validation import MipkitValueError

    if not values:
        return
    source = ctx.get_parameter_source("allow_model") if ctx is not None else None
    if source is not None and source.name == "DEFAULT_MAP":
        raise MipkitValueError(
            "allow-model cannot be set in a config file: a shared file must not decide which code runs. "
            "Pass --allow-model on the command line (or set MIPKIT_ALLOWED_MODELS)."
        )
    from mipkit.game.trainers import allow_trainers

    items = [values] if isinstance(values, str) else list(values)
    allow_trainers(p.strip() for item in items for p in str(item).split(",") if p.strip())


def _annotation(param: Any) -> Any:
    """The Python type a command parameter was declared with (``int | None`` -> ``int``)."""
    import types
    import typing

    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if kind is None:  # older Typer: a click parameter type
        name = type(getattr(param, "type", None)).__name__
        kind = {"BoolParamType": bool, "IntParamType": int, "FloatParamType": float}.get(name)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        kind = args[0] if len(args) == 1 else kind
    return kind


def check_config_types(values: dict[str, Any], command: Any) -> dict[str, Any]:
    """Refuse config-file values whose type does not match their flag (strict, as pydantic's ``Strict*``).

    ``values`` maps parameter names to the file's values (after list joining); a boolean flag takes ``true``
    or ``false`` only (``dropna: "no"`` is refused rather than read as true), an integer flag an integer, a
    number flag a number. ``null`` leaves the flag's default. Returns ``values``.
    """
    from pydantic import StrictBool, StrictFloat, StrictInt, TypeAdapter, ValidationError

    from mipkit._validation import MipkitValueError

    if "allow_model" in values:
        raise MipkitValueError(
            "allow-model cannot be set in a config file: a shared file must not decide which code runs. "
            "Pass --allow-model on the command line (or set MIPKIT_ALLOWED_MODELS)."
        )
    params = {p.name: p for p in getattr(command, "params", [])}
    for name, value in values.items():
        param = params.get(name)
        if param is None or value is None:
            continue
        kind = _annotation(param)
        if getattr(param, "is_flag", False) or kind is bool:
            adapter, what = TypeAdapter(StrictBool), "true or false"
        elif kind is int:
            adapter, what = TypeAdapter(StrictInt), "an integer"
        elif kind is float:
            adapter, what = TypeAdapter(StrictInt | StrictFloat), "a number"
        else:
            if isinstance(value, (dict, list, tuple, bool)):
                key = name.replace("_", "-")
                raise MipkitValueError(f"The config key {key!r} must be text. Got {value!r}.")
            continue
        try:
            adapter.validate_python(value)
        except ValidationError:
            key = name.replace("_", "-")
            raise MipkitValueError(f"The config key {key!r} must be {what}. Got {value!r}.") from None
    return values


def parse_params(text: str | None) -> dict:
    """``--params`` JSON text -> dict of trainer constructor arguments, with a one-line error."""
    from mipkit._validation import MipkitValueError

    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise MipkitValueError(f"--params is not valid JSON: {err.msg} (column {err.colno}).") from None
    if not isinstance(value, dict):
        raise MipkitValueError(f"--params must be a JSON object such as '{{\"C\": 0.1}}'. Got {text!r}.")
    return value
