"""``mipkit protect`` (MIP noise on model parameters) and ``mipkit audit-noise`` (the optimal attack).

``protect`` trains the model on the table, adds noise calibrated to MIP ``eta`` (:class:`MIPNoise`), saves
the noisy model with joblib (:meth:`MIPNoise.release`: no fits on halves, no secret half) and prints the
certificate, its premises first; an estimated sigma and the noise values scaled by it, statistics of the
private data, only with ``--include-estimates``. ``audit-noise`` plays the MIP game against the same
mechanism on the table (the table is the pool ``D``; each round releases a model trained on a random half)
with the Bayes-optimal attacker (:func:`mipkit.workflows.audit_noise.run.audit_noise`), and prints the
measured accuracy with its interval next to ``1/2 + eta``. Both release models trained on the table, so a
non-numeric feature needs ``--domain`` (its public levels, :mod:`mipkit.data.domain`): levels read from the
rows would reveal the training rows. NumPy, scikit-learn, Rich and the library are
imported inside the commands, so that ``mipkit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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


def _load(data: Path, target: str, encode: str, drop: list[str] | None, domain: str | None):
    """The release's arrays (levels from the public ``domain`` only) and where its encoding came from."""
    from mipkit._validation import check_choice
    from mipkit.data.domain import domain_provenance, load_domain
    from mipkit.data.io import features_target, read_table

    check_choice("encode", encode, ("none", "onehot"), owner="mipkit protect")
    dom, path = load_domain(domain)
    ds = features_target(
        read_table(data), target, encode=encode, drop=tuple(drop or ()), domain=dom, release=True
    )
    return ds, domain_provenance(dom, path)


def _domain_line(domain: dict) -> str:
    return (
        f"- Encoding from the public domain {domain['path']}"
        if domain.get("path")
        else f"- Encoding: {domain['source']}"
    )


def _progress(total: int, quiet: bool):
    """A Rich progress bar on stderr (so --json stdout stays clean); returns (context, advance)."""
    from contextlib import nullcontext

    from rich.console import Console

    if quiet or total <= 0 or not Console(stderr=True).is_terminal:  # no bar (nor blank line) in a log
        return nullcontext(), None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("fits on random halves", total=total)
    return bar, lambda k: bar.advance(task, k)


def _sigma_value(sigma: str | None):
    if sigma is None:
        return None
    from mipkit._validation import MipkitValueError

    try:
        values = [float(v) for v in sigma.split(",") if v.strip()]
    except ValueError:
        raise MipkitValueError(
            f"--sigma must be a number or comma-separated numbers. Got {sigma!r}."
        ) from None
    if not values:
        raise MipkitValueError("--sigma is empty.")
    return values[0] if len(values) == 1 else values


def _noise_settings(
    eta: float,
    calibration: str,
    sigma: str | None,
    confidence: float,
    moment: float,
    attributes: str,
    seed: int | None,
    n_jobs: int | None,
) -> dict[str, Any]:
    """The flags of the MIP noise, as the keyword arguments both ``MIPNoise`` and the noise audit take."""
    return {
        "eta": eta,
        "calibration": calibration,
        "sigma": _sigma_value(sigma),
        "confidence": confidence,
        "moment": moment,
        "attributes": tuple(a.strip() for a in attributes.split(",") if a.strip()),
        "random_state": seed,
        "n_jobs": n_jobs,
    }


WITHHELD = "withheld: estimated from the private data (--include-estimates shows them)"


def _bound_name(p: float) -> str:
    """How the accuracy bound reads: ``1/2 + eta``, or with an odd pool's prior ``p = k/n``."""
    return "1/2 + eta" if p == 0.5 else f"max(k/n, 1 - k/n) + eta (k/n = {p:.4g}, an odd pool)"


def _certificate_table(cert: dict, title: str):
    import numpy as np
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("Field", style="bold")
    table.add_column("Value")
    rows = [
        ("exact guarantee", "yes" if cert["exact"] else "no (estimated sigma / published sampler)"),
        ("eta (accuracy bound)", f"{cert['eta']:g} ({cert['accuracy_bound']:.4g})"),
        ("calibration", cert["calibration"]),
        ("noise added", cert["released_with"]),
    ]
    if cert["estimates_withheld"]:
        rows += [
            ("sigma", f"{cert['sigma_source']}"),
            ("sigma and noise values", WITHHELD),
        ]
    else:
        std = np.asarray(cert["noise_std"])
        sig = np.asarray(cert["sigma"])
        rows += [
            ("sigma", f"{cert['sigma_source']}; per coordinate {sig.min():.4g} .. {sig.max():.4g}"),
            ("sigma_1 (norm level)", f"{cert['sigma_1']:.4g}"),
            ("noise scale", f"{cert['noise_scale']:.4g}"),
            (
                "noise std per coordinate",
                f"{std.min():.4g} .. {std.max():.4g} (rms {cert['noise_std_rms']:.4g})",
            ),
        ]
    rows += [
        ("parameters released", str(cert["dim"])),
        ("seed", str(cert["seed"])),
        ("noise source", cert["noise_source"]),
    ]
    for alt in cert.get("dp_alternatives") or []:
        rows.append((f"DP alternative {alt['name']}", f"std {alt['coordinate_std']:.4g}"))
    for k, v in rows:
        table.add_row(k, v)
    return table


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
    import json

    import joblib

    from mipkit._runfolder import atomic_write
    from mipkit.cli.options import allow_models, check_count, check_n_jobs, check_out_file, check_seed
    from mipkit.mechanisms.mip_noise import MIPNoise, load_estimator

    out = check_out_file(out)
    allow_models(None, allow_model)
    check_count("--n-estimates", n_estimates, kind="fits", minimum=None)
    check_seed(seed)
    check_n_jobs(n_jobs)
    estimator = load_estimator(model, parse_params(params))
    ds, domain_used = _load(data, target, encode, drop, domain)
    wrapper = MIPNoise(
        estimator,
        n_estimates=n_estimates,
        train_on=train_on,
        sensitivity=sensitivity,
        choose=choose,
        noise_seed=noise_seed,
        **_noise_settings(eta, calibration, sigma, confidence, moment, attributes, seed, n_jobs),
    )
    wrapper._validate()  # bad flags fail before any fitting
    ctx, advance = _progress(n_estimates if sigma is None else 0, quiet=False)
    with ctx:
        wrapper.fit(ds.X, ds.y, progress=advance)
    published = wrapper.release(include_estimates=include_estimates)  # no fits, no secret half
    atomic_write(out, lambda f: joblib.dump(published, f))  # the previous model stays whole until replaced
    cert = published.certificate_.to_dict()
    if json_output:
        payload = {**cert, "model": model, "out": str(out), "domain": domain_used}
        typer.echo(json.dumps(payload, allow_nan=False))
        return
    from rich.console import Console

    console = Console()
    console.print("- " + cert["guarantee"], highlight=False)  # its premises first
    console.print(_certificate_table(cert, f"MIP certificate: {model}"))
    console.print(_domain_line(domain_used), highlight=False)
    if noise_seed is not None:
        console.print(f"- Noise {cert['noise_source']} (--noise-seed).", highlight=False)
    console.print(f"- Noisy model saved to {out}", highlight=False)


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
    allow_model: AllowModelOption = None,
) -> None:
    """Audit: the Bayes-optimal membership attack on the MIP-noise-wrapped model (the MIP game)."""
    import json

    from mipkit._validation import check_positive_int
    from mipkit.cli.options import allow_models, check_count, check_n_jobs, check_seed
    from mipkit.mechanisms.mip_calibration import check_mip_params
    from mipkit.mechanisms.mip_noise import load_estimator
    from mipkit.workflows.audit_noise.run import audit_noise as play_audit_noise

    allow_models(None, allow_model)
    check_count("--n-reference", n_reference, kind="fits", minimum=None)
    check_count("--n-releases", n_releases, kind="fits", minimum=None)
    check_seed(seed)
    check_n_jobs(n_jobs)
    estimator = load_estimator(model, parse_params(params))
    check_positive_int("n_releases", n_releases, owner="mipkit audit-noise")
    check_positive_int("n_targets", n_targets, owner="mipkit audit-noise")
    check_positive_int("n_reference", n_reference, minimum=2, owner="mipkit audit-noise")
    settings = _noise_settings(eta, calibration, sigma, confidence, moment, attributes, seed, n_jobs)
    check_mip_params(  # the noise's settings, before any fit
        "mipkit audit-noise",
        **{k: settings[k] for k in ("eta", "calibration", "sigma", "confidence", "moment")},
        n_estimates=n_reference,
        train_on="half",
    )
    ds, domain_used = _load(data, target, encode, drop, domain)
    check_count("--n-targets", n_targets, kind="rows", maximum=ds.X.shape[0])  # at most one per record
    ctx, advance = _progress(n_reference + n_releases, quiet=False)
    with ctx:
        result, cert, intervals = play_audit_noise(
            estimator,
            ds.X,
            ds.y,
            n_reference=n_reference,
            n_releases=n_releases,
            n_targets=n_targets,
            progress=advance,
            **settings,
        )
    game = result.to_dict()
    if json_output:
        payload = {
            "game": game,
            "certificate": cert.to_dict(),
            "model": model,
            "intervals": intervals,
            "domain": domain_used,
        }
        typer.echo(json.dumps(payload, allow_nan=False))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(
        title=f"Optimal attack on MIP noise ({cert.released_with}, eta={eta:g})", title_justify="left"
    )
    table.add_column("Target", justify="right")
    table.add_column("Accuracy", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("Trials", justify="right")
    for row in game["per_target"]:
        table.add_row(
            str(row["target"]),
            f"{row['accuracy']:.3f}",
            "{:.3f} - {:.3f}".format(*row["ci"]),
            str(row["trials"]),
        )
    table.add_row(
        "all", f"{game['accuracy']:.4f}", "{:.4f} - {:.4f}".format(*game["ci"]), str(game["trials"])
    )
    console.print(table)
    verdict = (
        "within"
        if game["upper_ci_within_bound"]
        else ("consistent with" if game["within_bound"] else "ABOVE")
    )
    console.print(
        f"- Measured accuracy {game['accuracy']:.4f} (95% CI {game['ci'][0]:.4f} - {game['ci'][1]:.4f}) is "
        f"{verdict} the bound {_bound_name(game['membership_probability'])} = {game['accuracy_bound']:.4f}; "
        f"posterior: {game['posterior']}.",
        highlight=False,
    )
    lo, hi = intervals["accuracy_ci"]
    console.print(
        f"- Allowing for guesses that share a release or a target (cluster bootstrap over releases and "
        f"targets, "
        f"design effect {intervals['design_effect']:.2f}): 95% CI {lo:.4f} - {hi:.4f}, "
        f"{intervals['verdict']} {_bound_name(game['membership_probability'])}"
        + ("" if intervals["certificate_exact"] else " (an approximate certificate: sigma was estimated)")
        + ". The Clopper-Pearson interval above treats every guess as independent and is too narrow.",
        highlight=False,
    )
    console.print(_domain_line(domain_used), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``mipkit protect`` and ``mipkit audit-noise`` to the app."""
    app.command("protect")(protect)
    app.command("audit-noise")(audit_noise)
