"""``mipkit risk``: turn a privacy guarantee into the risks people can act on.

One mechanism per call: ``--epsilon E [--delta D]``, ``--mu M``, ``--rho R`` (zCDP),
``--gaussian-sigma S [--sensitivity L]``, ``--laplace-scale B [--sensitivity L]`` or ``--noise-multiplier Z
--sample-rate Q --steps T`` (or, in Opacus's terms, ``--noise-multiplier Z --batch-size B --epochs E
--n-records N``); ``--neighbours`` states the relation the guarantee holds for (default ``add_remove``; the
premise is printed with every answer). The flags become a :class:`~mipkit.workflows.risk.Guarantee` and a
:class:`~mipkit.workflows.risk.RiskConfig`, and :func:`mipkit.workflows.risk.risk` does the work. Prints
the result's paragraph and table, or with ``--json`` one object (:meth:`RiskResult.to_dict`: the risk
profile, each risk with ``<key>_lower`` and ``relation_of``, plus ``mechanism``). The ``risk`` command is
long only by its option declarations.
"""

from __future__ import annotations

from pathlib import Path

import typer

from mipkit.cli.dpsgd_flags import BatchSizeOption, EpochsOption, NRecordsOption
from mipkit.cli.options import JsonTableOption, SampleRateOption, StepsOption


# long only by its option declarations: the body maps the flags to a Guarantee and a RiskConfig
def risk(
    epsilon: float | None = typer.Option(None, "--epsilon", help="(epsilon, delta)-DP guarantee: epsilon."),
    delta: float | None = typer.Option(
        None, "--delta", help="With --epsilon: the DP delta. Otherwise: report the epsilon at this delta."
    ),
    mu: float | None = typer.Option(None, "--mu", help="mu-GDP guarantee."),
    rho: float | None = typer.Option(None, "--rho", help="rho-zCDP guarantee."),
    gaussian_sigma: float | None = typer.Option(
        None, "--gaussian-sigma", help="Gaussian mechanism noise std."
    ),
    laplace_scale: float | None = typer.Option(None, "--laplace-scale", help="Laplace mechanism scale b."),
    sensitivity: float | None = typer.Option(
        None,
        "--sensitivity",
        help="Query sensitivity for --gaussian-sigma (l2) / --laplace-scale (l1); default 1.",
    ),
    noise_multiplier: float | None = typer.Option(
        None, "--noise-multiplier", help="DP-SGD noise multiplier."
    ),
    sample_rate: SampleRateOption = None,
    steps: StepsOption = None,
    batch_size: BatchSizeOption = None,
    epochs: EpochsOption = None,
    n_records: NRecordsOption = None,
    fpr: list[float] | None = typer.Option(None, "--fpr", help="FPR to report TPR at (repeatable)."),
    baseline: list[float] | None = typer.Option(
        None, "--baseline", help="Baseline success to report attack success over (repeatable)."
    ),
    base_rate: list[float] | None = typer.Option(
        None, "--base-rate", help="Member fraction to report precision at (repeatable)."
    ),
    neighbours: str = typer.Option(
        "add_remove",
        "--neighbours",
        help="Relation the guarantee holds for: add_remove (one record added or removed) or replace_one.",
    ),
    tolerance: float = typer.Option(
        1e-4,
        "--tolerance",
        help="Largest gap between the two sides of a DP-SGD risk (PLD accounting); an epsilon's two sides "
        "are refined to 0.1% relative.",
    ),
    json_output: JsonTableOption = False,
    plot: Path | None = typer.Option(None, "--plot", help="Write the trade-off / precision figure (PNG)."),
) -> None:
    """Certify: turn a DP / GDP / Laplace / DP-SGD guarantee into membership, re-identification and
    attribute-inference risk."""
    from mipkit.cli.options import PLOT_SUFFIXES, check_count, check_out_file, config_from_flags
    from mipkit.workflows.risk import Guarantee, RiskConfig
    from mipkit.workflows.risk import risk as run_risk

    check_count("--steps", steps, kind="steps", minimum=None)  # before the accountant allocates anything
    check_count("--epochs", epochs, kind="steps", minimum=None)
    check_count("--batch-size", batch_size, kind="rows", minimum=None)
    check_count("--n-records", n_records, kind="rows", minimum=None)
    plot = None if plot is None else check_out_file(plot, "--plot", suffixes=PLOT_SUFFIXES)
    config = config_from_flags(
        RiskConfig,
        fprs=fpr or RiskConfig.fprs,
        baselines=baseline or RiskConfig.baselines,
        base_rates=base_rate or RiskConfig.base_rates,
    )
    data = config_from_flags(Guarantee)
    if batch_size is not None:  # the steps the schedule makes, before the accountant allocates them
        steps_made = data.mechanism().steps  # type: ignore[attr-defined]
        check_count("--epochs x ceil(--n-records / --batch-size) (the steps)", steps_made, kind="steps")
    result = run_risk(data, config)
    if plot is not None:
        result.write_figure(plot)
        typer.echo(f"Figure written to {plot}", err=json_output)
    from mipkit.cli._tables import print_answer

    print_answer(result, json_output)


def register(app: typer.Typer) -> None:
    """Add ``mipkit risk`` to the app."""
    app.command("risk")(risk)
