"""``mipkit synthesize``: make private synthetic data with a certificate.

``mipkit synthesize --data CSV --method dpwgan-gp|dpwgan-gp-scaled|aim|mst|ctgan (--epsilon E [--delta D] |
--target-risk SPEC) --rows N --seed S [--noise-seed N] --out DIR [--domain JSON | --domain-share S]
[--drop COL ...] [--params JSON] [--json]`` writes ``DIR/synthetic.csv`` and ``DIR/certificate.json``
(:func:`mipkit.workflows.synthesize.run.synthesize`). Without ``--domain`` the column domain is estimated with
differential privacy from a share of the budget (``--domain-share``, default 0.1). ``SPEC``
names a risk target and its parameters: ``eta=0.05``, ``advantage=0.2``, ``tpr-at-fpr=0.05,fpr=0.01``,
``success=0.3,baseline=0.2``, ``precision=0.6,base-rate=0.1,recall=0.5``.
The DP noise comes from OS entropy unless ``--noise-seed`` is given.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from mipkit.cli.options import JsonOption, NoiseSeedOption, SeedOption

__all__ = ["CHECKPOINT", "parse_target_risk", "register"]

#: The training state of a resumable method, in the output folder until the fit ends.
CHECKPOINT = "checkpoint"


def parse_target_risk(spec: str) -> Any:
    """``"tpr-at-fpr=0.05,fpr=0.01"`` -> ``TprAtFprTarget(fpr=0.01, value=0.05)`` (one-line errors)."""
    from mipkit._validation import MipkitValueError
    from mipkit.accounting import TARGETS, target_from_dict

    items = [p.strip() for p in spec.split(",") if p.strip()]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise MipkitValueError(f"--target-risk takes NAME=VALUE[,PARAM=VALUE...]. Got {spec!r}.")
        try:
            pairs.append((key.strip(), float(value)))
        except ValueError:
            raise MipkitValueError(f"--target-risk: {value!r} is not a number.") from None
    if not pairs:
        raise MipkitValueError("--target-risk is empty.")
    name, value = pairs[0]
    if name not in TARGETS:
        raise MipkitValueError(f"--target-risk must start with one of {list(TARGETS)}. Got {name!r}.")
    return target_from_dict({"name": name, "value": value, **{k.replace("-", "_"): v for k, v in pairs[1:]}})


def _print_human(summary: dict, out: str, notes: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(title=f"Synthetic data: {summary['method']}", title_justify="left")
    t.add_column("quantity", style="bold")
    t.add_column("value", justify="right")
    t.add_row("rows", str(summary["rows"]))
    t.add_row("time", f"{summary['seconds']:.1f} s")
    cert = summary["certified"]
    if cert["eta"] is None:
        t.add_row("certified", "nothing (not differentially private)")
    else:
        t.add_row(
            f"epsilon ({summary['neighbours']}), delta", f"{summary['epsilon']:.4g}, {summary['delta']:g}"
        )
        t.add_row("certified MIP eta (replace-one)", f"{cert['eta']:.4f}")
        t.add_row("certified advantage", f"{cert['advantage']:.4f}")
        for fpr, tpr in cert["tpr_at_fpr"].items():
            t.add_row(f"certified TPR at FPR {fpr}", f"{tpr:.4f}")
    console.print(t)
    console.print(f"- Domain: {_domain_line(summary.get('domain') or {})}.", highlight=False)
    if summary.get("resumed_from"):
        console.print(
            f"- Resumed a killed run from its checkpoint (iteration or round {summary['resumed_from']})."
        )
    for note in notes:
        console.print(f"- {note}", highlight=False)
    console.print(f"Wrote {out}/synthetic.csv and {out}/certificate.json", highlight=False)


def _domain_line(domain: dict) -> str:
    source = domain.get("source")
    if source == "dp-estimated":
        return (
            f"estimated with differential privacy (epsilon {domain['epsilon']:.4g}, delta "
            f"{domain['delta']:.3g}; {domain['share']:.0%} of the budget, included in the epsilon above)"
        )
    if source == "public file":
        return "public (--domain), no privacy cost"
    return "read from the data (not private)"


def register(app: typer.Typer) -> None:
    @app.command("synthesize")
    def synthesize_cmd(
        data: str = typer.Option(..., "--data", help="The private table (CSV/Parquet)."),
        method: str = typer.Option(..., "--method", help="dpwgan-gp, dpwgan-gp-scaled, aim, mst or ctgan."),
        epsilon: float = typer.Option(None, "--epsilon", help="Privacy budget epsilon > 0."),
        delta: float = typer.Option(1e-5, "--delta", help="delta in (0, 1)."),
        target_risk: str = typer.Option(
            None,
            "--target-risk",
            help="A risk target instead of --epsilon, e.g. eta=0.05 or tpr-at-fpr=0.05,fpr=0.01.",
        ),
        rows: int = typer.Option(None, "--rows", help="Synthetic records (default: as many as the data)."),
        seed: SeedOption = 0,
        noise_seed: NoiseSeedOption = None,
        domain: str = typer.Option(None, "--domain", help="JSON file with the public domain of the columns."),
        domain_share: float = typer.Option(
            None,
            "--domain-share",
            help="Without --domain: the share of --epsilon and --delta that estimates the domain (0.1).",
        ),
        drop: list[str] = typer.Option(
            None, "--drop", help="A column to leave out (repeat, or separate with commas), e.g. an id."
        ),
        params: str = typer.Option(
            None, "--params", help="Synthesizer options as JSON, e.g. '{\"n_generator\": 100}'."
        ),
        out: str = typer.Option(..., "--out", help="Output folder."),
        as_json: JsonOption = False,
        raw_csv: bool = typer.Option(
            False, "--raw-csv", help="Write synthetic.csv cells as they are (no leading ' before =, +, -, @)."
        ),
        quality: bool = typer.Option(
            False,
            "--quality",
            help="Print a utility report (it reads the real records: not covered by the certificate).",
        ),
        quality_target: str = typer.Option(
            None,
            "--quality-target",
            help="A two-class column: the utility report adds train-on-synthetic / test-on-real.",
        ),
    ) -> None:
        """Make private synthetic data: DP-WGAN-GP, AIM, MST or CTGAN, with a certificate of its privacy."""
        from pathlib import Path

        from mipkit._validation import MipkitValueError, check_choice
        from mipkit.cli._progress import FitProgress
        from mipkit.cli.options import check_count, check_seed, hold_run_folder, parse_params
        from mipkit.synthesize.peers import METHODS
        from mipkit.workflows.synthesize.run import MAX_EPSILON

        check_choice("method", method, METHODS, owner="mipkit synthesize")
        if epsilon is not None and not 0 < epsilon <= MAX_EPSILON:
            raise MipkitValueError(
                f"--epsilon must be > 0 and at most {MAX_EPSILON:g} (above, nothing is certified). "
                f"Got {epsilon:g}."
            )
        if not 0 < delta < 1:
            raise MipkitValueError(f"--delta must be in (0, 1). Got {delta:g}.")
        check_count("--rows", rows, kind="rows")
        check_seed(seed)
        if epsilon is not None and target_risk is not None:
            raise MipkitValueError("Give --epsilon or --target-risk, not both.")
        if method != "ctgan" and epsilon is None and target_risk is None:
            raise MipkitValueError(f"--method {method} needs --epsilon (with --delta) or --target-risk.")
        target = parse_target_risk(target_risk) if target_risk is not None else None
        options = parse_params(params)
        from mipkit.data.domain import read_domain

        dom = None if domain is None else read_domain(domain)
        drops = [c.strip() for item in drop or [] for c in item.split(",") if c.strip()] or None
        from mipkit.data.io import read_table
        from mipkit.workflows.synthesize.run import synthesize

        hold_run_folder(out)  # checked, and locked until the command ends
        table = read_table(data)
        if quality_target is not None and quality_target not in table.columns:
            raise MipkitValueError(f"--quality-target {quality_target!r} is not a column of {data}.")
        with FitProgress(f"{method}: training", enabled=not as_json) as bar:
            try:
                result = synthesize(
                    table, method=method, epsilon=epsilon, delta=delta, target=target, rows=rows,
                    domain=dom, domain_share=domain_share, drop=drops, random_state=seed,
                    noise_seed=noise_seed, progress=bar, checkpoint=Path(out) / CHECKPOINT, **options,
                )  # fmt: skip
            except TypeError as err:  # an unknown --params key
                raise MipkitValueError(f"--params: {err}.") from None
        result.write(out, raw_csv=raw_csv)
        summary = {**result.summary(), "out": str(out)}
        if quality or quality_target is not None:  # statistics of the real records: only when asked
            from mipkit.synthesize.quality_report import quality_report

            synth = result.synthetic
            report = quality_report(table[list(synth.columns)], synth, target=quality_target, seed=seed)
            summary["quality"] = report
        if as_json:
            typer.echo(json.dumps(summary, allow_nan=False))
        else:
            _print_human(summary, out, list(result.certificate.notes))
            from mipkit.report.synthetic_quality import quality_sentences

            for line in quality_sentences(summary["quality"]) if "quality" in summary else ():
                typer.echo(f"- Utility: {line}")
