"""``mipkit audit-one-run``: an epsilon lower bound from one training run with canaries (Steinke et al. 2023).

The work is :func:`mipkit.workflows.audit_one_run.run.audit_one_run`; this module maps the flags to the table
and the configuration, prints the result's paragraph and then the bound beside the certificate (or one JSON
object) and exits 1 when the bound exceeds the certificate (a violation) or ``--fail-above``.
"""

from __future__ import annotations

import typer

from mipkit.cli.options import (
    DataOption,
    DropnaOption,
    DropOption,
    EncodeOption,
    JsonOption,
    ParamsOption,
    SeedOption,
    TargetOption,
    comma_names,
    config_from_flags,
    echo_json,
    finding,
    parse_params,
)


def _fractions(text: str, flag: str) -> tuple[float, ...]:
    from mipkit._validation import MipkitValueError

    try:
        return tuple(float(t) for t in str(text).split(",") if t.strip())
    except ValueError:
        raise MipkitValueError(f"{flag} must be comma-separated numbers. Got {text!r}.") from None


def register(app: typer.Typer) -> None:
    @app.command("audit-one-run")
    def audit_one_run(
        data: DataOption = ...,
        target: TargetOption = ...,
        model: str = typer.Option("mipkit.trainers.DPSGDClassifier", "--model", help="Trainer import path."),
        params: ParamsOption = None,
        canaries: int = typer.Option(
            1000, "--canaries", help="m canaries, each included with probability 1/2."
        ),
        canary_kind: str = typer.Option("mislabeled", "--canary-kind", help="mislabeled or records."),
        k_plus: str = typer.Option(
            "0.01,0.02,0.05,0.1,0.2", "--k-plus", help="'In' guess counts to try (fractions of m or counts)."
        ),
        k_minus: str = typer.Option(
            "0", "--k-minus", help="'Out' guess counts to try (fractions of m or counts)."
        ),
        delta: float = typer.Option(None, "--delta", help="Delta of the bound (default: the certificate's)."),
        confidence: float = typer.Option(0.95, "--confidence", help="Confidence of the lower bound."),
        encode: EncodeOption = "none",
        dropna: DropnaOption = False,
        drop: DropOption = None,
        scale: bool = typer.Option(
            True, "--scale/--no-scale", help="Standardise the features (whole table)."
        ),
        seed: SeedOption = 0,
        out: str = typer.Option(None, "--out", help="Run folder for results.json."),
        fail_above: float = typer.Option(
            None, "--fail-above", help="Exit 1 when the lower bound exceeds this."
        ),
        as_json: JsonOption = False,
    ) -> None:
        """Audit DP training in one run: canaries, abstaining guesses and an epsilon lower bound."""
        from mipkit.cli.options import check_count, hold_run_folder
        from mipkit.workflows._records import LabelledTable
        from mipkit.workflows.audit_one_run.config import AuditOneRunConfig
        from mipkit.workflows.audit_one_run.run import audit_one_run as run

        check_count("--canaries", canaries, kind="rows", minimum=None)
        config = config_from_flags(  # the flags named like AuditOneRunConfig's fields, and these
            AuditOneRunConfig,
            drop=comma_names(drop) or (),
            params=parse_params(params),
            k_plus=_fractions(k_plus, "--k-plus"),
            k_minus=_fractions(k_minus, "--k-minus"),
        )
        records = LabelledTable(data, target=target)
        if out is not None:
            hold_run_folder(out)  # checked, and locked until the command ends
        from mipkit.cli._progress import ProgressBar

        with ProgressBar(enabled=not as_json) as bar:
            result = run(records, config, run_dir=out, progress=bar)
        if as_json:
            echo_json(result.to_dict())
        else:
            typer.echo(result.summary())
            typer.echo("")
            typer.echo(result.headline())
        text = result.finding(limit="--fail-above")
        if text is not None:
            raise finding(text)
