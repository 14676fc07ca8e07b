"""``mipkit audit-synthetic``: audit released synthetic data (NNAA, DCR attack, attribute inference)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from mipkit.cli.options import (
    FailAboveOption,
    JsonOption,
    NoReportOption,
    RunFolderOption,
    SeedOption,
    flag_table,
)

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from mipkit.workflows.audit_synthetic.run import SyntheticAuditResult

# -- this command's own flags (the shared ones are in mipkit.cli.options) --
FLAGS = flag_table(
    """
--original                                      Training data of the generator (CSV/Parquet).
--synthetic                                     The synthetic data (CSV/Parquet).
--control                                       Real records not used for training (anonymeter).
--holdout                                       Real records not used for training (DCR / NNAA).
--secret                                        Column to infer (repeatable).
--known                                         Column the attacker knows (repeatable; default: all
                                                other columns).
--n-attacks                                     Inference targets per secret (and linkability targets).
--tolerance                                     Numeric secrets: share of the range.
--metric                                        mixed (range-L1 + mismatch) or euclidean.
--fail-metric                                   Metric of the policy: headline (default: NNAA, exact and
                                                near copies and inference, corrected for multiplicity),
                                                privacy_loss (NNAA), dcr_auc or inference_pi.
--max-nnaa-rows                                 Cap on each NNAA set.
--max-dcr-rows                                  Cap on records scored by DCR.
--n-jobs                                        Threads for neighbour search.
--checks                                        Parts of the audit to run: nnaa, dcr, inference.
--attacks                                       Attribute-inference attacks: nearest, model or both.
--non-member-baseline/--no-non-member-baseline  Run each inference attack on the original without the
                                                targets (Francis & Wagner); without it only the
                                                most-frequent value is a baseline.
--include-data-summary                          Also write the original's numeric minimum and range to
                                                results.json (real values).
--certificate                                   The synthesizer's certificate.json: certified bounds
                                                beside the measured ones.
--include-target-outcomes                       Also write whether each inference guess was right to
                                                inference.parquet (it tells each target's secret).
--singling-out                                  Singling-out attack: this many predicates per mode
                                                (univariate, multivariate), against the non-member
                                                records. Off by default.
--singling-out-cols                             Conditions per multivariate singling-out predicate.
--linkability                                   Linkability attack: the attacker's two column subsets,
                                                e.g. "age,sex;education,race", joined through the
                                                nearest synthetic records. Off by default.
--linkability-neighbors                         Nearest synthetic records per half that may link them.
"""
)


def _print_human(result: SyntheticAuditResult, run_dir: Path, report: bool) -> None:
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
    if report:
        console.print(f"Report: {run_dir / 'report.html'}")
    else:
        console.print(f"Report: not written (--no-report); `mipkit report {run_dir}` writes it.")


def _check_policy(fail_above: float | None, fail_metric: str) -> tuple[float | None, str]:
    """``--fail-above`` (a finite number) and ``--fail-metric`` (one of the verdict metrics)."""
    import math

    from mipkit._validation import MipkitValueError
    from mipkit.workflows.audit_synthetic.verdict import VERDICT_METRICS

    if fail_metric not in VERDICT_METRICS:
        raise MipkitValueError(
            f"--fail-metric must be one of {', '.join(VERDICT_METRICS)}. Got {fail_metric!r}."
        )
    if fail_above is not None and not (math.isfinite(fail_above) and -1.0 <= fail_above <= 1.0):
        raise MipkitValueError(f"--fail-above must be a number in [-1, 1]. Got {fail_above}.")
    return fail_above, fail_metric


def _check_list(flag: str, text: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A comma list of some of ``allowed`` (``--attacks``, ``--checks``)."""
    from mipkit._validation import MipkitValueError

    items = tuple(dict.fromkeys(a.strip() for a in str(text).split(",") if a.strip()))
    if not items or any(a not in allowed for a in items):
        raise MipkitValueError(
            f"{flag} must list some of {', '.join(allowed)} (comma-separated). Got {text!r}."
        )
    return items


def _check_linkability(text: str | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``--linkability "a,b;c,d"``: two comma lists of columns separated by a semicolon."""
    from mipkit._validation import MipkitValueError

    if text is None:
        return None
    halves = str(text).split(";")
    parts = [tuple(dict.fromkeys(c.strip() for c in h.split(",") if c.strip())) for h in halves]
    if len(parts) != 2 or not all(parts):
        raise MipkitValueError(
            "--linkability must be two comma-separated column lists separated by ';' "
            f'(e.g. "age,sex;education,hr_per_week"). Got {text!r}.'
        )
    return parts[0], parts[1]


def _sources(**paths: str | None) -> dict:
    """File name and SHA-256 (first 16 hex digits) of each input file, for the report's provenance."""
    import hashlib
    from pathlib import Path

    out = {}
    for name, path in paths.items():
        if not path:
            continue
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        out[name] = f"{Path(path).name} (sha256 {h.hexdigest()[:16]})"
    return out


def register(app: typer.Typer) -> None:
    @app.command("audit-synthetic")
    def audit_synthetic_cmd(
        original: Annotated[str, FLAGS["--original"]] = ...,
        synthetic: Annotated[str, FLAGS["--synthetic"]] = ...,
        control: Annotated[str | None, FLAGS["--control"]] = None,
        holdout: Annotated[str | None, FLAGS["--holdout"]] = None,
        secret: Annotated[list[str] | None, FLAGS["--secret"]] = None,
        known: Annotated[list[str] | None, FLAGS["--known"]] = None,
        n_attacks: Annotated[int, FLAGS["--n-attacks"]] = 500,
        tolerance: Annotated[float, FLAGS["--tolerance"]] = 0.05,
        metric: Annotated[str, FLAGS["--metric"]] = "mixed",
        max_nnaa_rows: Annotated[int, FLAGS["--max-nnaa-rows"]] = 20000,
        max_dcr_rows: Annotated[int, FLAGS["--max-dcr-rows"]] = 50000,
        seed: SeedOption = 0,
        n_jobs: Annotated[int, FLAGS["--n-jobs"]] = 2,
        out: RunFolderOption = ...,
        as_json: JsonOption = False,
        fail_above: FailAboveOption = None,
        fail_metric: Annotated[str, FLAGS["--fail-metric"]] = "headline",
        checks: Annotated[str, FLAGS["--checks"]] = "nnaa,dcr,inference",
        attacks: Annotated[str, FLAGS["--attacks"]] = "nearest,model",
        non_member_baseline: Annotated[bool, FLAGS["--non-member-baseline/--no-non-member-baseline"]] = True,
        include_data_summary: Annotated[bool, FLAGS["--include-data-summary"]] = False,
        certificate: Annotated[str | None, FLAGS["--certificate"]] = None,
        include_target_outcomes: Annotated[bool, FLAGS["--include-target-outcomes"]] = False,
        singling_out: Annotated[int | None, FLAGS["--singling-out"]] = None,
        singling_out_cols: Annotated[int, FLAGS["--singling-out-cols"]] = 3,
        linkability: Annotated[str | None, FLAGS["--linkability"]] = None,
        linkability_neighbors: Annotated[int, FLAGS["--linkability-neighbors"]] = 1,
        no_report: NoReportOption = False,
        quality_target: str | None = typer.Option(
            None,
            "--quality-target",
            help="Add a utility report (column shapes, pair trends, train on synthetic / test on real on "
            "--holdout or --control) for this two-class column: quality.html and a 'quality' block.",
        ),
    ) -> None:
        """Audit synthetic data: NNAA privacy loss, DCR attack, attribute inference vs non-member baseline."""
        import json

        from mipkit._validation import MipkitValueError
        from mipkit.cli._progress import FitProgress
        from mipkit.cli.options import check_count, check_n_jobs, check_seed, finding, hold_run_folder
        from mipkit.data.io import read_table
        from mipkit.workflows.audit_synthetic.run import audit_synthetic

        cert = None
        if certificate:  # parsed and checked whole first: a bad file fails before anything is run or written
            from mipkit.synthesize.certificate import SynthesisCertificate

            cert = SynthesisCertificate.read(certificate)
        if n_attacks < 1:
            raise MipkitValueError(f"--n-attacks must be >= 1. Got {n_attacks}.")
        for flag, rows in (
            ("--n-attacks", n_attacks),
            ("--max-nnaa-rows", max_nnaa_rows),
            ("--max-dcr-rows", max_dcr_rows),
        ):
            check_count(flag, rows, kind="rows")
        check_count("--singling-out", singling_out, kind="rows")
        check_count("--singling-out-cols", singling_out_cols, kind="rows")
        check_count("--linkability-neighbors", linkability_neighbors, kind="rows")
        check_seed(seed)
        check_n_jobs(n_jobs, negative=False)
        aux = _check_linkability(linkability)
        hold_run_folder(out)  # checked, and locked until the command ends
        if not 0 <= tolerance <= 1:
            raise MipkitValueError(f"--tolerance must be in [0, 1]. Got {tolerance}.")
        policy = _check_policy(fail_above, fail_metric)
        attack_list = _check_list("--attacks", attacks, ("nearest", "model"))
        check_list = _check_list("--checks", checks, ("nnaa", "dcr", "inference"))
        if not no_report:  # Matplotlib loads while the data are read and audited
            from mipkit.report.html import preload_plotting

            preload_plotting()
        tables = {
            "original": read_table(original),
            "synthetic": read_table(synthetic),
            "control": read_table(control) if control else None,
            "holdout": read_table(holdout) if holdout else None,
        }
        if quality_target is not None and quality_target not in tables["original"].columns:
            raise MipkitValueError(f"--quality-target {quality_target!r} is not a column of {original}.")
        n_columns = tables["original"].shape[1]
        if singling_out is not None and singling_out_cols > n_columns:
            raise MipkitValueError(
                f"--singling-out-cols must be at most {n_columns} (the number of columns). "
                f"Got {singling_out_cols}."
            )
        with FitProgress(enabled=not as_json) as bar:
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
                checks=check_list,
                attacks=attack_list,
                non_member_baseline=non_member_baseline,
                fail_above=policy[0],
                fail_metric=policy[1],
                sources=_sources(original=original, synthetic=synthetic, control=control, holdout=holdout),
                include_data_summary=include_data_summary,
                random_state=seed,
                n_jobs=n_jobs,
                progress=bar.stage,
                singling_out=singling_out,
                singling_out_cols=singling_out_cols,
                linkability=aux,
                linkability_neighbors=linkability_neighbors,
            )
        quality = None
        if quality_target is not None:
            from mipkit.synthesize.quality_report import quality_report

            test = tables["holdout"] if tables["holdout"] is not None else tables["control"]
            quality = quality_report(tables["original"], tables["synthetic"], target=quality_target,
                                     test=test, seed=seed)  # fmt: skip
        certified = None
        if cert is not None:  # computed before anything is written: the run's files are committed together
            from mipkit.synthesize.audit_bounds import certified_audit_bounds, certified_lines

            certified = certified_audit_bounds(cert, result)
        run_dir = result.write(
            out, report=not no_report, certified=certified, target_outcomes=include_target_outcomes
        )
        if quality is not None:
            from mipkit.report.synthetic_quality import quality_sentences, write_quality_page

            write_quality_page(run_dir, quality)
        if as_json:
            extra = {} if certified is None else {"certified": certified}
            extra.update({} if quality is None else {"quality": quality})
            typer.echo(json.dumps({**result.summary(), "run_dir": str(run_dir), **extra}))
        else:
            _print_human(result, run_dir, report=not no_report)
            for line in certified_lines(certified) if certified is not None else []:
                typer.echo(f"- {line}")
            for line in quality_sentences(quality) if quality is not None else []:
                typer.echo(f"- Utility: {line}")
            if quality is not None:
                typer.echo(f"Utility report: {run_dir / 'quality.html'}")
        verdict = result.verdict
        if verdict["status"] == "finding":
            policy = f"--fail-above {verdict['fail_above']:g}, --fail-metric {verdict['metric']}"
            raise finding(f"{verdict['reason']} ({policy}).")
