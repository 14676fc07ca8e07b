"""``mipkit report RUN_DIR``: re-render a run folder's ``report.html`` from its saved results."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mipkit.cli.options import JsonOption

#: The fields a ``results.json`` of each kind must hold (non-empty) for a report to say anything.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "audit": ("attacks", "game", "trainer"),
    "audit-synthetic": ("inputs", "nnaa", "dcr"),
    "demo": ("stages", "summary"),
}


def check_results(results: dict, run_dir: Path) -> None:
    """Refuse a ``results.json`` that lacks the fields of its kind (a report of it would show nothing)."""
    from mipkit._validation import MipkitValueError

    kind = results.get("kind")
    missing = [k for k in REQUIRED_FIELDS.get(str(kind), ()) if not results.get(k)]
    if missing:
        raise MipkitValueError(
            f"{run_dir / 'results.json'} holds no results of a {kind} run (no {', '.join(missing)}); "
            "was the run interrupted? Run it again to write them."
        )


def _rebuild(rebuild_report, folder: Path) -> Path:
    """``rebuild_report(folder)``, with a damaged data file of the run (a truncated ``scores.parquet`` left
    by an older mipkit, say) refused in one line rather than reported as a bug."""
    from mipkit._validation import MipkitValueError

    try:
        return rebuild_report(folder)
    except MipkitValueError:
        raise
    except Exception as err:
        if type(err).__module__.split(".")[0] not in ("pyarrow", "pandas", "json"):
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise MipkitValueError(
            f"A file of the run folder {folder} is damaged ({first}); run the command again to rewrite it."
        ) from None


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        run_dir: str = typer.Argument(..., help="A run folder written by mipkit (holds results.json)."),
        as_json: JsonOption = False,
    ) -> None:
        """Rebuild RUN_DIR/report.html from results.json and the other files of the run (no refitting)."""
        from mipkit.cli.options import check_out_folder, hold_run_folder
        from mipkit.report import read_results, rebuild_report

        folder = check_out_folder(run_dir, "RUN_DIR")
        results = read_results(folder)  # a folder without results.json is refused before it is locked
        hold_run_folder(folder, "RUN_DIR")  # no run is writing it while the report is rebuilt
        results = read_results(folder)  # again under the lock (which finishes a commit a kill interrupted)
        check_results(results, folder)
        path = _rebuild(rebuild_report, folder)
        if as_json:
            typer.echo(json.dumps({"report": str(path), "kind": results["kind"]}))
        else:
            typer.echo(f"Report written to {path}")
