"""``mipkit protect`` (MIP noise on model parameters) and ``mipkit audit-noise`` (the optimal attack).

Flag-to-config shells: the flags become a :class:`~mipkit.workflows.protect.ProtectConfig` /
:class:`~mipkit.workflows.audit_noise.AuditNoiseConfig` (every setting checked when built, before the table
is read), the table a :class:`~mipkit.workflows.protect.ProtectData` (non-numeric features only from a public
``--domain``), then the verb runs (:func:`mipkit.workflows.protect.protect`,
:func:`mipkit.workflows.audit_noise.audit_noise`). The answer is the result's paragraph for a DPIA, then its
table and notes (wording in :mod:`mipkit.report.dpia` and :mod:`mipkit.report.protect_report`), or with
``--json`` its ``to_dict()``; ``protect`` saves the released model with ``result.write``. Only the size
limits of :mod:`mipkit.cli.limits` are checked here. NumPy, scikit-learn, Rich and the library are imported
inside the commands, so that ``mipkit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mipkit.cli.options import (
    AllowModelOption,
    DomainOption,
    NoiseSeedOption,
    SeedOption,
    TargetOption,
    parse_params,
)

CALIBRATION_HELP = "mipkit-gaussian (default), mipkit-laplace (Theorem A) or izzo2024 (Cor. 10 as published)."

# the flags ``protect`` and ``audit-noise`` share
EstimatorParamsOption = Annotated[str | None, typer.Option("--params", help="Estimator parameters as JSON.")]
CalibrationOption = Annotated[str, typer.Option("--calibration", help=CALIBRATION_HELP)]
SigmaLevelOption = Annotated[
    float, typer.Option("--confidence", help="Bootstrap upper bound level for sigma.")
]
MomentOption = Annotated[float, typer.Option("--moment", help="Moment order M for izzo2024 (>= 2).")]
AttributesOption = Annotated[str, typer.Option("--attributes", help="Fitted attributes released.")]
WorkersOption = Annotated[int | None, typer.Option("--n-jobs", help="Parallel workers for the fits.")]
DropColumnsOption = Annotated[
    list[str] | None, typer.Option("--drop", help="Column to leave out (repeatable).")
]


def _print(paragraph: str, title: str, columns: list[tuple[str, str]], rows: list, notes: list[str]) -> None:
    """The answer: the paragraph for a DPIA, a blank line, the table, then the notes."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(paragraph, highlight=False)
    console.print()
    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, style="bold" if name == "Field" else None)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in notes:
        console.print(line, highlight=False)


def protect(
    data: Path = typer.Option(..., "--data", help="CSV/Parquet table."),
    target: TargetOption = ...,
    model: str = typer.Option(
        ..., "--model", help="Import path of the estimator, e.g. sklearn.linear_model.LogisticRegression."
    ),
    params: EstimatorParamsOption = None,
    eta: float = typer.Option(
        ..., "--eta", help="MIP target: attack accuracy <= 1/2 + eta, eta in (0, 0.5)."
    ),
    calibration: CalibrationOption = "mipkit-gaussian",
    sigma: str | None = typer.Option(
        None, "--sigma", help="A-priori spread bound per coordinate (one number or comma-separated)."
    ),
    n_estimates: int = typer.Option(100, "--n-estimates", help="Fits on random halves to estimate sigma."),
    confidence: SigmaLevelOption = 0.95,
    moment: MomentOption = 2.0,
    sensitivity: float | None = typer.Option(
        None, "--sensitivity", help="l2 sensitivity bound of the parameters, for the DP comparison."
    ),
    choose: str | None = typer.Option(None, "--choose", help="'smallest': least noise among MIP and DP."),
    train_on: str = typer.Option("all", "--train-on", help="all (default) or half (the table is the pool)."),
    attributes: AttributesOption = "coef_,intercept_",
    seed: SeedOption = None,
    noise_seed: NoiseSeedOption = None,
    n_jobs: WorkersOption = None,
    encode: str = typer.Option("none", "--encode", help="none or onehot (non-numeric features)."),
    drop: DropColumnsOption = None,
    domain: DomainOption = None,
    out: Path = typer.Option(..., "--out", help="Where to save the noisy model (joblib)."),
    json_output: bool = typer.Option(False, "--json", help="Print the certificate as one JSON object."),
    include_estimates: bool = typer.Option(
        False,
        "--include-estimates",
        help="Also print and save the estimated sigma and noise values: statistics of the private data "
        "that no budget covers (withheld by default).",
    ),
    allow_model: AllowModelOption = None,
) -> None:
    """Protect: train a model and add noise to its parameters so that it is eta-MIP."""
    # long only by its option declarations; the work is mipkit.workflows.protect
    from mipkit.cli.options import allow_models, check_count, check_n_jobs, check_out_file, echo_json
    from mipkit.report.protect_report import certificate_rows, certificate_title, protect_notes
    from mipkit.workflows.protect import ProtectConfig, ProtectData
    from mipkit.workflows.protect import protect as release

    out = check_out_file(out)
    allow_models(None, allow_model)
    check_count("--n-estimates", n_estimates, kind="fits", minimum=None)  # the cost limit; the rest: config
    check_n_jobs(n_jobs)
    config = ProtectConfig(
        model=model,
        params=parse_params(params),
        eta=eta,
        calibration=calibration,
        sigma=sigma,
        n_estimates=n_estimates,
        confidence=confidence,
        moment=moment,
        attributes=attributes,
        train_on=train_on,
        sensitivity=sensitivity,
        choose=choose,
        seed=seed,
        noise_seed=noise_seed,
        n_jobs=n_jobs,
        include_estimates=include_estimates,
    )  # bad settings fail here, before any fitting
    rows = ProtectData.from_table(data, target, encode=encode, drop=drop or (), domain=domain)
    from mipkit.cli._progress import ProgressBar

    with ProgressBar(enabled=not json_output) as bar:
        result = release(rows, config, progress=bar)
    result.write(out)  # the previous model stays whole until replaced
    d = result.to_dict()
    if json_output:
        echo_json({**d, "out": str(out)})
        return
    _print(
        result.summary(),
        certificate_title(d),
        [("Field", "left"), ("Value", "left")],
        certificate_rows(d),
        protect_notes(d, saved_to=out),
    )


def audit_noise(
    data: Path = typer.Option(..., "--data", help="CSV/Parquet table (the pool D)."),
    target: TargetOption = ...,
    model: str = typer.Option(..., "--model", help="Import path of the estimator."),
    params: EstimatorParamsOption = None,
    eta: float = typer.Option(..., "--eta", help="MIP target eta in (0, 0.5)."),
    calibration: CalibrationOption = "mipkit-gaussian",
    sigma: str | None = typer.Option(None, "--sigma", help="A-priori spread bound per coordinate."),
    n_reference: int = typer.Option(
        200, "--n-reference", help="Fits on random halves: the attacker's pool (and the sigma estimate)."
    ),
    n_releases: int = typer.Option(200, "--n-releases", help="Game rounds (each a fresh half and noise)."),
    n_targets: int = typer.Option(10, "--n-targets", help="Most exposed records attacked."),
    confidence: SigmaLevelOption = 0.95,
    moment: MomentOption = 2.0,
    attributes: AttributesOption = "coef_,intercept_",
    seed: SeedOption = None,
    n_jobs: WorkersOption = None,
    encode: str = typer.Option("none", "--encode", help="none or onehot."),
    drop: DropColumnsOption = None,
    domain: DomainOption = None,
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object."),
    include_estimates: bool = typer.Option(
        False,
        "--include-estimates",
        help="Also print the certificate's estimated sigma and noise values: statistics of the private data "
        "that no budget covers (withheld by default).",
    ),
    allow_model: AllowModelOption = None,
) -> None:
    """Audit: the Bayes-optimal membership attack on the MIP-noise-wrapped model (the MIP game)."""
    # long only by its option declarations; the work is mipkit.workflows.audit_noise
    from mipkit.cli.options import allow_models, check_count, check_n_jobs, echo_json
    from mipkit.report.protect_report import noise_attack_lines, noise_attack_rows, noise_attack_title
    from mipkit.workflows.audit_noise import AuditNoiseConfig
    from mipkit.workflows.audit_noise import audit_noise as play
    from mipkit.workflows.protect import ProtectData

    allow_models(None, allow_model)
    check_count("--n-reference", n_reference, kind="fits", minimum=None)  # cost limits; the rest: config
    check_count("--n-releases", n_releases, kind="fits", minimum=None)
    check_count("--n-targets", n_targets, kind="targets", minimum=None)
    check_n_jobs(n_jobs)
    config = AuditNoiseConfig(
        model=model,
        params=parse_params(params),
        eta=eta,
        calibration=calibration,
        sigma=sigma,
        n_reference=n_reference,
        n_releases=n_releases,
        n_targets=n_targets,
        confidence=confidence,
        moment=moment,
        attributes=attributes,
        seed=seed,
        n_jobs=n_jobs,
        include_estimates=include_estimates,
    )  # bad settings fail here, before the table is read
    pool = ProtectData.from_table(
        data, target, encode=encode, drop=drop or (), domain=domain, owner="audit_noise"
    )
    from mipkit.cli._progress import ProgressBar

    with ProgressBar(enabled=not json_output) as bar:
        result = play(pool, config, progress=bar)
    d = result.to_dict()
    if json_output:
        echo_json(d)
        return
    columns = [(name, "right") for name in ("Target", "Accuracy", "95% CI", "Trials")]
    _print(
        result.summary(), noise_attack_title(d), columns, noise_attack_rows(d["game"]), noise_attack_lines(d)
    )


def register(app: typer.Typer) -> None:
    """Add ``mipkit protect`` and ``mipkit audit-noise`` to the app."""
    app.command("protect")(protect)
    app.command("audit-noise")(audit_noise)
