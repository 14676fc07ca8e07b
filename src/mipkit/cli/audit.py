"""``mipkit audit``: membership-inference audit of a trainer on a table (LiRA's evaluation protocol).

Every flag has a config key: ``--config FILE`` reads a YAML or JSON mapping whose keys are the flag names
(``models: 8``, ``n-jobs: 1`` or ``n_jobs: 1``, ``json: true``, ...; the names of
:class:`mipkit.workflows.audit.run.AuditConfig`'s fields, such as ``n_models``, are accepted too). The file
supplies defaults and flags given on the command line override it. Heavy modules (pandas, scikit-learn, the
workflow) are imported inside the command, so that ``mipkit --help`` stays fast.
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


def json_view(results: dict, run_dir: Path) -> dict:
    """The ``--json`` object: the headline numbers and per-attack metrics without curves/histograms."""
    attacks = {}
    for name, a in results["attacks"].items():
        attacks[name] = {k: v for k, v in a.items() if k not in ("roc", "histogram", "tpr_at_fpr_detail")}
        if a.get("tpr_at_fpr_detail"):
            attacks[name]["tpr_at_fpr_ci"] = {k: d["tpr_ci"] for k, d in a["tpr_at_fpr_detail"].items()}
    return {
        "auc": results["auc"],
        "tpr_at_fpr": results["tpr_at_fpr"],
        "eta": results["eta"],
        "eta_ci": results["eta_ci"],
        "strongest_attack": results["strongest_attack"],
        "balanced_accuracy": results["balanced_accuracy"],
        "attacks": attacks,
        "certificate": results.get("certificate"),
        "certified": results.get("certified"),
        "utility": results.get("utility"),
        "game": results.get("game"),
        "verdict": results.get("verdict"),
        "headline": results.get("headline"),
        "provenance": results.get("provenance"),
        "records": results.get("records"),
        "slices": results.get("slices"),
        "run_dir": str(run_dir),
        "report": str(run_dir / "report.html") if (run_dir / "report.html").is_file() else None,
    }


def print_human(results: dict, run_dir: Path, *, paragraph: bool = True) -> None:
    """The human-readable answer: the DPIA paragraph (:func:`mipkit.report.dpia.audit_paragraph`; off where
    the caller printed it), then the attacks' table, the subgroups and the plain summary."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from mipkit.report.audit_report import plain_summary

    if paragraph:
        print_paragraph(results)
    console = Console()
    fitted = (results.get("question") or {}).get("answered") == "this fitted model"  # record bootstrap
    cluster = "[95% CI]" if fitted or not results.get("headline") else "[95% cluster CI]"
    table = Table(title="Membership-inference audit", show_lines=False)
    fprs = list(results["tpr_at_fpr"])
    for col in ["attack", "AUC", *[f"TPR@{f}" for f in fprs], f"eta {cluster}"]:
        table.add_column(col, justify="right")
    for name, a in results["attacks"].items():
        if a.get("auc") is None:
            table.add_row(
                name,
                f"pairs {a['accuracy']:.3f}",
                *["" for _ in fprs],
                f"privacy {a['privacy']:.2f}+-{a['privacy_error']:.2f}",
            )
            continue
        ci = a.get("eta_ci_cluster") or a["eta_ci"]
        table.add_row(
            name,
            f"{a['auc']:.3f}",
            *[f"{a['tpr_at_fpr'][f]:.3f}" for f in fprs],
            escape(f"{a['eta']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"),
        )
    console.print(table)
    print_slices(console, results)
    for line in plain_summary(results):
        console.print(escape(f"- {line}"))
    console.print(escape(f"Report: {run_dir / 'report.html'}"))


def print_paragraph(results: dict) -> None:
    """The one paragraph a privacy officer can paste into a DPIA, on one line, then a blank line."""
    from mipkit.report.dpia import audit_paragraph

    typer.echo(audit_paragraph(results))
    typer.echo("")


def _two_lines(value: float | None, ci, digits: int, scale: float = 1.0, unit: str = "") -> str:
    if value is None:
        return ""
    text = f"{scale * value:.{digits}f}{unit}"
    return text if not ci else f"{text}\n[{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"


def print_slices(console, results: dict) -> None:
    """The per-subgroup table (``results["slices"]``) as a Rich table (estimate above its interval), then how
    numeric columns were binned and which subgroups are more exposed."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    slices = results.get("slices")
    if not slices or not slices.get("overall"):
        return
    columns = slices.get("columns") or {}
    fprs = list(slices["overall"].get("tpr_at_fpr") or {})
    conf = f"{100 * float(slices.get('confidence', 0.95)):g}%"
    title = f"Subgroups ({slices.get('attack')}; {conf} cluster intervals)"
    table = Table(title=title, show_lines=True, box=box.SIMPLE_HEAD)
    rows = [slices["overall"], *slices["groups"]]
    names = ["all records", *[f"{r['column']} = {r['group']}" for r in slices["groups"]]]
    table.add_column("subgroup", min_width=min(max(map(len, names)), 40))
    for col in ["feature", "records", "trials in/out", "AUC", *[f"TPR@{f}" for f in fprs], "eta"]:
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("more exposed", no_wrap=True)
    for name, r in zip(names, rows, strict=True):
        info = columns.get(r["column"], {})
        kind = (
            "target"
            if info.get("kind") == "true class"
            else {True: "yes", False: "no"}.get(info.get("is_feature"), "")
        )
        cells = [name, kind, str(r["n_records"]), f"{r['member_trials']}/{r['nonmember_trials']}"]
        if r.get("auc") is None:
            cells += ["too few records", *["" for _ in fprs], "", ""]
        else:
            cells.append(_two_lines(r["auc"], r["auc_ci"], 3))
            cells += [_two_lines(r["tpr_at_fpr"][f], r["tpr_at_fpr_ci"][f], 1, 100, "%") for f in fprs]
            cells.append(_two_lines(r["eta"], r["eta_ci"], 3))
            flag = r.get("more_exposed")
            cells.append(
                "" if flag is None else ("yes: " + ", ".join(r["more_exposed_by"]) if flag else "no")
            )
        table.add_row(*[escape(c) for c in cells])
    if not console.is_terminal:  # a file or a pipe: no terminal to fit, keep the rows whole
        console = Console(width=max(console.width, 180))
    console.print(table)
    for column, info in columns.items():
        if info.get("binning"):
            console.print(escape(f"{column}: {info['binning']}."))
    flagged = [f"{r['column']} = {r['group']}" for r in slices["groups"] if r.get("more_exposed")]
    console.print(
        escape(
            (
                "More exposed subgroups: " + "; ".join(flagged)
                if flagged
                else "No subgroup is measurably more exposed than all records"
            )
            + f" ({slices.get('rule')})."
        )
    )


def register(app: typer.Typer) -> None:
    @app.command("audit")
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
        """Audit a trainer: K models on random halves, LOSS/LiRA/RMIA/LTU attacks, metrics and a report."""
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli._progress import FitProgress, fits_label
        from mipkit.cli.options import allow_models, check_count, check_out_folder
        from mipkit.workflows.audit.run import AuditConfig, run_audit

        cfg = config_from_flags(  # the flags named like AuditConfig's fields, and these
            AuditConfig,
            target=target or "",
            params=parse_params(params),
            attacks=comma_names(attacks),
            n_models=models,
            n_targets=targets,
            drop=comma_names(drop) or (),
            fprs=comma_floats(fprs, "--fprs"),
            base_rates=comma_floats(base_rates, "--base-rates"),
            slice_by=comma_names(slice_by) or (),
        )
        from mipkit.workflows.audit.verdict import check_policy

        check_policy(fail_metric, fail_above, cfg.fprs)  # e.g. --fail-above nan: refused before anything runs
        allow_models(ctx, allow_model)
        check_count("--models", models, kind="models", minimum=None, override=yes_i_mean_it)
        check_count("--targets", targets, kind="targets", minimum=None)
        check_count("--ltu-rounds", ltu_rounds, kind="fits")
        run_dir = check_out_folder(out)
        label = fits_label(backend, n_jobs, address)
        with FitProgress(label, enabled=not (quiet or as_json)) as progress, lock_run_folder(run_dir):
            result = run_audit(cfg, run_dir, progress=progress, write_report=not no_report)
        finish_audit(result, run_dir, as_json, json_view, print_human)
