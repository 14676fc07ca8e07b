"""``mipkit audit``: membership-inference audit of a trainer on a table (LiRA's evaluation protocol).

The flags map to the records audited (:class:`mipkit.workflows._records.LabelledTable`: ``--data``,
``--target``, ``--id-column``) and to :class:`mipkit.workflows.audit.config.AuditConfig`; the command calls
:func:`mipkit.workflows.audit.run.audit`, prints ``result.summary()`` and then the tables
(:mod:`mipkit.report.audit_console`).

Every flag has a config key: ``--config FILE`` reads a YAML or JSON mapping whose keys are the flag names
(``models: 8``, ``n-jobs: 1`` or ``n_jobs: 1``, ``json: true``, ...; the names of ``AuditConfig``'s fields,
such as ``n_models``, are accepted too). The file supplies defaults and flags given on the command line
override it. Heavy modules (pandas, scikit-learn, the workflow) are imported inside the command, so that
``mipkit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

from mipkit.cli.options import (
    AddressOption,
    AllowModelOption,
    ConfidenceOption,
    DataOption,
    DropnaOption,
    DropOption,
    EncodeOption,
    FailAboveOption,
    FailMetricOption,
    FprsOption,
    JsonOption,
    NoReportOption,
    OverrideOption,
    ParamsOption,
    QuietOption,
    RunFolderOption,
    SeedOption,
    TargetOption,
    check_config_types,
    comma_floats,
    comma_names,
    config_from_flags,
    finish_audit,
    parse_params,
)

DEFAULTS = {
    "attacks": "loss,lira,rmia",
    "models": 16,
    "seed": 0,
    "out": "runs/audit",
    "backend": "local",
    "n_jobs": -1,
    "encode": "none",
    "fprs": "0.001,0.01,0.1",
    "base_rates": "1:1,1:10,1:100,1:1000",
    "ltu_strategy": "loss",
    "confidence": 0.95,
    "fail_metric": "eta",
    "n_boot": 1000,
}
"""The command's defaults; the same values as :class:`AuditConfig`'s (checked by the tests)."""

HELP = "Audit a trainer: K models on random halves, LOSS/LiRA/RMIA/LTU attacks, metrics and a report."
FLAG_OF_FIELD = {"n_models": "models", "n_targets": "targets"}
"""Config keys named after AuditConfig fields whose flag has another name."""
FLAG_OF_KEY = {"json": "as_json"}
"""Config keys whose parameter name differs from the flag (``--json`` is ``as_json`` in Python)."""


def read_config_file(path: str | Path) -> dict:
    """Read a YAML or JSON config file into a dict."""
    import yaml

    from mipkit._validation import MipkitValueError
    from mipkit.data.json_input import MAX_JSON_DEPTH, read_input_bytes

    p = Path(path)
    raw = read_input_bytes(p, "config file")
    try:
        text = raw.decode("utf-8")
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):  # iterative: bounds before composing
            if isinstance(event, yaml.AliasEvent):
                raise MipkitValueError(f"The config {p} uses a YAML alias (*name); write the value out.")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise MipkitValueError(f"The config {p} nests deeper than {MAX_JSON_DEPTH} levels.")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        data = yaml.safe_load(text)
    except MipkitValueError:
        raise
    except UnicodeDecodeError as err:
        raise MipkitValueError(f"The config {p} is not UTF-8 text (byte {err.start + 1}).") from None
    except yaml.YAMLError as err:
        raise MipkitValueError(f"Could not read config {p}: {str(err).splitlines()[0]}") from None
    except ValueError as err:  # an integer of thousands of digits
        raise MipkitValueError(f"Could not read config {p}: {err}.") from None
    if not isinstance(data, dict):
        raise MipkitValueError(f"The config {p} must hold a mapping of settings.")
    return data


def config_defaults(data: dict, params: list[str]) -> dict:
    """Config-file keys -> ``{parameter name: value}`` for click's ``default_map`` (lists joined by commas,
    ``params`` as JSON); unknown keys are refused with the list of known ones."""
    import json

    from mipkit._validation import MipkitValueError

    known = [p for p in params if p != "config"]
    out, unknown = {}, []
    for key, value in data.items():
        name = str(key).replace("-", "_")
        name = FLAG_OF_KEY.get(name, FLAG_OF_FIELD.get(name, name))
        if name not in known:
            unknown.append(str(key))
            continue
        if name == "params" and isinstance(value, dict):
            value = json.dumps(value)
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        out[name] = value
    if unknown:
        keys = sorted({("json" if k == "as_json" else k) for k in known})
        raise MipkitValueError(
            f"Unknown config key(s): {', '.join(sorted(unknown))}. Known: {', '.join(keys)} "
            "(and n_models, n_targets)."
        )
    return out


def _load_config(ctx: typer.Context, value: str | None) -> str | None:
    """Eager ``--config`` callback: the file's values become the defaults of the other flags."""
    if value:
        params = [p.name for p in ctx.command.params]
        loaded = check_config_types(config_defaults(read_config_file(value), params), ctx.command)
        ctx.default_map = {**(ctx.default_map or {}), **loaded}
    return value


def register(app: typer.Typer) -> None:
    """Add ``mipkit audit`` to ``app`` (long only by the command's option declarations)."""

    @app.command("audit", help=HELP)
    def audit(
        ctx: typer.Context,
        data: DataOption = None,
        target: TargetOption = None,
        model: str = typer.Option(
            ..., "--model", help="Trainer import path, e.g. sklearn.linear_model.LogisticRegression."
        ),
        params: ParamsOption = None,
        attacks: str = typer.Option(
            DEFAULTS["attacks"], "--attacks", help="Comma-separated subset of loss, lira, rmia, ltu."
        ),
        models: int = typer.Option(
            DEFAULTS["models"], "--models", help="K models on random halves (even, >= 4)."
        ),
        targets: int = typer.Option(
            None,
            "--targets",
            help="How many models serve in turn as the target.",
            show_default="min(K, 8)",
        ),
        seed: SeedOption = DEFAULTS["seed"],
        out: RunFolderOption = DEFAULTS["out"],
        backend: str = typer.Option(DEFAULTS["backend"], "--backend", help="local (joblib) or ray."),
        address: AddressOption = None,
        n_jobs: int = typer.Option(
            DEFAULTS["n_jobs"], "--n-jobs", help="Parallel fits for the local backend (-1: all cores)."
        ),
        encode: EncodeOption = DEFAULTS["encode"],
        dropna: DropnaOption = False,
        drop: DropOption = None,
        id_column: str = typer.Option(
            None,
            "--id-column",
            help="Column of unique record ids: never a feature; named in scores.parquet and the report "
            "(without it, records are named by their row in the table).",
        ),
        slice_by: str = typer.Option(
            None,
            "--slice-by",
            help="Comma-separated columns (features or not) whose subgroups get AUC, TPR@FPR and eta with "
            "intervals; the true class ('label') is always sliced.",
        ),
        max_records: int = typer.Option(
            None, "--max-records", help="Seeded random subsample of this many records."
        ),
        fprs: FprsOption = DEFAULTS["fprs"],
        base_rates: str = typer.Option(
            DEFAULTS["base_rates"],
            "--base-rates",
            help="Membership base rates for precision, as fractions or members:non-members.",
        ),
        ltu_strategy: str = typer.Option(
            DEFAULTS["ltu_strategy"], "--ltu-strategy", help="loss (on the audit's fits) or retrain."
        ),
        ltu_rounds: int = typer.Option(
            None, "--ltu-rounds", help="Rounds of the retrain strategy.", show_default="50"
        ),
        certified_eta: float = typer.Option(
            None, "--certified-eta", help="A MIP certificate to draw next to the measurement."
        ),
        confidence: ConfidenceOption = DEFAULTS["confidence"],
        config: str = typer.Option(
            None,
            "--config",
            help="YAML/JSON file whose keys are these flags' names (flags given here override it).",
            callback=_load_config,
            is_eager=True,
        ),
        fail_above: FailAboveOption = None,
        fail_metric: FailMetricOption = DEFAULTS["fail_metric"],
        scale: bool = typer.Option(
            False,
            "--scale/--no-scale",
            help="Standardise the features inside the trainer (Pipeline(StandardScaler(), model)).",
        ),
        include_labels: bool = typer.Option(
            False,
            "--include-labels/--no-include-labels",
            help="Keep the records' labels in scores.parquet and the report (off: they are real data).",
        ),
        n_boot: int = typer.Option(
            DEFAULTS["n_boot"], "--n-boot", help="Replicates of the cluster bootstrap of the intervals."
        ),
        as_json: JsonOption = False,
        allow_model: AllowModelOption = None,
        yes_i_mean_it: OverrideOption = False,
        quiet: QuietOption = False,
        no_report: NoReportOption = False,
    ) -> None:
        """The ``mipkit audit`` command: its flags only (one per setting of AuditConfig, plus the records, the
        run folder and the output), hence its length; :func:`_run` does the rest."""
        _run(ctx)  # long only by its option declarations


def _run(ctx: typer.Context) -> None:
    """Flags to the records and the config, the audit, then its paragraph and tables (exit 1 on a finding)."""
    from mipkit._runfolder import lock_run_folder
    from mipkit.cli._progress import ProgressBar, fits_label
    from mipkit.cli.options import allow_models, check_count, check_out_folder
    from mipkit.report.audit_console import json_view, print_human
    from mipkit.workflows._records import LabelledTable
    from mipkit.workflows.audit.config import AuditConfig
    from mipkit.workflows.audit.run import audit

    flags = ctx.params
    config = config_from_flags(  # the flags named like AuditConfig's fields, and these
        AuditConfig,
        params=parse_params(flags["params"]),
        attacks=comma_names(flags["attacks"]),
        n_models=flags["models"],
        n_targets=flags["targets"],
        drop=comma_names(flags["drop"]) or (),
        fprs=comma_floats(flags["fprs"], "--fprs"),
        base_rates=comma_floats(flags["base_rates"], "--base-rates"),
        slice_by=comma_names(flags["slice_by"]) or (),
    )
    records = LabelledTable(flags["data"], target=flags["target"], id_column=flags["id_column"])
    allow_models(ctx, flags["allow_model"])
    check_count("--models", config.n_models, kind="models", minimum=None, override=flags["yes_i_mean_it"])
    check_count("--targets", config.n_targets, kind="targets", minimum=None)
    check_count("--ltu-rounds", config.ltu_rounds, kind="fits")
    run_dir = check_out_folder(flags["out"])
    labels = {"model fits": fits_label(config.backend, config.n_jobs, config.address)}
    shown = not (flags["quiet"] or flags["as_json"])
    with ProgressBar(enabled=shown, labels=labels) as progress, lock_run_folder(run_dir):
        result = audit(records, config, run_dir=run_dir, progress=progress, report=not flags["no_report"])

    def show(results: dict, folder: Path) -> None:
        typer.echo(result.summary())
        typer.echo("")
        print_human(results, folder, paragraph=False)

    finish_audit(result, run_dir, flags["as_json"], json_view, show)
