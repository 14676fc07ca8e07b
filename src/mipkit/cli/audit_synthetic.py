"""``mipkit audit-synthetic``: audit released synthetic data (NNAA, DCR attack, attribute inference)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import typer

from mipkit._validation import MipkitValueError


def _print_human(results: dict, summary: dict, run_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    from mipkit.report.synthetic_report import _summary

    console = Console()
    nn = summary["nnaa"]
    t = Table(title="Synthetic data audit")
    t.add_column("measure")
    t.add_column("value", justify="right")

    def f(x, d=3):
        return "n/a" if x is None else f"{x:.{d}f}"

    t.add_row("NNAA train / test", f"{f(nn['train'])} / {f(nn['test'])}")
    ci = nn.get("privacy_loss_ci") or [None, None]
    t.add_row("privacy loss [95% CI]", f"{f(nn['privacy_loss'])} [{f(ci[0])}, {f(ci[1])}]")
    t.add_row("DCR attack AUC", f(summary["dcr"]["auc"]))
    t.add_row("DCR baseline protection", f(summary["dcr"]["baseline_protection"]))
    for s, r in summary["inference"].items():
        t.add_row(
            f"inference {s}: precision / baseline / PI",
            f"{f(r['precision'])} / {f(r['baseline_precision'])} / {f(r['precision_improvement'])}",
        )
    console.print(t)
    for line in _summary(results):
        console.print(f"- {line}")
    console.print(f"Report: {run_dir / 'report.html'}")


def register(app: typer.Typer) -> None:
    @app.command("audit-synthetic")
    def audit_synthetic_cmd(
        original: str = typer.Option(..., "--original", help="Training data of the generator (CSV/Parquet)."),
        synthetic: str = typer.Option(..., "--synthetic", help="The synthetic data (CSV/Parquet)."),
        control: str = typer.Option(
            None, "--control", help="Real records not used for training (anonymeter)."
        ),
        holdout: str = typer.Option(
            None, "--holdout", help="Real records not used for training (DCR / NNAA)."
        ),
        secret: list[str] = typer.Option(None, "--secret", help="Column to infer (repeatable)."),
        known: list[str] = typer.Option(
            None, "--known", help="Column the attacker knows (repeatable) [all]."
        ),
        n_attacks: int = typer.Option(500, "--n-attacks", help="Inference targets per secret."),
        tolerance: float = typer.Option(0.05, "--tolerance", help="Numeric secrets: share of the range."),
        metric: str = typer.Option("mixed", "--metric", help="mixed (range-L1 + mismatch) or euclidean."),
        max_nnaa_rows: int = typer.Option(20000, "--max-nnaa-rows", help="Cap on each NNAA set."),
        max_dcr_rows: int = typer.Option(50000, "--max-dcr-rows", help="Cap on records scored by DCR."),
        seed: int = typer.Option(0, "--seed", help="Random seed."),
        n_jobs: int = typer.Option(2, "--n-jobs", help="Threads for neighbour search."),
        out: str = typer.Option(..., "--out", help="Run folder."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Audit synthetic data: NNAA privacy loss, DCR attack, attribute inference vs non-member baseline."""
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from mipkit.data.io import read_table
        from mipkit.workflows.audit_synthetic import audit_synthetic, summary_for_json, write_run

        if n_attacks < 1:
            raise MipkitValueError(f"--n-attacks must be >= 1. Got {n_attacks}.")
        if not 0 <= tolerance <= 1:
            raise MipkitValueError(f"--tolerance must be in [0, 1]. Got {tolerance}.")
        tables = {
            "original": read_table(original),
            "synthetic": read_table(synthetic),
            "control": read_table(control) if control else None,
            "holdout": read_table(holdout) if holdout else None,
        }
        console = Console(stderr=True)
        progress_cm = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            console=console,
            transient=as_json,
            disable=not console.is_terminal,
        )
        with progress_cm if console.is_terminal else contextlib.nullcontext(progress_cm) as prog:

            def factory(description: str, total: int):
                task = prog.add_task(description, total=max(total, 1))
                return lambda n: prog.advance(task, n)

            results = audit_synthetic(
                tables["original"],
                tables["synthetic"],
                control=tables["control"],
                holdout=tables["holdout"],
                secrets=secret or [],
                known=known or None,
                n_attacks=n_attacks,
                tolerance=tolerance,
                metric=metric,
                max_nnaa_rows=max_nnaa_rows,
                max_dcr_rows=max_dcr_rows,
                random_state=seed,
                n_jobs=n_jobs,
                progress=factory,
            )
        run_dir = write_run(out, results)
        summary = summary_for_json(results)
        if as_json:
            from mipkit.report.results import to_jsonable

            typer.echo(json.dumps(to_jsonable({**summary, "run_dir": str(run_dir)})))
        else:
            _print_human(results, summary, run_dir)
