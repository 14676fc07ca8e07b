"""``mipkit audit-scores``: audit a model from a predictions file (scores in, report out).

The file has one row per audited record: ``id``, ``label``, ``member`` (0/1) and the model's outputs
(``p_<class>`` columns, ``logit_<class>`` columns or ``loss``), optionally reference models' outputs
(``ref<k>_p_<class>`` / ``ref<k>_logit_<class>`` / ``ref<k>_loss`` with ``ref<k>_member``); see
:mod:`mipkit.workflows.audit_scores.file`. Heavy modules are imported inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mipkit.cli.options import (
    ConfidenceOption,
    FailAboveOption,
    FailMetricOption,
    FprsOption,
    JsonOption,
    NoReportOption,
    RunFolderOption,
    SeedOption,
    comma_floats,
    comma_names,
    finish_audit,
    with_options,
)

# flags shared with ``mipkit audit-fitted``
AttacksOption = Annotated[str, typer.Option("--attacks", help="Comma-separated subset of loss, lira, rmia.")]
IdColumnOption = Annotated[
    str | None,
    typer.Option(
        "--id-column",
        help="Column of unique record ids (never a feature): names the records in scores.parquet, the most "
        "exposed records and the report.",
    ),
]
SliceByOption = Annotated[
    str | None,
    typer.Option(
        "--slice-by",
        help="Comma-separated columns whose subgroups get AUC, TPR@FPR and eta with intervals (rare values "
        "pooled); the true class is always sliced.",
    ),
]


def show(result: Any, results: dict, run_dir: Path) -> None:
    """The human-readable answer of ``audit-scores`` and ``audit-fitted``: the result's summary, the lines of
    :func:`mipkit.report.fitted_report.answer_lines`, the tables and the most exposed members."""
    from mipkit.report.audit_console import print_human
    from mipkit.report.fitted_report import answer_lines, most_exposed_line

    typer.echo(result.summary())
    typer.echo("")
    for line in answer_lines(results):
        typer.echo(line)
    util = results.get("utility") or {}
    shown = {**results, "utility": util if "accuracy_nonmembers" in util else {}}
    print_human(shown, run_dir, paragraph=False)
    exposed = most_exposed_line(results)
    if exposed:
        typer.echo(exposed)


def fitted_json(results: dict, run_dir: Path) -> dict:
    """The ``--json`` object: ``mipkit audit``'s view plus the question answered, the skipped attacks and
    the design."""
    from mipkit.report.audit_console import json_view

    view = json_view(results, run_dir)
    view.pop("game", None)
    return {
        "question": (results.get("question") or {}).get("answered"),
        **view,
        "skipped": results.get("skipped"),
        "design": results.get("design"),
    }


def measurement(
    fprs: FprsOption = "0.001,0.01,0.1",
    base_rates: str = typer.Option(
        "1:1,1:10,1:100,1:1000", "--base-rates", help="Membership base rates for precision."
    ),
    confidence: ConfidenceOption = 0.95,
    n_boot: int = typer.Option(1000, "--n-boot", help="Replicates of the record bootstrap."),
    fail_above: FailAboveOption = None,
    fail_metric: FailMetricOption = "eta",
) -> dict[str, Any]:
    """The measurement flags of ``audit-scores`` and ``audit-fitted`` (:func:`with_options`), as keyword
    arguments of both configs (:class:`~mipkit.workflows.audit_scores.config.MeasureConfig`)."""
    return {
        "fprs": comma_floats(fprs, "--fprs"),
        "base_rates": comma_floats(base_rates, "--base-rates"),
        "confidence": confidence,
        "n_boot": n_boot,
        "fail_above": fail_above,
        "fail_metric": fail_metric,
    }


def attack_names(attacks: str) -> tuple[str, ...]:
    """``--attacks`` -> names (LOSS alone when the list is empty)."""
    return comma_names(attacks) or ("loss",)


def finish(result: Any, run_dir: Path, as_json: bool) -> None:
    """Print the result (``--json``: one object) and exit 1 on a finding."""
    finish_audit(result, run_dir, as_json, fitted_json, lambda results, folder: show(result, results, folder))


def register(app: typer.Typer) -> None:
    @app.command("audit-scores")
    @with_options("measure", measurement)
    def audit_scores(
        predictions: str = typer.Option(
            ...,
            "--predictions",
            help="CSV/Parquet, one row per record: id, label, member (0/1), then p_<class> columns, "
            "logit_<class> columns or loss; optional ref<k>_... reference-model outputs and ref<k>_member. "
            "Other names: the --...-column flags.",
        ),
        id_column: IdColumnOption = "id",
        label_column: str = typer.Option("label", "--label-column", help="Column of the true class."),
        member_column: str = typer.Option(
            "member", "--member-column", help="Column saying whether the record was a training record."
        ),
        member_value: str = typer.Option(
            None,
            "--member-value",
            help="The members' value of --member-column (e.g. yes; its one other value marks the "
            "non-members). Default: 1 and 0.",
        ),
        score_column: str = typer.Option(
            None,
            "--score-column",
            help="One score per record: the probability of the positive class of a binary model.",
        ),
        positive_class: str = typer.Option(
            None,
            "--positive-class",
            help="The label the --score-column is the probability of (default: 1, true or yes).",
        ),
        proba_columns: str = typer.Option(
            None,
            "--proba-columns",
            help="Comma-separated probability columns, one per class: class=column, or a column whose name "
            "ends with its class.",
        ),
        slice_by: SliceByOption = None,
        out: RunFolderOption = "runs/audit-scores",
        attacks: AttacksOption = "loss,lira,rmia",
        seed: SeedOption = 0,
        measure: Any = None,
        as_json: JsonOption = False,
        no_report: NoReportOption = False,
    ) -> None:
        """Audit a model from a predictions file: labels, membership and outputs in, metrics out."""
        # long only by its option declarations: flags -> AuditScoresConfig, the file -> predictions
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli.flag_errors import flag_errors
        from mipkit.cli.options import check_out_folder
        from mipkit.workflows.audit_scores import AuditScoresConfig, audit_scores, read_predictions

        with flag_errors("audit_scores"):
            config = AuditScoresConfig(
                **measure(),
                seed=seed,
                attacks=attack_names(attacks),
                id_column=id_column or "id",
                label_column=label_column,
                member_column=member_column,
                member_value=member_value,
                score_column=score_column,
                positive_class=positive_class,
                proba_columns=proba_columns or (),
                slice_by=slice_by or (),
            )
        run_dir = check_out_folder(out)
        predictions = read_predictions(predictions, config)  # refused before the run folder is made
        with lock_run_folder(run_dir):
            result = audit_scores(predictions, config)
            result.write(run_dir, report=not no_report)
        finish(result, run_dir, as_json)
