"""``mipkit audit``: membership-inference audit of a trainer on a table (LiRA's evaluation protocol).

Every flag has a config key (the fields of :class:`mipkit.workflows.audit_model.AuditConfig`); ``--config``
reads them from YAML or JSON and flags given on the command line override the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mipkit._validation import MipkitValueError
from mipkit.cli.options import parse_params

EXIT_FINDING = 1


def _floats(text: str, flag: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise MipkitValueError(f"{flag} must be comma-separated numbers. Got {text!r}.") from None


def read_config_file(path: str | Path) -> dict:
    """Read a YAML or JSON config file into a dict of AuditConfig fields."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise MipkitValueError(f"No such config file: {p}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise MipkitValueError(f"Could not read config {p}: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise MipkitValueError(f"The config {p} must hold a mapping of settings.")
    return data


def build_config(file_values: dict, flag_values: dict):
    """Merge config-file values and the flags given (flags win) into a validated AuditConfig."""
    from dataclasses import fields

    from mipkit.workflows.audit_model import AuditConfig

    known = {f.name for f in fields(AuditConfig)}
    merged = {**file_values, **{k: v for k, v in flag_values.items() if v is not None}}
    unknown = sorted(set(merged) - known - {"out", "fail_above", "json"})
    if unknown:
        raise MipkitValueError(
            f"Unknown config key(s): {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
        )
    kwargs = {k: v for k, v in merged.items() if k in known}
    if isinstance(kwargs.get("attacks"), str):
        kwargs["attacks"] = tuple(a.strip() for a in kwargs["attacks"].split(","))
    for key in ("attacks", "drop", "fprs", "base_rates"):
        if key in kwargs and isinstance(kwargs[key], list):
            kwargs[key] = tuple(kwargs[key])
    if isinstance(kwargs.get("params"), str):
        kwargs["params"] = parse_params(kwargs["params"])
    return AuditConfig(**kwargs).validate(), merged


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
        "utility": results.get("utility"),
        "game": results.get("game"),
        "run_dir": str(run_dir),
        "report": str(run_dir / "report.html") if (run_dir / "report.html").is_file() else None,
    }


def print_human(results: dict, run_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    from mipkit.report.audit_report import plain_summary

    console = Console()
    table = Table(title="Membership-inference audit", show_lines=False)
    fprs = list(results["tpr_at_fpr"])
    for col in ["attack", "AUC", *[f"TPR@{f}" for f in fprs], "eta [95% CI]"]:
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
        table.add_row(
            name,
            f"{a['auc']:.3f}",
            *[f"{a['tpr_at_fpr'][f]:.3f}" for f in fprs],
            f"{a['eta']:.3f} [{a['eta_ci'][0]:.3f}, {a['eta_ci'][1]:.3f}]",
        )
    console.print(table)
    for line in plain_summary(results):
        console.print(f"- {line}")
    console.print(f"Report: {run_dir / 'report.html'}")


def register(app: typer.Typer) -> None:
    @app.command("audit")
    def audit(
        data: str = typer.Option(None, "--data", help="CSV or Parquet table of records."),
        target: str = typer.Option(None, "--target", help="Label column."),
        model: str = typer.Option(
            None, "--model", help="Trainer import path, e.g. sklearn.linear_model.LogisticRegression."
        ),
        params: str = typer.Option(None, "--params", help="Trainer constructor arguments as JSON."),
        attacks: str = typer.Option(
            None, "--attacks", help="Comma-separated subset of loss,lira,rmia,ltu [loss,lira,rmia]."
        ),
        models: int = typer.Option(None, "--models", help="K models on random halves (even, >= 4) [16]."),
        targets: int = typer.Option(
            None, "--targets", help="How many models serve in turn as the target [min(K, 8)]."
        ),
        seed: int = typer.Option(None, "--seed", help="Random seed [0]."),
        out: str = typer.Option(None, "--out", help="Run folder [runs/audit]."),
        backend: str = typer.Option(None, "--backend", help="local (joblib) or ray [local]."),
        address: str = typer.Option(None, "--address", help="Ray cluster address."),
        n_jobs: int = typer.Option(
            None, "--n-jobs", help="Parallel fits for the local backend [-1: all cores]."
        ),
        encode: str = typer.Option(
            None, "--encode", help="none or onehot (encode non-numeric columns) [none]."
        ),
        dropna: bool = typer.Option(None, "--dropna/--no-dropna", help="Drop rows with missing values."),
        drop: str = typer.Option(None, "--drop", help="Comma-separated columns to leave out (identifiers)."),
        max_records: int = typer.Option(
            None, "--max-records", help="Seeded random subsample of this many records."
        ),
        fprs: str = typer.Option(None, "--fprs", help="FPRs for TPR at FPR [0.001,0.01,0.1]."),
        ltu_strategy: str = typer.Option(
            None, "--ltu-strategy", help="loss (on the audit's fits) or retrain [loss]."
        ),
        certified_eta: float = typer.Option(
            None, "--certified-eta", help="A MIP certificate to draw next to the measurement."
        ),
        config: str = typer.Option(
            None, "--config", help="YAML/JSON file with any of these settings (flags override)."
        ),
        fail_above: float = typer.Option(
            None, "--fail-above", help="Exit with code 1 when the measured eta exceeds this."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
        no_report: bool = typer.Option(
            False, "--no-report", help="Skip report.html (mipkit report renders it)."
        ),
    ) -> None:
        """Audit a trainer: K models on random halves, LOSS/LiRA/RMIA/LTU attacks, metrics and a report."""
        from mipkit.report.results import to_jsonable
        from mipkit.workflows.audit_model import run_audit

        file_values = read_config_file(config) if config else {}
        flags = {
            "data": data,
            "target": target,
            "model": model,
            "params": parse_params(params) if params is not None else None,
            "attacks": attacks,
            "n_models": models,
            "n_targets": targets,
            "seed": seed,
            "backend": backend,
            "address": address,
            "n_jobs": n_jobs,
            "encode": encode,
            "dropna": dropna,
            "drop": tuple(c.strip() for c in drop.split(",") if c.strip()) if drop else None,
            "max_records": max_records,
            "fprs": _floats(fprs, "--fprs") if fprs else None,
            "ltu_strategy": ltu_strategy,
            "certified_eta": certified_eta,
        }
        cfg, merged = build_config(file_values, flags)
        run_dir = Path(out or merged.get("out") or "runs/audit")
        threshold = fail_above if fail_above is not None else merged.get("fail_above")
        results = run_audit(cfg, run_dir, progress=not (quiet or as_json), write_report=not no_report)
        if as_json:
            typer.echo(json.dumps(to_jsonable(json_view(results, run_dir))))
        else:
            print_human(results, run_dir)
        if threshold is not None and results["eta"] is not None and results["eta"] > float(threshold):
            typer.echo(
                f"mipkit: finding: measured eta {results['eta']:.4f} ({results['strongest_attack']}) exceeds "
                f"--fail-above {float(threshold):g}.",
                err=True,
            )
            raise typer.Exit(EXIT_FINDING)
