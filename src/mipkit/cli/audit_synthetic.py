"""``mipkit audit-synthetic``: audit released synthetic data (NNAA, DCR attack, attribute inference).

The flags become an :class:`~mipkit.workflows.audit_synthetic.AuditSyntheticConfig` and the files a
:class:`~mipkit.workflows.audit_synthetic.SyntheticRelease`; the command runs
:func:`~mipkit.workflows.audit_synthetic.audit_synthetic`, prints the result's DPIA paragraph first, then its
tables and sentences, and writes the run folder with ``result.write``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from mipkit.cli.options import (
    AddressOption,
    FailAboveOption,
    JsonOption,
    NoReportOption,
    RunFolderOption,
    SeedOption,
    flag_table,
)

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from mipkit.workflows.audit_synthetic import AuditSyntheticResult, SyntheticRelease

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
--max-nnaa-rows                                 Cap on each NNAA set (none: the whole tables).
--max-dcr-rows                                  Cap on records scored by DCR (none: all).
--max-protection-rows                           Cap on the synthetic records of the DCR protection
                                                scores (none: all).
--n-jobs                                        Threads for neighbour search (with --backend ray and
                                                no --address: the CPUs of the local Ray).
--backend                                       Where the neighbour searches run: local (threads) or
                                                ray (blocks as Ray tasks, merged exactly).
--block-rows                                    Rows of each side of a Ray block (the memory a task
                                                holds follows from it).
--checks                                        Parts of the audit to run: nnaa, dcr, inference.
--attacks                                       Attribute-inference attacks: nearest, model or both.
--non-member-baseline/--no-non-member-baseline  Run each inference attack on the original without the
                                                targets (Francis & Wagner); without it only the
                                                most-frequent value is a baseline.
--n-refits                                      Refits of the model attack and its baseline on bootstrap
                                                resamples, in the inference interval (0: targets only).
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
#: The config fields whose flag is not the field's name in kebab case.
FIELD_FLAGS = {"secrets": "--secret", "random_state": "--seed"}


def _print_human(result: AuditSyntheticResult, run_dir: Path, report: bool) -> None:
    """The DPIA paragraph (one line), then the headline table and the plain-language sentences."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    typer.echo(result.summary())
    typer.echo("")
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
    if result.certified is not None:
        from mipkit.synthesizers.audit_bounds import certified_lines

        for line in certified_lines(result.certified):
            typer.echo(f"- {line}")
    if result.quality is not None:
        from mipkit.report.synthetic_quality import QUALITY_FILE, quality_sentences

        for line in quality_sentences(result.quality):
            typer.echo(f"- Utility: {line}")
        typer.echo(f"Utility report: {run_dir / QUALITY_FILE}")


def _parse_linkability(text: str | None) -> list[tuple[str, ...]] | None:
    """``--linkability "a,b;c,d"``: two comma lists of columns separated by a semicolon."""
    from mipkit._validation import MipkitValueError
    from mipkit.cli.options import comma_names

    if text is None:
        return None
    parts = [comma_names(half) for half in str(text).split(";")]
    if len(parts) != 2 or not all(parts):
        raise MipkitValueError(
            "--linkability must be two comma-separated column lists separated by ';' "
            f'(e.g. "age,sex;education,hr_per_week"). Got {text!r}.'
        )
    return parts


def _cap(flag: str, text: str) -> int | None:
    """A cap flag: a whole number of rows, or ``none`` (no cap: the whole table)."""
    from mipkit._validation import MipkitValueError

    value = str(text).strip().lower()
    if value == "none":
        return None
    try:
        return int(value)
    except ValueError:
        raise MipkitValueError(f"{flag} must be a whole number of rows or 'none'. Got {text!r}.") from None


def _check_limits(seed: int, n_jobs: int, n_refits: int, **sizes: int | None) -> None:
    """The seed, the threads, the refits and the size flags within the command line's limits
    (:func:`mipkit.cli.options.check_count`; ``n_refits >= 0`` is the config's rule)."""
    from mipkit.cli.options import check_count, check_n_jobs, check_seed

    check_count("--n-refits", n_refits, kind="fits", minimum=None)
    for name, value in sizes.items():
        check_count("--" + name.replace("_", "-"), value, kind="rows")
    check_seed(seed)
    check_n_jobs(n_jobs, negative=False)


def _show(result: AuditSyntheticResult, run_dir: Path, as_json: bool, report: bool) -> None:
    """Print the result (one JSON object, or the paragraph and the tables); a finding exits 1."""
    import json

    from mipkit.cli.options import finding

    if as_json:
        typer.echo(json.dumps({**result.json_summary(), "run_dir": str(run_dir)}))
    else:
        _print_human(result, run_dir, report=report)
    verdict = result.verdict
    if verdict["status"] == "finding":
        policy = f"--fail-above {verdict['fail_above']:g}, --fail-metric {verdict['metric']}"
        raise finding(f"{verdict['reason']} ({policy}).")


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


def _certificate(path: str | None) -> Any:
    """The synthesizer's certificate, read and checked whole (None without ``--certificate``)."""
    if not path:
        return None
    from mipkit.synthesizers.certificate import SynthesisCertificate

    return SynthesisCertificate.read(path)


def _release(paths: dict[str, str | None], certificate: Any) -> SyntheticRelease:
    """The tables read from their files, with the certificate and their provenance."""
    from mipkit.data.io import read_table
    from mipkit.workflows.audit_synthetic import SyntheticRelease

    tables = {name: read_table(path) if path else None for name, path in paths.items()}
    return SyntheticRelease(**tables, certificate=certificate, sources=_sources(**paths))


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
        max_nnaa_rows: Annotated[str, FLAGS["--max-nnaa-rows"]] = "20000",
        max_dcr_rows: Annotated[str, FLAGS["--max-dcr-rows"]] = "50000",
        max_protection_rows: Annotated[str, FLAGS["--max-protection-rows"]] = "10000",
        seed: SeedOption = 0,
        n_jobs: Annotated[int, FLAGS["--n-jobs"]] = 2,
        backend: Annotated[str, FLAGS["--backend"]] = "local",
        address: AddressOption = None,
        block_rows: Annotated[int, FLAGS["--block-rows"]] = 20000,
        out: RunFolderOption = ...,
        as_json: JsonOption = False,
        fail_above: FailAboveOption = None,
        fail_metric: Annotated[str, FLAGS["--fail-metric"]] = "headline",
        checks: Annotated[str, FLAGS["--checks"]] = "nnaa,dcr,inference",
        attacks: Annotated[str, FLAGS["--attacks"]] = "nearest,model",
        non_member_baseline: Annotated[bool, FLAGS["--non-member-baseline/--no-non-member-baseline"]] = True,
        n_refits: Annotated[int, FLAGS["--n-refits"]] = 20,
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
        id_column: str | None = typer.Option(
            None,
            "--id-column",
            help="A column that names the records (e.g. person): left out of every comparison; the synthetic "
            "table may lack it.",
        ),
    ) -> None:
        """Audit synthetic data: NNAA privacy loss, DCR attack, attribute inference vs non-member baseline."""
        # long only by its option declarations
        from mipkit.cli._progress import ProgressBar
        from mipkit.cli.flag_errors import flag_errors
        from mipkit.cli.options import comma_names, config_from_flags, hold_run_folder
        from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, audit_synthetic

        cert = _certificate(certificate)  # a bad file fails before anything is run or written
        caps = {name: _cap(f"--{name.replace('_', '-')}", value) for name, value in
                (("max_nnaa_rows", max_nnaa_rows), ("max_dcr_rows", max_dcr_rows),
                 ("max_protection_rows", max_protection_rows))}  # fmt: skip
        _check_limits(seed, n_jobs, n_refits, n_attacks=n_attacks, singling_out=singling_out,
                      singling_out_cols=singling_out_cols, block_rows=block_rows,
                      linkability_neighbors=linkability_neighbors, **caps)  # fmt: skip
        with flag_errors("audit_synthetic", FIELD_FLAGS):
            config = config_from_flags(
                AuditSyntheticConfig, secrets=tuple(secret or ()), known=tuple(known) if known else None,
                checks=comma_names(checks), attacks=comma_names(attacks), random_state=seed,
                linkability=_parse_linkability(linkability), **caps,
            )  # fmt: skip
        hold_run_folder(out)  # checked, and locked until the command ends
        if not no_report:  # Matplotlib loads while the data are read and audited
            from mipkit.report.html import preload_plotting

            preload_plotting()
        paths = {"original": original, "synthetic": synthetic, "control": control, "holdout": holdout}
        data = _release(paths, cert)
        with ProgressBar(enabled=not as_json) as bar, flag_errors("audit_synthetic", FIELD_FLAGS):
            result = audit_synthetic(data, config, progress=bar)
        run_dir = result.write(out, report=not no_report, target_outcomes=include_target_outcomes)
        _show(result, run_dir, as_json, report=not no_report)
