"""``mipkit audit-one-run``: an epsilon lower bound from one training run with canaries (Steinke et al. 2023).

The work is :func:`mipkit.workflows.audit_one_run.run.run_one_run_audit`; this module maps the flags to its
configuration, prints the bound beside the certificate (or one JSON object) and exits 1 when the bound
exceeds the certificate (a violation) or ``--fail-above``.
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
        import math

        from mipkit._validation import MipkitValueError
        from mipkit.cli.options import check_count, hold_run_folder
        from mipkit.workflows.audit_one_run.run import OneRunConfig, run_one_run_audit

        check_count("--canaries", canaries, kind="rows", minimum=None)
        if fail_above is not None and not math.isfinite(fail_above):
            raise MipkitValueError(
                f"--fail-above must be a finite number (a NaN limit never fails). Got {fail_above}."
            )
        cfg = config_from_flags(  # the flags named like OneRunConfig's fields, and these
            OneRunConfig,
            drop=comma_names(drop) or (),
            params=parse_params(params),
            k_plus=_fractions(k_plus, "--k-plus"),
            k_minus=_fractions(k_minus, "--k-minus"),
        )
        if out is not None:
            hold_run_folder(out)  # checked, and locked until the command ends
        res = run_one_run_audit(cfg, out)
        d = res.to_dict()
        if as_json:
            echo_json(d)
        else:
            typer.echo(
                f"One-run audit: epsilon >= {d['epsilon_lower']:.4g} at delta {d['delta']:g} "
                f"({100 * d['confidence']:g}% confidence; {d['correct']} of {d['guesses']} guesses right, "
                f"{d['canaries']} canaries)."
            )
            if d["certified_epsilon"] is not None:
                typer.echo(
                    f"Certified (add/remove): epsilon <= {d['certified_epsilon']:.4g}: {d['verdict']}."
                )
        exceeds = f"the measured lower bound {d['epsilon_lower']:.4g} exceeds"
        if res.violation:
            raise finding(f"{exceeds} the certified epsilon {d['certified_epsilon']:.4g}.")
        if fail_above is not None and d["epsilon_lower"] > float(fail_above):
            raise finding(f"{exceeds} --fail-above {float(fail_above):g}.")
