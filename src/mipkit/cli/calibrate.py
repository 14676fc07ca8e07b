"""``mipkit calibrate``: the smallest noise that meets a risk target.

``mipkit calibrate --mechanism gaussian|laplace|dpsgd [--sample-rate Q --steps T | --batch-size B --epochs E
--n-records N] [--sensitivity L]
--target eta|advantage|tpr-at-fpr|success|precision|epsilon --value V [--fpr A] [--baseline B]
[--base-rate P --recall R] [--delta D] [--neighbours add_remove|replace_one] [--tolerance F] [--json]``.
The flags become a mechanism family and a target (:func:`mipkit.accounting.calibrate`); prints a plain
paragraph (:func:`mipkit.report.dpia.calibration_paragraph`) and then a table, or with ``--json`` one object:
:meth:`mipkit.accounting.calibration.Calibration.to_dict` (``"mechanism"``: the calibrated record;
``"noise_lower"``, ``"minimal"``, ``"tolerance"``: how close to the least safe noise it is proved to be).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.cli.dpsgd_flags import SCHEDULE_HELP, BatchSizeOption, EpochsOption, NRecordsOption
from mipkit.cli.options import (
    JsonTableOption,
    RiskValueOption,
    SampleRateOption,
    StepsOption,
    target_parameters,
    with_options,
)

if TYPE_CHECKING:
    from mipkit.accounting.calibration import Calibration, MechanismFamily

OWNER = "mipkit calibrate"
#: ``--mechanism`` choices (each a family of :mod:`mipkit.accounting.calibration`).
MECHANISMS: tuple[str, ...] = ("gaussian", "laplace", "dpsgd")

#: Which options each target uses (any other target option is refused, so nothing is silently ignored);
#: the parameters of the target classes of :mod:`mipkit.accounting.targets`.
TARGET_OPTIONS: dict[str, tuple[str, ...]] = {
    "eta": (),
    "advantage": (),
    "tpr-at-fpr": ("fpr",),
    "success": ("baseline",),
    "precision": ("base_rate", "recall"),
    "epsilon": ("delta",),
}
_FLAGS = {
    "fpr": "--fpr",
    "baseline": "--baseline",
    "base_rate": "--base-rate",
    "recall": "--recall",
    "delta": "--delta",
    "sample_rate": "--sample-rate",
    "steps": "--steps",
    "sensitivity": "--sensitivity",
    "batch_size": "--batch-size",
    "epochs": "--epochs",
    "n_records": "--n-records",
}
_SCHEDULE = ("sample_rate", "steps", "batch_size", "epochs", "n_records")


def _check_options(mechanism: str, target: str, given: dict) -> None:
    """Refuse options that do not apply to the mechanism or the target, and missing ones; a DP-SGD schedule
    given as batch size, epochs and records becomes ``given["sample_rate"]`` and ``given["steps"]``."""
    mech = check_choice("mechanism", mechanism, MECHANISMS, owner=OWNER)
    tgt = check_choice("target", target, tuple(TARGET_OPTIONS), owner=OWNER)
    for name in _SCHEDULE:
        if mech != "dpsgd" and given.get(name) is not None:
            raise MipkitValueError(f"{_FLAGS[name]} applies only to --mechanism dpsgd.")
    if mech == "dpsgd":
        from mipkit.cli.dpsgd_flags import dpsgd_sampling

        given["sample_rate"], given["steps"], _ = dpsgd_sampling(
            *(given.get(k) for k in _SCHEDULE), owner=OWNER
        )
        for name in ("sample_rate", "steps"):
            if given.get(name) is None:
                raise MipkitValueError(f"--mechanism dpsgd needs {SCHEDULE_HELP}; missing {_FLAGS[name]}.")
    if mech == "dpsgd" and given.get("sensitivity") is not None:
        raise MipkitValueError(
            "--sensitivity does not apply to --mechanism dpsgd (the clipping norm is the sensitivity; "
            "the noise multiplier is in its units)."
        )
    wanted = TARGET_OPTIONS[tgt]
    for name in wanted:
        if given.get(name) is None:
            raise MipkitValueError(f"--target {tgt} needs {_FLAGS[name]}.")
    for name in ("fpr", "baseline", "base_rate", "recall", "delta"):
        if name not in wanted and given.get(name) is not None:
            users = [t for t, opts in TARGET_OPTIONS.items() if name in opts]
            raise MipkitValueError(f"{_FLAGS[name]} applies only to --target {' / '.join(users)}.")


def family_from_flags(mechanism: str, given: dict[str, Any]) -> MechanismFamily:
    """The mechanism family of ``--mechanism`` with its fixed parameters (checked by
    :func:`_check_options` first)."""
    from mipkit.accounting.calibration import dpsgd_family, gaussian_family, laplace_family

    rel = given.get("neighbours") or "add_remove"
    if mechanism == "dpsgd":
        return dpsgd_family(given["sample_rate"], given["steps"], neighbours=rel)
    sens = 1.0 if given.get("sensitivity") is None else given["sensitivity"]
    family = gaussian_family if mechanism == "gaussian" else laplace_family
    return family(sens, neighbours=rel)


def _print_human(result: Calibration, mechanism: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from mipkit.report.dpia import calibration_paragraph
    from mipkit.report.plain_language import format_risk

    console = Console()
    console.print(calibration_paragraph(result), highlight=False)
    console.print()
    table = Table(title=f"Calibration: {mechanism}, target {result.target}", title_justify="left")
    table.add_column("Quantity", style="bold")
    table.add_column("Value", justify="right")
    table.add_row(f"Calibrated {result.parameter_name}", f"{result.noise:.6g}")
    table.add_row(f"Target ({result.target})", f"{result.target_value:g}")
    for key in ("fpr", "baseline", "base_rate", "recall", "delta", "sensitivity", "sample_rate", "steps"):
        if key in result.details:
            table.add_row(f"  {key}", f"{result.details[key]:g}")
    table.add_row("Neighbours of the risk", str(result.neighbours))
    table.add_row("Risk at this noise (certified)", format_risk(result.achieved_fine, result.target_value))
    if result.achieved_lower is not None and result.achieved_lower != result.achieved_fine:
        table.add_row("Risk at this noise (lower end)", f"{result.achieved_lower:.6g}")
    if result.tolerance is not None:
        proved = "yes" if result.minimal else "no (cost cap reached)"
        table.add_row(f"Least safe noise, within {100 * result.tolerance:.2g}%", proved)
        if result.noise_lower is not None:
            table.add_row("Unsafe below", f"{result.noise_lower:.6g}")
    table.add_row("Converged", "yes" if result.converged else "no")
    table.add_row("Time", f"{result.seconds:.2f} s")
    console.print(table)


@with_options("target_params", target_parameters("--target"))
def calibrate_command(
    mechanism: str = typer.Option(..., "--mechanism", help="gaussian, laplace or dpsgd."),
    target: str = typer.Option(
        ..., "--target", help="eta, advantage, tpr-at-fpr, success, precision or epsilon."
    ),
    value: RiskValueOption = ...,
    sample_rate: SampleRateOption = None,
    steps: StepsOption = None,
    batch_size: BatchSizeOption = None,
    epochs: EpochsOption = None,
    n_records: NRecordsOption = None,
    sensitivity: float | None = typer.Option(
        None, "--sensitivity", help="Query sensitivity (l2 Gaussian, l1 Laplace); default 1."
    ),
    target_params: Any = None,
    delta: float | None = typer.Option(None, "--delta", help="Delta for --target epsilon."),
    neighbours: str = typer.Option(
        "add_remove",
        "--neighbours",
        help="Relation the sensitivity / accounting is for: add_remove or replace_one (eta always uses "
        "replace_one, the membership game's).",
    ),
    tolerance: float = typer.Option(
        0.005, "--tolerance", help="DP-SGD: relative distance allowed to the least safe noise."
    ),
    json_output: JsonTableOption = False,
) -> None:
    """Calibrate: find the smallest noise whose certified risk meets a target."""
    from mipkit.cli.options import check_count

    check_count("--steps", steps, kind="steps", minimum=None)  # before the accountant allocates anything
    given = {
        "sample_rate": sample_rate,
        "steps": steps,
        "batch_size": batch_size,
        "epochs": epochs,
        "n_records": n_records,
        "sensitivity": sensitivity,
        **target_params(),  # fpr, baseline, base_rate, recall
        "delta": delta,
    }
    _check_options(mechanism, target, given)
    check_choice("neighbours", neighbours, ("add_remove", "replace_one"), owner=OWNER)
    tol = check_interval("tolerance", tolerance, 0.0, 0.5, owner=OWNER)
    given["neighbours"] = neighbours
    from mipkit.accounting.calibration import calibrate
    from mipkit.accounting.targets import target_from_dict

    risk_target = target_from_dict(
        {"name": target, "value": value, **{k: given[k] for k in TARGET_OPTIONS[target]}}
    )
    family = family_from_flags(mechanism, given)
    if mechanism == "dpsgd" and not json_output:
        from rich.console import Console

        with Console(stderr=True).status("Calibrating the DP-SGD noise multiplier..."):
            result = calibrate(family, risk_target, tolerance=tol)
    else:
        result = calibrate(family, risk_target, tolerance=tol)
    if json_output:
        typer.echo(json.dumps(result.to_dict(), allow_nan=False))
    else:
        _print_human(result, mechanism)


def register(app: typer.Typer) -> None:
    """Add ``mipkit calibrate`` to the app."""
    app.command("calibrate")(calibrate_command)
