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


def print_fitted(results: dict, run_dir: Path) -> None:
    """The human-readable summary of a fitted-model audit: the question, skipped attacks and the table."""
    from mipkit.report.audit_console import print_human, print_paragraph

    print_paragraph(results)
    q = results.get("question") or {}
    typer.echo(f"Question answered: {q.get('answered')}.")
    for name, why in (results.get("skipped") or {}).items():
        typer.echo(f"Not run: {name}: {why}.")
    ignored = (results.get("design") or {}).get("columns_ignored")
    if ignored:
        typer.echo(f"Columns the model does not read (ignored): {', '.join(map(str, ignored))}.")
    util = results.get("utility") or {}
    shown = {**results, "utility": util if "accuracy_nonmembers" in util else {}}
    print_human(shown, run_dir, paragraph=False)
    rec = results.get("records") or {}
    top = rec.get("most_exposed") or []
    if top:
        key = rec.get("id_field") or "record"
        n = (results.get("design") or {}).get("n_records")
        names = ", ".join(f"{r.get(key)} (rank {r.get('rank')})" for r in top[:5])
        typer.echo(
            f"Most exposed members ({rec.get('most_exposed_attack')}; rank of the score among {n} records, "
            f"1 = most member-like): {names}; all in scores.parquet."
        )


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
    """The measurement flags of ``audit-scores`` and ``audit-fitted`` (:func:`with_options`), as the keyword
    arguments both audits take."""
    return {
        "fprs": comma_floats(fprs, "--fprs"),
        "base_rates": comma_floats(base_rates, "--base-rates"),
        "confidence": confidence,
        "n_boot": n_boot,
        "fail_above": fail_above,
        "fail_metric": fail_metric,
    }


def checked_measurement(measure: Any, seed: int, attacks: str, command: str) -> dict[str, Any]:
    """The measurement flags (``measure``, the :func:`measurement` group) as keyword arguments, checked with
    the seed and ``--attacks`` before any file is read
    (:func:`~mipkit.workflows.audit.config.check_measurement` and the policy)."""
    from mipkit._validation import MipkitValueError
    from mipkit.attacks.registry import ATTACKS
    from mipkit.workflows.audit.config import check_measurement
    from mipkit.workflows.audit.verdict import check_policy

    kw = measure()
    check_measurement(
        fprs=kw["fprs"],
        base_rates=kw["base_rates"],
        confidence=kw["confidence"],
        n_boot=kw["n_boot"],
        seed=seed,
    )
    check_policy(kw["fail_metric"], kw["fail_above"], kw["fprs"])
    names = [a.lower() for a in attack_names(attacks)]
    if any(a not in ATTACKS for a in names) or "loss" not in names:
        raise MipkitValueError(f"--attacks must include loss, among {', '.join(ATTACKS)}. Got {attacks!r}.")
    return kw


def attack_names(attacks: str) -> tuple[str, ...]:
    """``--attacks`` -> names (LOSS alone when the list is empty)."""
    return comma_names(attacks) or ("loss",)


def finish(result: Any, run_dir: Path, as_json: bool) -> None:
    """Print the result (``--json``: one object) and exit 1 on a finding."""
    finish_audit(result, run_dir, as_json, fitted_json, print_fitted)


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
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli.options import check_out_folder, comma_names
        from mipkit.workflows.audit_scores.file import (
            PredictionColumns,
            audit_predictions_file,
            read_predictions,
        )

        kw = checked_measurement(measure, seed, attacks, "audit-scores")
        columns = PredictionColumns(
            id=id_column or "id",
            label=label_column,
            member=member_column,
            member_value=member_value,
            score=score_column,
            positive_class=positive_class,
            proba=comma_names(proba_columns) if proba_columns else (),
            slice_by=comma_names(slice_by) if slice_by else (),
        )
        run_dir = check_out_folder(out)
        table = read_predictions(predictions, columns)  # bad input is refused before the run folder is made
        with lock_run_folder(run_dir):
            result = audit_predictions_file(
                table,
                out_dir=run_dir,
                attacks=attack_names(attacks),
                seed=seed,
                **kw,
                write_report=not no_report,
                model_info={"import_path": f"model of {Path(predictions).name}"},
                design={"source": f"predictions file {Path(predictions).name}"},
            )
        finish(result, run_dir, as_json)
