"""``mipkit calibrate``: the smallest noise that meets a risk target.

``mipkit calibrate --mechanism gaussian|laplace|dpsgd [--sample-rate Q --steps T] [--sensitivity L]
--target eta|advantage|tpr-at-fpr|success|precision|epsilon --value V [--fpr A] [--baseline B]
[--base-rate P --recall R] [--delta D] [--json]``. Prints a table and a plain sentence, or with
``--json`` one object: :meth:`mipkit.accounting.calibrate.Calibration.to_dict`.
"""

from __future__ import annotations

import json

import typer

from mipkit._validation import MipkitValueError, check_choice
from mipkit.accounting.calibrate import MECHANISMS, TARGETS, Calibration, calibrate

OWNER = "mipkit calibrate"

#: Which options each target uses (any other target option is refused, so nothing is silently ignored).
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
}
_NOISE_NAMES = {
    "gaussian": "Gaussian noise standard deviation sigma",
    "laplace": "Laplace scale b",
    "dpsgd": "DP-SGD noise multiplier",
}


def _check_options(mechanism: str, target: str, given: dict) -> None:
    """Refuse options that do not apply to the mechanism or the target, and missing ones."""
    mech = check_choice("mechanism", mechanism, MECHANISMS, owner=OWNER)
    tgt = check_choice("target", target, TARGETS, owner=OWNER)
    for name in ("sample_rate", "steps"):
        if mech == "dpsgd" and given.get(name) is None:
            raise MipkitValueError(f"--mechanism dpsgd needs {_FLAGS[name]}.")
        if mech != "dpsgd" and given.get(name) is not None:
            raise MipkitValueError(f"{_FLAGS[name]} applies only to --mechanism dpsgd.")
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


def _risk_phrase(result: Calibration) -> str:
    d = result.details
    t, v = result.target, result.target_value
    if t == "eta":
        return f"no attacker in the membership game is right more than {100 * (0.5 + v):.4g}% of the time"
    if t == "advantage":
        return f"no membership test has TPR - FPR above {v:g}"
    if t == "tpr-at-fpr":
        return f"at FPR {d['fpr']:g} no membership test finds more than {100 * v:.4g}% of the members"
    if t == "success":
        return (
            f"an attack that succeeds {100 * d['baseline']:.4g}% of the time without the release "
            "(re-identification, attribute inference, reconstruction) succeeds at most "
            f"{100 * v:.4g}% with it"
        )
    if t == "precision":
        return (
            f"when 1 in {1 / d['base_rate']:.4g} of the people checked is a member, 'member' claims that "
            f"find {100 * d['recall']:.4g}% of the members are right at most {100 * v:.4g}% of the time"
        )
    return f"the release is ({v:g}, {d['delta']:g})-DP"


def _risk(x: float, target: float) -> str:
    """A risk with 6 digits, or as ``target - gap`` when 6 digits would round it up to the target."""
    text = f"{x:.6g}"
    if x < target <= float(text):
        return f"{target:g} - {target - x:.1e}"
    return text


def sentence(result: Calibration) -> str:
    """One plain sentence saying what to use and what it guarantees."""
    noise = _NOISE_NAMES[result.mechanism]
    extra = ""
    if result.mechanism == "dpsgd":
        extra = f" (sampling rate {result.details['sample_rate']:g}, {result.details['steps']} steps)"
    elif "sensitivity" in result.details:
        extra = f" (sensitivity {result.details['sensitivity']:g})"
    certified = _risk(result.achieved_fine, result.target_value)
    return (
        f"Use {noise} = {result.noise:.6g}{extra}: then {_risk_phrase(result)} "
        f"(certified {certified} for a target of {result.target_value:g})."
    )


def _print_human(result: Calibration) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"Calibration: {result.mechanism}, target {result.target}", title_justify="left")
    table.add_column("Quantity", style="bold")
    table.add_column("Value", justify="right")
    table.add_row(f"Calibrated {result.parameter_name}", f"{result.noise:.6g}")
    table.add_row(f"Target ({result.target})", f"{result.target_value:g}")
    for key in ("fpr", "baseline", "base_rate", "recall", "delta", "sensitivity", "sample_rate", "steps"):
        if key in result.details:
            table.add_row(f"  {key}", f"{result.details[key]:g}")
    table.add_row("Risk at this noise (search)", _risk(result.achieved, result.target_value))
    table.add_row("Risk re-checked (fine / exact)", _risk(result.achieved_fine, result.target_value))
    table.add_row("Converged", "yes" if result.converged else "no")
    table.add_row("Time", f"{result.seconds:.2f} s")
    console.print(table)
    console.print(sentence(result), highlight=False)


def calibrate_command(
    mechanism: str = typer.Option(..., "--mechanism", help="gaussian, laplace or dpsgd."),
    target: str = typer.Option(
        ..., "--target", help="eta, advantage, tpr-at-fpr, success, precision or epsilon."
    ),
    value: float = typer.Option(..., "--value", help="The risk level not to exceed."),
    sample_rate: float | None = typer.Option(None, "--sample-rate", help="DP-SGD Poisson sampling rate."),
    steps: int | None = typer.Option(None, "--steps", help="DP-SGD number of steps."),
    sensitivity: float | None = typer.Option(
        None, "--sensitivity", help="Query sensitivity (l2 Gaussian, l1 Laplace); default 1."
    ),
    fpr: float | None = typer.Option(None, "--fpr", help="FPR for --target tpr-at-fpr."),
    baseline: float | None = typer.Option(None, "--baseline", help="Baseline success for --target success."),
    base_rate: float | None = typer.Option(
        None, "--base-rate", help="Member fraction for --target precision."
    ),
    recall: float | None = typer.Option(None, "--recall", help="Recall for --target precision."),
    delta: float | None = typer.Option(None, "--delta", help="Delta for --target epsilon."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Calibrate: find the smallest noise whose certified risk meets a target."""
    given = {
        "sample_rate": sample_rate,
        "steps": steps,
        "sensitivity": sensitivity,
        "fpr": fpr,
        "baseline": baseline,
        "base_rate": base_rate,
        "recall": recall,
        "delta": delta,
    }
    _check_options(mechanism, target, given)
    if mechanism == "dpsgd" and not json_output:
        from rich.console import Console

        with Console(stderr=True).status("Calibrating the DP-SGD noise multiplier..."):
            result = calibrate(mechanism, target, value, **given)
    else:
        result = calibrate(mechanism, target, value, **given)
    if json_output:
        typer.echo(json.dumps(result.to_dict(), allow_nan=False))
    else:
        _print_human(result)


def register(app: typer.Typer) -> None:
    """Add ``mipkit calibrate`` to the app."""
    app.command("calibrate")(calibrate_command)
