"""``mipkit train-private``: train a model with DP-SGD to a risk target and keep its certificate.

``mipkit train-private --data T.csv --target LABEL [--domain D.json] [--dropna] (--target-risk NAME
--value V [--fpr A | --baseline B | --base-rate P --recall R] | --noise-multiplier Z) [--epochs E]
[--batch-size B] [--max-grad-norm C] [--hidden 64] [--seed S] [--noise-seed N] [--id-column ID] [--audit]
[--record-split] [--out DIR] [--json]``. With ``--record-split`` the run folder records which rows (and ids)
trained the model (``split.parquet``, as private as the data);
``--audit`` audits the fitted model against its certificate, its training rows against the held-out rows
(which stand in for non-members).
The work is :func:`mipkit.workflows.train_private.train_private`; this module turns the flags into its
data (:class:`~mipkit.workflows.train_private.TrainingTable`) and configuration (the risk-target flags are
those of ``mipkit calibrate``) and prints the result's paragraph and tables, or one JSON object. The command
is long only by its option declarations. A non-numeric feature needs ``--domain`` (its public levels,
:mod:`mipkit.data.domain`; ``mipkit domain`` writes a template): levels read from the rows would reveal the
training rows. The noise and the batches come from OS entropy unless ``--noise-seed`` is given.
"""

from __future__ import annotations

from typing import Any

import typer

from mipkit.cli.options import (
    DataOption,
    DomainOption,
    DropnaOption,
    DropOption,
    EncodeOption,
    JsonOption,
    NoiseSeedOption,
    QuietOption,
    RiskValueOption,
    RunFolderOption,
    TargetOption,
    comma_names,
    config_from_flags,
    echo_json,
    target_parameters,
    with_options,
)

#: How the messages name the privacy's parts: the flags.
PRIVACY_FLAGS = {
    "target": "--target-risk",
    "value": "--value",
    "noise_multiplier": "--noise-multiplier",
    "fpr": "--fpr",
    "baseline": "--baseline",
    "base_rate": "--base-rate",
    "recall": "--recall",
}


def _hidden(text: str) -> tuple[int, ...]:
    """``"64"`` or ``"64,32"`` -> widths; ``""`` or ``"0"`` -> ``()`` (logistic regression)."""
    from mipkit._validation import MipkitValueError
    from mipkit.cli.options import check_count

    items = [t.strip() for t in str(text).split(",") if t.strip()]
    try:
        widths = tuple(int(t) for t in items)
    except ValueError:
        raise MipkitValueError(
            f"--hidden must be comma-separated layer widths such as 64,32. Got {text!r}."
        ) from None
    if widths == (0,):
        return ()
    for w in widths:
        check_count("--hidden", w, kind="width", minimum=None)
    return widths


def register(app: typer.Typer) -> None:
    """Add ``mipkit train-private`` to the app (its command is long only by its option declarations)."""

    @app.command("train-private")
    @with_options("target_params", target_parameters("--target-risk"))
    def train_private_command(
        data: DataOption = ...,
        target: TargetOption = ...,
        encode: EncodeOption = "none",
        dropna: DropnaOption = False,
        drop: DropOption = None,
        domain: DomainOption = None,
        target_risk: str = typer.Option(
            None, "--target-risk", help="eta, advantage, tpr-at-fpr, success, precision or epsilon."
        ),
        value: RiskValueOption = None,
        target_params: Any = None,
        delta: float = typer.Option(
            1e-5, "--delta", help="Delta of the certified epsilon (and of an epsilon target)."
        ),
        noise_multiplier: float = typer.Option(
            None, "--noise-multiplier", help="DP-SGD noise multiplier instead of a risk target."
        ),
        epochs: int = typer.Option(5, "--epochs", help="Passes over the data."),
        batch_size: int = typer.Option(256, "--batch-size", help="Expected batch size (Poisson sampling)."),
        max_grad_norm: float = typer.Option(1.0, "--max-grad-norm", help="Per-sample clipping norm."),
        learning_rate: float = typer.Option(0.5, "--learning-rate", help="SGD step size."),
        hidden: str = typer.Option(
            "64", "--hidden", help="Hidden layer widths, e.g. 64,32; 0: logistic regression."
        ),
        neighbours: str = typer.Option(
            "replace_one", "--neighbours", help="replace_one (the audit's game) or add_remove."
        ),
        test_size: float = typer.Option(
            0.2, "--test-size", help="Share of rows held out for the test accuracy."
        ),
        scale: bool = typer.Option(
            True, "--scale/--no-scale", help="Standardise features with the held-out rows' mean and sd."
        ),
        seed: int = typer.Option(0, "--seed", help="Random seed (initial weights; the split is secret)."),
        noise_seed: NoiseSeedOption = None,
        id_column: str = typer.Option(
            None, "--id-column", help="Column of unique record ids: not a feature; named in split.parquet."
        ),
        record_split: bool = typer.Option(
            False, "--record-split", help="Write split.parquet: which rows trained the model (private)."
        ),
        audit: bool = typer.Option(
            False, "--audit", help="Audit the model against its certificate: training vs held-out rows."
        ),
        out: RunFolderOption = "runs/train-private",
        as_json: JsonOption = False,
        quiet: QuietOption = False,
    ) -> None:
        """Train with DP-SGD to a risk target; writes the model and its certificate."""
        from mipkit.cli.options import check_count, check_seed, hold_run_folder
        from mipkit.workflows.train_private import TrainingTable, TrainPrivateConfig, train_private
        from mipkit.workflows.train_private.config import privacy_from_parts

        check_count("--epochs", epochs, kind="steps", minimum=None)
        check_count("--batch-size", batch_size, kind="rows")
        check_seed(seed)
        risk_target = privacy_from_parts(
            target_risk, value, target_params(), noise_multiplier, delta=delta, names=PRIVACY_FLAGS
        )
        cfg = config_from_flags(  # the flags named like TrainPrivateConfig's fields, and these
            TrainPrivateConfig, drop=comma_names(drop) or (), risk_target=risk_target, hidden=_hidden(hidden)
        )  # checked, the target and the privacy settings included, before the table is read
        table = TrainingTable(data, target, domain=domain, id_column=id_column)
        hold_run_folder(out)  # checked, and locked until the command ends
        if as_json:
            echo_json(train_private(table, cfg, out=out).to_dict())
            return
        from rich.console import Console

        from mipkit.cli._progress import ProgressBar
        from mipkit.cli._tables import print_tables

        with ProgressBar(enabled=not quiet) as progress:  # the bar starts at the first step
            result = train_private(table, cfg, out=out, progress=progress)
        typer.echo(result.summary())
        typer.echo("")
        print_tables(result.tables(), Console())
