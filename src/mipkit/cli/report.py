"""``mipkit report RUN_DIR``: re-render a run folder's ``report.html`` from its saved results."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        run_dir: str = typer.Argument(..., help="A run folder written by mipkit (holds results.json)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Rebuild RUN_DIR/report.html from results.json and the other files of the run (no refitting)."""
        from mipkit.report import read_results, rebuild_report

        kind = read_results(run_dir)["kind"]
        path = rebuild_report(Path(run_dir))
        if as_json:
            typer.echo(json.dumps({"report": str(path), "kind": kind}))
        else:
            typer.echo(f"Report written to {path}")
