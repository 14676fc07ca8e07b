"""``mipkit audit-scores``: audit a model from a predictions file (scores in, report out).

The file has one row per audited record: ``id``, ``label``, ``member`` (0/1) and the model's outputs
(``p_<class>`` columns, ``logit_<class>`` columns or ``loss``), optionally reference models' outputs
(``ref<k>_p_<class>`` / ``ref<k>_logit_<class>`` / ``ref<k>_loss`` with ``ref<k>_member``); see
:mod:`mipkit.workflows.audit_scores_file`. Heavy modules are imported inside the command.
"""

from __future__ import annotations

from pathlib import Path

import typer

EXIT_FINDING = 1


def print_fitted(results: dict, run_dir: Path) -> None:
    """The human-readable summary of a fitted-model audit: the question, skipped attacks and the table."""
    from mipkit.cli.audit import print_human

    q = results.get("question") or {}
    typer.echo(f"Question answered: {q.get('answered')}.")
    for name, why in (results.get("skipped") or {}).items():
        typer.echo(f"Not run: {name}: {why}.")
    util = results.get("utility") or {}
    print_human({**results, "utility": util if "accuracy_nonmembers" in util else {}}, run_dir)


def fitted_json(results: dict, run_dir: Path) -> dict:
    """The ``--json`` object: ``mipkit audit``'s view plus the question answered, the skipped attacks and
    the design."""
    from mipkit.cli.audit import json_view

    view = json_view(results, run_dir)
    view.pop("game", None)
    return {
        "question": (results.get("question") or {}).get("answered"),
        **view,
        "skipped": results.get("skipped"),
        "design": results.get("design"),
    }


# options shared with ``mipkit audit-fitted``
ATTACKS = typer.Option("loss,lira,rmia", "--attacks", help="Comma-separated subset of loss, lira, rmia.")
SEED = typer.Option(0, "--seed", help="Random seed.")
FPRS = typer.Option("0.001,0.01,0.1", "--fprs", help="FPRs for TPR at FPR.")
BASE_RATES = typer.Option(
    "1:1,1:10,1:100,1:1000", "--base-rates", help="Membership base rates for precision."
)
CONFIDENCE = typer.Option(0.95, "--confidence", help="Confidence level of every interval.")
N_BOOT = typer.Option(1000, "--n-boot", help="Replicates of the record bootstrap.")
FAIL_ABOVE = typer.Option(
    None, "--fail-above", help="Policy: exit with code 1 when the metric's interval lies above this."
)
FAIL_METRIC = typer.Option("eta", "--fail-metric", help="Metric of --fail-above: eta, auc or tpr@FPR.")
AS_JSON = typer.Option(False, "--json", help="Print one JSON object on stdout.")
NO_REPORT = typer.Option(False, "--no-report", help="Skip report.html.")


def finish(result, run_dir: Path, as_json: bool) -> None:
    """Print the result (``--json``: one object) and exit 1 on a finding."""
    import json

    from mipkit.report.results import to_jsonable

    results = result.to_dict()
    if as_json:
        typer.echo(json.dumps(to_jsonable(fitted_json(results, run_dir))))
    else:
        print_fitted(results, run_dir)
    verdict = result.verdict or {}
    if verdict.get("status") == "finding":
        typer.echo(f"mipkit: finding: {verdict.get('text', '')}", err=True)
        raise typer.Exit(EXIT_FINDING)


def register(app: typer.Typer) -> None:
    @app.command("audit-scores")
    def audit_scores(
        predictions: str = typer.Option(
            ...,
            "--predictions",
            help="CSV/Parquet, one row per record: id, label, member (0/1), then p_<class> columns, "
            "logit_<class> columns or loss; optional ref<k>_... reference-model outputs and ref<k>_member.",
        ),
        out: str = typer.Option("runs/audit-scores", "--out", help="Run folder."),
        attacks: str = ATTACKS,
        seed: int = SEED,
        fprs: str = FPRS,
        base_rates: str = BASE_RATES,
        confidence: float = CONFIDENCE,
        n_boot: int = N_BOOT,
        fail_above: float = FAIL_ABOVE,
        fail_metric: str = FAIL_METRIC,
        as_json: bool = AS_JSON,
        no_report: bool = NO_REPORT,
    ) -> None:
        """Audit a model from a predictions file: labels, membership and outputs in, metrics out."""
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli.audit import _floats, _names
        from mipkit.cli.options import check_out_folder
        from mipkit.workflows.audit_scores_file import audit_predictions_file, read_predictions

        run_dir = check_out_folder(out)
        table = read_predictions(predictions)  # bad input is refused before the run folder is made
        with lock_run_folder(run_dir):
            result = audit_predictions_file(
                table,
                out_dir=run_dir,
                attacks=_names(attacks) or ("loss",),
                fprs=_floats(fprs, "--fprs"),
                base_rates=_floats(base_rates, "--base-rates"),
                confidence=confidence,
                n_boot=n_boot,
                seed=seed,
                fail_above=fail_above,
                fail_metric=fail_metric,
                write_report=not no_report,
                model_info={"import_path": f"model of {Path(predictions).name}"},
                design={"source": f"predictions file {Path(predictions).name}"},
            )
        finish(result, run_dir, as_json)
