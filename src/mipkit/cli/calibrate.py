"""``mipkit calibrate``: the smallest noise that meets a risk target.

``mipkit calibrate --mechanism gaussian|laplace|dpsgd [--sample-rate Q --steps T | --batch-size B --epochs E
--n-records N] [--sensitivity L]
--target eta|advantage|tpr-at-fpr|success|precision|epsilon --value V [--fpr A] [--baseline B]
[--base-rate P --recall R] [--delta D] [--neighbours add_remove|replace_one] [--tolerance F] [--json]``.
The flags become a :class:`~mipkit.workflows.calibrate.NoiseFamily` and a
:class:`~mipkit.workflows.calibrate.CalibrateConfig`, and :func:`mipkit.workflows.calibrate.calibrate` does
the work; prints the result's paragraph and table, or with ``--json`` one object
(:meth:`mipkit.accounting.calibration.Calibration.to_dict`: ``"mechanism"``, the calibrated record;
``"noise_lower"``, ``"minimal"``, ``"tolerance"``: how close to the least safe noise it is proved to be). The
command is long only by its option declarations.
"""

from __future__ import annotations

from typing import Any

import typer

from mipkit.cli.dpsgd_flags import BatchSizeOption, EpochsOption, NRecordsOption
from mipkit.cli.options import (
    JsonTableOption,
    RiskValueOption,
    SampleRateOption,
    StepsOption,
    target_parameters,
    with_options,
)

#: The flags of the risk target's parameters (``mipkit train-private`` names its target the same way).
TARGET_FLAGS = {
    "target": "--target",
    "value": "--value",
    "fpr": "--fpr",
    "baseline": "--baseline",
    "base_rate": "--base-rate",
    "recall": "--recall",
    "delta": "--delta",
}


# long only by its option declarations: the body maps the flags to a NoiseFamily and a CalibrateConfig
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
    from mipkit.cli.options import check_count, config_from_flags
    from mipkit.workflows.calibrate import CalibrateConfig, NoiseFamily, calibrate

    check_count("--steps", steps, kind="steps", minimum=None)  # before the accountant allocates anything
    check_count("--epochs", epochs, kind="steps", minimum=None)
    check_count("--batch-size", batch_size, kind="rows", minimum=None)
    check_count("--n-records", n_records, kind="rows", minimum=None)
    data = config_from_flags(NoiseFamily)
    if batch_size is not None:  # the steps the schedule makes, before the accountant allocates them
        steps_made = data.family().params["steps"]
        check_count("--epochs x ceil(--n-records / --batch-size) (the steps)", steps_made, kind="steps")
    config = config_from_flags(CalibrateConfig, **target_params())
    if mechanism == "dpsgd" and not json_output:
        from rich.console import Console

        with Console(stderr=True).status("Calibrating the DP-SGD noise multiplier..."):
            result = calibrate(data, config)
    else:
        result = calibrate(data, config)
    from mipkit.cli._tables import print_answer

    print_answer(result, json_output)


def register(app: typer.Typer) -> None:
    """Add ``mipkit calibrate`` to the app."""
    app.command("calibrate")(calibrate_command)
