"""``mipkit risk``: turn a privacy guarantee into the risks people can act on.

One mechanism per call: ``--epsilon E [--delta D]``, ``--mu M``, ``--rho R`` (zCDP),
``--gaussian-sigma S [--sensitivity L]``, ``--laplace-scale B [--sensitivity L]`` or ``--noise-multiplier Z
--sample-rate Q --steps T`` (or, in Opacus's terms, ``--noise-multiplier Z --batch-size B --epochs E
--n-records N``: :mod:`mipkit.cli.dpsgd_flags`); ``--neighbours`` states the relation the guarantee holds
for (default ``add_remove``; the premise is printed with every answer). The flags become a mechanism record
(:mod:`mipkit.accounting.mechanisms`) and :func:`~mipkit.accounting.tradeoff_curve` its curve, two-sided to
``--tolerance`` for DP-SGD. Prints a table (risk, relation, bound and, for a PLD, its lower end) and plain
sentences (:mod:`mipkit.report.plain_language`), or with ``--json`` one object:
:func:`mipkit.accounting.risk_profile` (each risk with ``<key>_lower`` and ``relation_of``) plus
``mechanism`` (the record's ``to_dict()``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mipkit._validation import MipkitValueError, check_choice, check_delta, check_interval
from mipkit.cli.dpsgd_flags import SCHEDULE_HELP, BatchSizeOption, EpochsOption, NRecordsOption
from mipkit.cli.options import JsonTableOption, SampleRateOption, StepsOption

if TYPE_CHECKING:  # the records import nothing heavy, but the package they live in may
    from mipkit.accounting.mechanisms import Mechanism

OWNER = "mipkit risk"
DEFAULT_FPRS = (0.001, 0.01, 0.1)
DEFAULT_BASE_RATES = (0.5, 1 / 11, 1 / 101, 1 / 1001)
MECHANISM_HELP = (
    "--epsilon [--delta], --mu, --rho, --gaussian-sigma [--sensitivity], --laplace-scale [--sensitivity], "
    f"or --noise-multiplier with {SCHEDULE_HELP}"
)


def mechanism_from_flags(
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    mu: float | None = None,
    gaussian_sigma: float | None = None,
    laplace_scale: float | None = None,
    sensitivity: float | None = None,
    noise_multiplier: float | None = None,
    sample_rate: float | None = None,
    steps: int | None = None,
    rho: float | None = None,
    neighbours: str = "add_remove",
    batch_size: int | None = None,
    epochs: int | None = None,
    n_records: int | None = None,
) -> tuple[Mechanism, float | None]:
    """The mechanism record of exactly one mechanism given by the ``mipkit risk`` flags.

    ``--epsilon E`` is ``PureDP(E)``, with ``--delta D`` ``ApproxDP(E, D)``; ``--mu`` is ``GDP``;
    ``--rho`` ``ZCDP``; ``--gaussian-sigma`` / ``--laplace-scale`` the Gaussian / Laplace mechanism
    (``--sensitivity``, default 1); the DP-SGD flags ``SubsampledGaussian`` (the schedule as sample rate
    and steps or as batch size, epochs and records, :func:`mipkit.cli.dpsgd_flags.dpsgd_sampling`). Every
    record states ``neighbours``. Returns ``(record, report_delta)``, the delta at which to report an epsilon
    (``None``: none asked for). Raises :class:`MipkitValueError` unless exactly one mechanism is given; the
    records validate their parameters.
    """
    from mipkit.accounting.mechanisms import (
        GDP,
        ZCDP,
        ApproxDP,
        GaussianMechanism,
        LaplaceMechanism,
        PureDP,
        SubsampledGaussian,
    )

    rel = {"neighbours": neighbours}
    dpsgd = {
        "--noise-multiplier": noise_multiplier,
        "--sample-rate": sample_rate,
        "--steps": steps,
        "--batch-size": batch_size,
        "--epochs": epochs,
        "--n-records": n_records,
    }
    sgd_flag = next((flag for flag, v in dpsgd.items() if v is not None), "--noise-multiplier")
    given = {
        "--epsilon": epsilon is not None,
        "--mu": mu is not None,
        "--rho": rho is not None,
        "--gaussian-sigma": gaussian_sigma is not None,
        "--laplace-scale": laplace_scale is not None,
        sgd_flag: any(v is not None for v in dpsgd.values()),
    }
    chosen = [name for name, on in given.items() if on]
    if not chosen:
        raise MipkitValueError(f"Give one mechanism: {MECHANISM_HELP}.")
    if len(chosen) > 1:
        raise MipkitValueError(
            f"Give exactly one mechanism; got {' and '.join(chosen)}. Use {MECHANISM_HELP}."
        )
    kind = chosen[0]
    if sensitivity is not None and kind not in ("--gaussian-sigma", "--laplace-scale"):
        raise MipkitValueError("--sensitivity applies only to --gaussian-sigma and --laplace-scale.")
    sens = 1.0 if sensitivity is None else sensitivity
    report_delta = None if delta is None else check_delta(delta, owner=OWNER)
    if kind == "--epsilon":
        record = PureDP(epsilon, **rel) if report_delta is None else ApproxDP(epsilon, report_delta, **rel)
        return record, 0.0 if report_delta is None else report_delta
    if kind == "--mu":
        return GDP(mu, **rel), report_delta
    if kind == "--rho":
        return ZCDP(rho, **rel), report_delta
    if kind == "--gaussian-sigma":
        return GaussianMechanism(gaussian_sigma, sens, **rel), report_delta
    if kind == "--laplace-scale":
        return LaplaceMechanism(laplace_scale, sens, **rel), report_delta
    from mipkit.cli.dpsgd_flags import dpsgd_sampling

    sample_rate, steps, _ = dpsgd_sampling(sample_rate, steps, batch_size, epochs, n_records, owner=OWNER)
    if noise_multiplier is None:
        raise MipkitValueError(f"DP-SGD needs --noise-multiplier with {SCHEDULE_HELP}.")
    missing = [flag for flag, v in (("--sample-rate", sample_rate), ("--steps", steps)) if v is None]
    if missing:
        raise MipkitValueError(
            f"DP-SGD needs --noise-multiplier with {SCHEDULE_HELP}; missing {', '.join(missing)}."
        )
    return SubsampledGaussian(noise_multiplier, sample_rate, steps, **rel), report_delta


def _merged(label: str, parts: list[tuple[str, float | None, float | None]], fmt: str) -> list:
    """Runs of equal values (as printed) in ``parts`` (``(key, bound, lower)``) as one row each."""
    out: list[tuple[str, float | None, float | None]] = []
    runs: list[list[tuple[str, float | None, float | None]]] = []
    show = lambda v: None if v is None else format(v, fmt)  # noqa: E731
    for part in parts:
        if runs and (show(runs[-1][-1][1]), show(runs[-1][-1][2])) == (show(part[1]), show(part[2])):
            runs[-1].append(part)
        else:
            runs.append([part])
    for run in runs:
        keys = run[0][0] if len(run) == 1 else f"{run[0][0]} to {run[-1][0]}"
        out.append((label.format(keys), run[0][1], run[0][2]))
    return out


def _rows(profile: dict, mechanism: dict) -> list[tuple[str, str, float | None, float | None, str]]:
    """``(label, relation, bound, lower, format)`` for every row of the table, each figure once.

    The game's accuracy and its eta are one row; a success bound at a baseline equal to a reported FPR is
    the TPR at that FPR (one row); precisions equal over a run of recalls are one row; the epsilon of a
    guarantee given as an epsilon is not repeated.
    """
    rel = profile["relations"]
    mip, mem = rel["mip_game"], rel["membership"]
    rows = [
        (f"MIP eta (accuracy {profile['accuracy']:.4f})", mip, profile["eta"], profile["eta_lower"], ".4f"),
        ("Advantage (max TPR - FPR)", mem, profile["advantage"], profile["advantage_lower"], ".4f"),
    ]  # fmt: skip
    success = dict(profile["success_bound"])
    for key, v in profile["tpr_at_fpr"].items():
        label = f"TPR at FPR {key}"
        if key in success:
            success.pop(key)
            label += f" = success from {key}"
        rows.append((label, mem, v, profile["tpr_at_fpr_lower"][key], ".4g"))
    for key, v in success.items():
        rows.append((f"Success from baseline {key}", mem, v, profile["success_bound_lower"][key], ".4g"))
    for key, by_recall in profile["precision_at_base_rate"].items():
        low = profile["precision_at_base_rate_lower"][key]
        parts = [(r, p, low[r]) for r, p in by_recall.items()]
        label = f"Precision, 1 in {1 / float(key):.4g}, recall {{}}"
        rows += [(lab, mem, p, lo, ".4g") for lab, p, lo in _merged(label, parts, ".4g")]
    if "epsilon" in profile and mechanism.get("name") not in ("pure_dp", "approx_dp"):
        rows.append(
            (
                f"Epsilon at delta {profile['delta']:g}",
                mem,
                profile["epsilon"],
                profile["epsilon_lower"],
                ".4g",
            )
        )
    return rows


def _print_human(profile: dict, mechanism: dict) -> None:
    """The answer: one paragraph for a DPIA first, then the table, then what its relations mean."""
    from rich.console import Console
    from rich.table import Table

    from mipkit.report.dpia import risk_paragraph
    from mipkit.report.plain_language import relation_phrase

    console = Console()
    console.print(risk_paragraph(profile, mechanism), highlight=False)
    console.print()
    # the record's parameters, then what the curve derives from them (mu of a Gaussian, epsilon of a Laplace)
    derived = {
        k: profile["curve"][k] for k in ("mu", "epsilon") if k in profile["curve"] and k not in mechanism
    }
    shown = {k: v for k, v in mechanism.items() if k not in ("name", "neighbours")} | derived
    params = ", ".join(f"{k}={v:g}" for k, v in shown.items() if isinstance(v, (int, float)))
    title = f"Certified risk: {mechanism['name']} ({params}; {mechanism['neighbours']} neighbours)"
    table = Table(title=title, title_justify="left")
    table.add_column("Risk", style="bold")
    table.add_column("Neighbours")
    table.add_column("Bound", justify="right")
    two_sided = not profile["exact"]
    if two_sided:
        table.add_column("Lower", justify="right")
    for label, rel, bound, lower, fmt in _rows(profile, mechanism):
        cells = [label, rel, "none (infinite)" if bound is None else format(bound, fmt)]
        if two_sided:
            cells.append("none (infinite)" if lower is None else format(lower, fmt))
        table.add_row(*cells)
    console.print(table)
    rels = {profile["relations"]["mip_game"], profile["relations"]["membership"]}
    for rel in sorted(rels, reverse=True):
        console.print(f"{rel} rows: {relation_phrase(rel)}.", highlight=False)
    if two_sided:
        console.print(
            "Bound and Lower enclose the exact value (privacy-loss distribution accounting); the lower ends "
            "are shown beside them.",
            highlight=False,
        )


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
    from mipkit.cli.options import PLOT_SUFFIXES, check_count, check_out_file

    check_count("--steps", steps, kind="steps", minimum=None)  # before the accountant allocates anything
    plot = None if plot is None else check_out_file(plot, "--plot", suffixes=PLOT_SUFFIXES)
    fprs = tuple(fpr) if fpr else DEFAULT_FPRS
    for a in fprs:
        check_interval("fpr", a, 0.0, 1.0, owner=OWNER)
    check_choice("neighbours", neighbours, ("add_remove", "replace_one"), owner=OWNER)
    tol = check_interval("tolerance", tolerance, 0.0, 1.0, owner=OWNER)
    from mipkit.accounting.curves import tradeoff_curve
    from mipkit.accounting.profile import risk_profile
    from mipkit.accounting.risk import DEFAULT_BASELINES, DEFAULT_RECALLS

    baselines = tuple(baseline) if baseline else DEFAULT_BASELINES
    for b in baselines:
        check_interval("baseline", b, 0.0, 1.0, closed="both", owner=OWNER)
    rates = tuple(base_rate) if base_rate else DEFAULT_BASE_RATES
    for pi in rates:
        check_interval("base_rate", pi, 0.0, 1.0, owner=OWNER)
    mechanism, report_delta = mechanism_from_flags(
        epsilon=epsilon,
        delta=delta,
        mu=mu,
        gaussian_sigma=gaussian_sigma,
        laplace_scale=laplace_scale,
        sensitivity=sensitivity,
        noise_multiplier=noise_multiplier,
        sample_rate=sample_rate,
        steps=steps,
        rho=rho,
        neighbours=neighbours,
        batch_size=batch_size,
        epochs=epochs,
        n_records=n_records,
    )
    curve = tradeoff_curve(mechanism, tolerance=tol)
    profile = risk_profile(
        curve, fprs=fprs, baselines=baselines, base_rates=rates, recalls=DEFAULT_RECALLS, delta=report_delta
    )
    if plot is not None:
        from mipkit._runfolder import atomic_write
        from mipkit.accounting.plots import plot_tradeoff

        fig = plot_tradeoff(curve, base_rates=rates)
        atomic_write(plot, lambda f: fig.savefig(f, format=plot.suffix[1:].lower(), dpi=110))
        typer.echo(f"Figure written to {plot}", err=json_output)
    if json_output:
        typer.echo(json.dumps({"mechanism": mechanism.to_dict(), **profile}, allow_nan=False))
    else:
        _print_human(profile, mechanism.to_dict())


def register(app: typer.Typer) -> None:
    """Add ``mipkit risk`` to the app."""
    app.command("risk")(risk)
