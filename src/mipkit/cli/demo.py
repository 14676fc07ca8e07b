"""``mipkit demo``: certify -> audit -> protect (MIP noise) -> audit again, on breast-cancer data.

The work is :func:`mipkit.workflows.demo.run_demo`; this command parses the flags, draws the stages and the
fits' progress on stderr, and prints the summary (or one JSON object with ``--json``).
"""

from __future__ import annotations

import typer

from mipkit.cli.options import JsonOption, RunFolderOption, SeedOption, echo_json

JSON_LEFT_OUT = ("text", "stages", "title")


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        out: RunFolderOption = "runs/demo",
        fast: bool = typer.Option(False, "--fast", help="Fewer models (a quick smoke run)."),
        models: int = typer.Option(None, "--models", help="K models per audit [16; 8 with --fast]."),
        seed: SeedOption = 0,
        as_json: JsonOption = False,
    ) -> None:
        """Audit -> protect (MIP noise) -> audit again on breast-cancer data; writes a before/after report."""
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli._progress import ProgressBar, fits_label
        from mipkit.cli.options import check_count, check_out_folder, check_seed
        from mipkit.workflows.demo import run_demo

        check_count("--models", models, kind="models", minimum=4, even=True)
        check_seed(seed)
        with (
            ProgressBar(enabled=not as_json, labels={"model fits": fits_label()}) as bar,
            lock_run_folder(check_out_folder(out)),
        ):
            res = run_demo(out, fast=fast, seed=seed, n_models=models, progress=bar)
        if as_json:
            payload = {k: v for k, v in res.to_dict().items() if k not in JSON_LEFT_OUT}
            echo_json(payload)
            return
        headline, *lines = res.summary
        typer.echo(headline + "\n")  # the answer's one paragraph first, then the stages
        for line in lines:
            typer.echo(f"- {line}")
        typer.echo(f"Report: {res.report}  ({res.seconds:.0f} s)")
