"""The pieces several commands share: their common flags, parsing and checking helpers, and output.

Imported when the command modules are, so it imports nothing heavy at module level (see
:mod:`mipkit.cli`; Typer is loaded by then). Here are:

* the flags several commands take with the same meaning, each declared once as an ``Annotated`` type
  (``seed: SeedOption = 0``: the command gives the default), :func:`with_options` for a run of flags
  that commands share as a group, and :func:`flag_table` for a command's own flags (one help table);
* :func:`parse_params`, :func:`comma_names`, :func:`comma_floats` and :func:`config_from_flags`: flags to the
  values and configurations of the library;
* :func:`echo_json` and :func:`finding`: one JSON object on stdout; a finding (exit 1) on stderr.

And the commands' guards:

* :func:`check_count`: size flags (models, steps, targets, rows, workers, layer widths) within limits that
  say what they cost, with ``--yes-i-mean-it`` lifting the soft limit where a large run is legitimate;
  :func:`check_n_jobs` for ``--n-jobs`` and :func:`check_seed` for ``--seed``;
* :func:`hold_run_folder`: check a run folder and hold its lock while the command runs;
* :func:`check_out_folder` / :func:`check_out_file`: output paths that are not empty, not the wrong kind of
  thing, and (for figures) of a format that can be written;
* :func:`allow_models`: the ``--allow-model`` allow-list of trainer classes (never from a config file);
* :func:`check_config_types`: config-file values of the type of their flag (``dropna: "no"`` is refused).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer import Option

from mipkit.cli.limits import (  # noqa: F401 - the guards are part of this module's interface
    LIMITS,
    OVERRIDE_FLAG,
    Limit,
    check_count,
    check_n_jobs,
    check_seed,
)

T = TypeVar("T")

ALLOW_MODEL_HELP = (
    "Allow this trainer class (import path, or 'package.*'; repeatable) besides scikit-learn and mipkit's "
    "own. Also MIPKIT_ALLOWED_MODELS. Not accepted from --config."
)
OVERRIDE_HELP = "Lift the soft limits on run sizes (e.g. more than 1024 models)."
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
"""Figure formats ``--plot`` writes (by the file name's suffix)."""
EXIT_FINDING = 1
"""The exit code of a finding (a measured risk over the policy's limit): not an error, see :func:`finding`."""

# -- flags several commands share ----------------------------------------------------------------------------
# Each is the flag's type, name and help (a ``typer.Option``), written once; a command gives its default
# (``seed: SeedOption = 0``, ``data: DataOption = ...`` for a required flag).
DataOption = Annotated[str, Option("--data", help="CSV or Parquet table of records.")]
TargetOption = Annotated[str, Option("--target", help="Label column.")]
EncodeOption = Annotated[str, Option("--encode", help="none or onehot (encode non-numeric columns).")]
DropnaOption = Annotated[bool, Option("--dropna/--no-dropna", help="Drop rows with missing values.")]
DropOption = Annotated[
    str | None, Option("--drop", help="Comma-separated columns to leave out (identifiers).")
]
DomainOption = Annotated[
    str | None,
    Option("--domain", help="JSON file: the public domain of the columns (a template: mipkit domain)."),
]
ParamsOption = Annotated[str | None, Option("--params", help="Trainer constructor arguments as JSON.")]
AllowModelOption = Annotated[list[str] | None, Option("--allow-model", help=ALLOW_MODEL_HELP)]
SeedOption = Annotated[int, Option("--seed", help="Random seed.")]
NoiseSeedOption = Annotated[
    int | None,
    Option(
        "--noise-seed",
        help="Seed the protective noise too (reproducible release; NOT private against anyone who holds "
        "this number). Default: OS entropy.",
    ),
]
RunFolderOption = Annotated[str, Option("--out", help="Run folder.")]
AddressOption = Annotated[str | None, Option("--address", help="Ray cluster address.")]
QuietOption = Annotated[bool, Option("--quiet", help="No progress bars.")]
FprsOption = Annotated[str, Option("--fprs", help="FPRs for TPR at FPR.")]
ConfidenceOption = Annotated[float, Option("--confidence", help="Confidence level of every interval.")]
FailMetricOption = Annotated[
    str, Option("--fail-metric", help="Metric of --fail-above: eta, auc or tpr@FPR.")
]
JsonOption = Annotated[bool, Option("--json", help="Print one JSON object on stdout.")]
FailAboveOption = Annotated[
    float | None,
    Option(
        "--fail-above",
        help="Policy: exit 1 (a finding) when the interval of --fail-metric (simultaneous over the attacks "
        "and secrets) lies wholly above this limit; the report's verdict box says pass / finding / "
        "inconclusive.",
    ),
]
NoReportOption = Annotated[bool, Option("--no-report", help="Skip report.html (mipkit report renders it).")]
OverrideOption = Annotated[bool, Option(OVERRIDE_FLAG, help=OVERRIDE_HELP)]
JsonTableOption = Annotated[bool, Option("--json", help="Print one JSON object instead of a table.")]
RiskValueOption = Annotated[float, Option("--value", help="The risk level not to exceed.")]
SampleRateOption = Annotated[float | None, Option("--sample-rate", help="DP-SGD Poisson sampling rate.")]
StepsOption = Annotated[int | None, Option("--steps", help="DP-SGD number of steps.")]


def flag_table(table: str) -> dict[str, Any]:
    """A command's own flags from a table of ``--flag  help`` lines: ``{flag: typer.Option(flag, help=...)}``.

    Each flag starts a line (``--name`` or ``--name/--no-name``) and is separated from its help by two or
    more spaces; indented lines continue the help above. The command's signature gives the type and the
    default: ``original: Annotated[str, FLAGS["--original"]] = ...``. The help of a command reads as one
    table, and flags shared by several commands stay in the ``...Option`` types above.
    """
    import re

    helps: dict[str, list[str]] = {}
    last = None
    for line in table.splitlines():
        if not line.strip():
            continue
        if line.startswith("--"):
            parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            last = parts[0]
            if last in helps:
                raise ValueError(f"flag_table: {last} twice")
            helps[last] = [parts[1]] if len(parts) > 1 else []
        elif last is None:
            raise ValueError(f"flag_table: a continuation line before any flag: {line!r}")
        else:
            helps[last].append(line.strip())
    return {flag: Option(flag, help=" ".join(words)) for flag, words in helps.items()}


def with_options(name: str, group: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator (under ``@app.command``): flags that several commands share as a run, declared once as the
    parameters of ``group``.

    The command's parameter ``name`` (any default, say ``None``) stands for them: in the signature Typer
    reads, the parameters of ``group`` take its place, so ``--help`` lists them there. The command receives
    ``group`` bound to their values (a :func:`functools.partial`) and calls it where it parses them.

    Parameters
    ----------
    name : str
        The command's parameter that stands for the group.
    group : callable
        A function whose parameters are the flags (``fprs: FprsOption = "0.001"``, ...) and which turns
        their values into what the command needs.

    Returns
    -------
    callable
        The decorator.
    """
    import functools
    import inspect

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        outer = inspect.signature(command, eval_str=True)
        inner = inspect.signature(group, eval_str=True)
        params = []
        for param in outer.parameters.values():
            params.extend(inner.parameters.values() if param.name == name else [param])

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            flags = {key: values.pop(key) for key in inner.parameters}
            return command(**values, **{name: functools.partial(group, **flags)})

        run.__signature__ = outer.replace(parameters=params)  # type: ignore[attr-defined]
        run.__annotations__ = {param.name: param.annotation for param in params}
        return run

    return decorate


def target_parameters(flag: str) -> Callable[..., dict[str, float | None]]:
    """The flags of a risk target's parameters (``--fpr``, ``--baseline``, ``--base-rate``, ``--recall``) as a
    :func:`with_options` group, for a command whose target flag is ``flag`` (``--target``, ``--target-risk``).

    Parameters
    ----------
    flag : str
        The command's flag that names the target, as the help texts mention it.

    Returns
    -------
    callable
        The group: it returns the four values by parameter name (None where not given).
    """

    def given(
        fpr: float | None = Option(None, "--fpr", help=f"FPR for {flag} tpr-at-fpr."),
        baseline: float | None = Option(None, "--baseline", help=f"Baseline success for {flag} success."),
        base_rate: float | None = Option(None, "--base-rate", help=f"Member fraction for {flag} precision."),
        recall: float | None = Option(None, "--recall", help=f"Recall for {flag} precision."),
    ) -> dict[str, float | None]:
        return {"fpr": fpr, "baseline": baseline, "base_rate": base_rate, "recall": recall}

    return given


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


def comma_names(text: str | None) -> tuple[str, ...] | None:
    """``"a, b,"`` -> ``("a", "b")``: a comma-separated list of names (``--drop``, ...); None passes."""
    return None if text is None else tuple(c.strip() for c in str(text).split(",") if c.strip())


def comma_floats(text: str, flag: str) -> tuple[float, ...]:
    """``"0.001,0.01"`` -> floats; a base rate may also be written ``"1:10"`` (members : non-members)."""
    from mipkit._validation import MipkitValueError

    values = []
    for item in (v.strip() for v in str(text).split(",")):
        if not item:
            continue
        try:
            if ":" in item:
                members, others = (float(x) for x in item.split(":"))
                values.append(members / (members + others))
            else:
                values.append(float(item))
        except ValueError:
            raise MipkitValueError(f"{flag} must be comma-separated numbers. Got {text!r}.") from None
    return tuple(values)


def config_from_flags(config: type[T], flags: Mapping[str, Any] | None = None, **values: Any) -> T:
    """A workflow's configuration from a command's flags: each field named like a flag takes its value.

    Parameters
    ----------
    config : type
        The configuration dataclass (``AuditConfig``, ...).
    flags : mapping, optional
        Flag values by parameter name; default: those of the command running (its click context's
        ``params``). Those that are no field of ``config`` are left out.
    **values
        Fields whose value is not a flag's as given: parsed flags (``drop=comma_names(drop)``), flags of
        another name (``n_models=models``). They take precedence over ``flags``.

    Returns
    -------
    config
        ``config(**fields)``; a field that is neither a flag nor in ``values`` keeps its default.
    """
    import dataclasses

    if flags is None:
        from typer._click.globals import get_current_context

        flags = get_current_context().params
    fields = {f.name for f in dataclasses.fields(config)}  # type: ignore[arg-type]
    given = {key: value for key, value in flags.items() if key in fields and key not in values}
    return config(**given, **values)


def echo_json(payload: Any) -> None:
    """Print ``payload`` as one JSON object on stdout (``--json``), NumPy values and paths made plain."""
    from mipkit.report.results import to_jsonable

    typer.echo(json.dumps(to_jsonable(payload)))


def finding(message: str) -> typer.Exit:
    """Say ``mipkit: finding: <message>`` on stderr; return the exit to raise (:data:`EXIT_FINDING`)."""
    typer.echo(f"mipkit: finding: {message}", err=True)
    return typer.Exit(EXIT_FINDING)


def finish_audit(
    result: Any,
    run_dir: Path,
    as_json: bool,
    view: Callable[[dict, Path], dict],
    show: Callable[[dict, Path], None],
) -> None:
    """The end of an audit command: print the results, then exit 1 on a finding (the verdict's status).

    Parameters
    ----------
    result
        The workflow's result (``to_dict()`` and ``verdict``).
    run_dir : Path
        The run folder.
    as_json : bool
        ``--json``: print ``view(results, run_dir)`` as one JSON object; otherwise ``show(results, run_dir)``.
    view, show : callable
        The command's JSON view and its human-readable summary.
    """
    results = result.to_dict()
    if as_json:
        echo_json(view(results, run_dir))
    else:
        show(results, run_dir)
    verdict = result.verdict or {}
    if verdict.get("status") == "finding":
        raise finding(verdict.get("text", ""))


def parse_params(text: str | None, flag: str = "--params") -> dict:
    """``--params`` JSON text -> dict of constructor arguments, with a one-line error (the bounds of
    :mod:`mipkit.data.json_input`: depth, size, no NaN or overflowing numbers)."""
    from mipkit._validation import MipkitValueError
    from mipkit.data.json_input import parse_json_text

    if text is None or not text.strip():
        return {}
    value = parse_json_text(text, flag)
    if not isinstance(value, dict):
        raise MipkitValueError(f"{flag} must be a JSON object such as '{{\"C\": 0.1}}'. Got {text[:80]!r}.")
    return value
