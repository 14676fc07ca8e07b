"""``mipkit audit-synthetic``: audit released synthetic data (NNAA, DCR attack, attribute inference)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from mipkit.workflows.audit_synthetic import SyntheticAuditResult


def _print_human(result: SyntheticAuditResult, run_dir: Path) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    t = Table(title="Synthetic data audit")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for measure, value in result.summary_rows():
        t.add_row(escape(measure), escape(value))  # column names may hold "[...]"
    console.print(t)
    for line in result.sentences():
        console.print(f"- {escape(line)}")
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
            None, "--known", help="Column the attacker knows (repeatable; default: all other columns)."
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
        import contextlib
        import json

        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from mipkit._validation import MipkitValueError
        from mipkit.data.io import read_table
        from mipkit.workflows.audit_synthetic import audit_synthetic

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

            result = audit_synthetic(
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
        run_dir = result.write(out)
        if as_json:
            typer.echo(json.dumps({**result.summary(), "run_dir": str(run_dir)}))
        else:
            _print_human(result, run_dir)
