"""``mipkit risk``: turn a privacy guarantee into the risks people can act on.

One mechanism per call: ``--epsilon E [--delta D]``, ``--mu M``, ``--gaussian-sigma S [--sensitivity L]``,
``--laplace-scale B [--sensitivity L]`` or ``--noise-multiplier Z --sample-rate Q --steps T``. Prints a
table and plain sentences, or with ``--json`` one object: :func:`mipkit.accounting.risk.risk_profile`
plus ``mechanism``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from mipkit._validation import (
    MipkitValueError,
    check_delta,
    check_epsilon,
    check_interval,
    check_positive,
    check_positive_int,
    check_sample_rate,
)
from mipkit.accounting.curves import ApproxDPCurve, GaussianCurve, LaplaceCurve
from mipkit.accounting.risk import DEFAULT_BASELINES, DEFAULT_RECALLS, risk_profile
from mipkit.accounting.tradeoff import TradeoffCurve

OWNER = "mipkit risk"
DEFAULT_FPRS = (0.001, 0.01, 0.1)
DEFAULT_BASE_RATES = (0.5, 1 / 11, 1 / 101, 1 / 1001)
MECHANISM_HELP = (
    "--epsilon [--delta], --mu, --gaussian-sigma [--sensitivity], --laplace-scale [--sensitivity], "
    "or --noise-multiplier with --sample-rate and --steps"
)


def build_curve(
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
) -> tuple[TradeoffCurve, dict, float | None]:
    """The trade-off curve of exactly one mechanism given by the ``mipkit risk`` options.

    Returns ``(curve, mechanism, report_delta)``: ``mechanism`` is a JSON-ready description of what the
    user gave, ``report_delta`` the delta at which to report an epsilon (``None``: none asked for).
    Raises :class:`MipkitValueError` unless exactly one mechanism is given with valid parameters.
    """
    given = {
        "--epsilon": epsilon is not None,
        "--mu": mu is not None,
        "--gaussian-sigma": gaussian_sigma is not None,
        "--laplace-scale": laplace_scale is not None,
        "--noise-multiplier": any(v is not None for v in (noise_multiplier, sample_rate, steps)),
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
    sens = 1.0 if sensitivity is None else check_positive("sensitivity", sensitivity, owner=OWNER)
    report_delta = None if delta is None else check_delta(delta, owner=OWNER)

    if kind == "--epsilon":
        eps = check_epsilon(epsilon, owner=OWNER)
        d = 0.0 if report_delta is None else report_delta
        return ApproxDPCurve(eps, d), {"name": "approx_dp", "epsilon": eps, "delta": d}, d
    if kind == "--mu":
        m = check_interval("mu", mu, 0.0, math.inf, closed="left", owner=OWNER)
        return GaussianCurve(m), {"name": "gaussian_dp", "mu": m}, report_delta
    if kind == "--gaussian-sigma":
        s = check_positive("gaussian_sigma", gaussian_sigma, owner=OWNER)
        curve = GaussianCurve.from_mechanism(s, sensitivity=sens)
        return curve, {"name": "gaussian", "sigma": s, "sensitivity": sens, "mu": curve.mu}, report_delta
    if kind == "--laplace-scale":
        b = check_positive("laplace_scale", laplace_scale, owner=OWNER)
        curve = LaplaceCurve(b, sensitivity=sens)
        return (
            curve,
            {"name": "laplace", "scale": b, "sensitivity": sens, "epsilon": curve.epsilon},
            report_delta,
        )
    # DP-SGD
    missing = [
        flag
        for flag, v in (
            ("--noise-multiplier", noise_multiplier),
            ("--sample-rate", sample_rate),
            ("--steps", steps),
        )
        if v is None
    ]
    if missing:
        raise MipkitValueError(
            f"DP-SGD needs --noise-multiplier, --sample-rate and --steps; missing {', '.join(missing)}."
        )
    z = check_positive("noise_multiplier", noise_multiplier, owner=OWNER)
    q = check_sample_rate(sample_rate, owner=OWNER)
    t = check_positive_int("steps", steps, owner=OWNER)
    from mipkit.accounting.pld import dpsgd_curve  # heavy (dp_accounting); only for DP-SGD

    curve = dpsgd_curve(z, q, t)
    return curve, {"name": "dpsgd", "noise_multiplier": z, "sample_rate": q, "steps": t}, report_delta


def _pct(x: float) -> str:
    """A probability as a percentage with the digits that matter."""
    if x >= 1.0:
        return "100%"
    if x >= 0.99:
        return f"{100 * x:.2f}%"
    if x >= 0.01:
        return f"{100 * x:.3g}%"
    return f"{100 * x:.2g}%"


def _skew(pi: float) -> str:
    return f"1 in {1 / pi:.4g} (1:{(1 - pi) / pi:.4g})"


def sentences(profile: dict) -> list[str]:
    """Plain-language reading of a :func:`risk_profile` for a privacy officer."""
    eta = profile["eta"]
    out = [
        f"An attacker who tries to tell whether a given person was in the data is right at most "
        f"{_pct(0.5 + eta)} of the time (MIP eta = {eta:.4g}), against 50% by guessing.",
        f"Any membership test has TPR - FPR at most {profile['advantage']:.3g}: it flags members at most "
        f"{100 * profile['advantage']:.3g} percentage points more often than non-members.",
    ]
    for key, tpr in profile["tpr_at_fpr"].items():
        a = float(key)
        out.append(
            f"If at most {_pct(a)} of non-members may be wrongly flagged, an attacker finds at most "
            f"{_pct(tpr)} of the members (eta alone would only promise "
            f"{_pct(profile['mip_tpr_at_fpr'][key])})."
        )
    for key, succ in profile["success_bound"].items():
        b = float(key)
        out.append(
            f"An attack that succeeds {_pct(b)} of the time without this release (re-identifying a "
            f"person, inferring a sensitive attribute or reconstructing a record) succeeds at most "
            f"{_pct(succ)} of the time with it (+{100 * profile['advantage_over_baseline'][key]:.3g} points)."
        )
    for key, by_recall in profile["precision_at_base_rate"].items():
        pi = float(key)
        parts = [f"{_pct(p)} when it finds {_pct(float(r))} of them" for r, p in by_recall.items()]
        out.append(
            f"If 1 in {1 / pi:.4g} of the people checked is in the data (skew 1:{(1 - pi) / pi:.4g}), "
            f"the attacker's 'member' claims are right at most {', '.join(parts)} (precision)."
        )
    if "epsilon" in profile:
        if profile["epsilon"] is None:
            out.append(f"No finite epsilon gives (epsilon, delta)-DP at delta = {profile['delta']:g}.")
        else:
            out.append(
                f"As (epsilon, delta)-DP: epsilon = {profile['epsilon']:.4g} at delta = {profile['delta']:g}."
            )
    out.append("The eta bound alone does not limit precision at low FPR; the f-DP figures above do.")
    return out


def _print_human(profile: dict, mechanism: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    params = ", ".join(f"{k}={v:g}" for k, v in mechanism.items() if k != "name")
    table = Table(title=f"Certified risk: {mechanism['name']} ({params})", title_justify="left")
    table.add_column("Risk", style="bold")
    table.add_column("Bound", justify="right")
    table.add_row("MIP accuracy (1/2 + eta)", f"{profile['accuracy']:.4f}")
    table.add_row("MIP eta", f"{profile['eta']:.4f}")
    table.add_row("Advantage (max TPR - FPR)", f"{profile['advantage']:.4f}")
    for key, v in profile["tpr_at_fpr"].items():
        table.add_row(f"TPR at FPR {key}", f"{v:.4g}")
    for key, v in profile["success_bound"].items():
        table.add_row(f"Success at baseline {key}", f"{v:.4g}")
    for key, by_recall in profile["precision_at_base_rate"].items():
        for r, p in by_recall.items():
            table.add_row(f"Precision, {_skew(float(key))}, recall {r}", f"{p:.4g}")
    if "epsilon" in profile:
        eps = "none (infinite)" if profile["epsilon"] is None else f"{profile['epsilon']:.4g}"
        table.add_row(f"Epsilon at delta {profile['delta']:g}", eps)
    console.print(table)
    for line in sentences(profile):
        console.print("- " + line, highlight=False)


def risk(
    epsilon: float | None = typer.Option(None, "--epsilon", help="(epsilon, delta)-DP guarantee: epsilon."),
    delta: float | None = typer.Option(
        None, "--delta", help="With --epsilon: the DP delta. Otherwise: report the epsilon at this delta."
    ),
    mu: float | None = typer.Option(None, "--mu", help="mu-GDP guarantee."),
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
    sample_rate: float | None = typer.Option(None, "--sample-rate", help="DP-SGD Poisson sampling rate."),
    steps: int | None = typer.Option(None, "--steps", help="DP-SGD number of steps."),
    fpr: list[float] | None = typer.Option(None, "--fpr", help="FPR to report TPR at (repeatable)."),
    baseline: list[float] | None = typer.Option(
        None, "--baseline", help="Baseline success to report attack success over (repeatable)."
    ),
    base_rate: list[float] | None = typer.Option(
        None, "--base-rate", help="Member fraction to report precision at (repeatable)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the trade-off / precision figure (PNG)."),
) -> None:
    """Certify: turn a DP / GDP / Laplace / DP-SGD guarantee into membership, re-identification and
    attribute-inference risk."""
    fprs = tuple(fpr) if fpr else DEFAULT_FPRS
    for a in fprs:
        check_interval("fpr", a, 0.0, 1.0, owner=OWNER)
    baselines = tuple(baseline) if baseline else DEFAULT_BASELINES
    for b in baselines:
        check_interval("baseline", b, 0.0, 1.0, closed="both", owner=OWNER)
    rates = tuple(base_rate) if base_rate else DEFAULT_BASE_RATES
    for pi in rates:
        check_interval("base_rate", pi, 0.0, 1.0, owner=OWNER)
    curve, mechanism, report_delta = build_curve(
        epsilon=epsilon,
        delta=delta,
        mu=mu,
        gaussian_sigma=gaussian_sigma,
        laplace_scale=laplace_scale,
        sensitivity=sensitivity,
        noise_multiplier=noise_multiplier,
        sample_rate=sample_rate,
        steps=steps,
    )
    profile = risk_profile(
        curve, fprs=fprs, baselines=baselines, base_rates=rates, recalls=DEFAULT_RECALLS, delta=report_delta
    )
    if plot is not None:
        from mipkit.accounting.plots import plot_tradeoff

        fig = plot_tradeoff(curve, base_rates=rates)
        fig.savefig(plot, dpi=110)
        typer.echo(f"Figure written to {plot}", err=json_output)
    if json_output:
        typer.echo(json.dumps({"mechanism": mechanism, **profile}, allow_nan=False))
    else:
        _print_human(profile, mechanism)


def register(app: typer.Typer) -> None:
    """Add ``mipkit risk`` to the app."""
    app.command("risk")(risk)
