"""``mipkit train-private``: train a model with DP-SGD to a risk target and keep its certificate.

``mipkit train-private --data T.csv --target LABEL [--domain D.json] [--dropna] (--target-risk NAME
--value V [--fpr A | --baseline B | --base-rate P --recall R] | --noise-multiplier Z) [--epochs E]
[--batch-size B] [--max-grad-norm C] [--hidden 64] [--seed S] [--noise-seed N] [--id-column ID] [--audit]
[--record-split] [--out DIR] [--json]``. With ``--record-split`` the run folder records which rows (and ids)
trained the model (``split.parquet``, as private as the data);
``--audit`` audits the fitted model against its certificate, its training rows against the held-out rows
(which stand in for non-members).
The work is :func:`mipkit.workflows.train_private.run.train_private`; this module turns the flags into its
configuration (the risk-target flags are those of ``mipkit calibrate``) and prints a summary or one JSON
object. A non-numeric feature needs ``--domain`` (its public levels, :mod:`mipkit.data.domain`; ``mipkit
domain`` writes a template): levels read from the rows would reveal the training rows. The noise and the
batches come from OS entropy unless ``--noise-seed`` is given.
"""

from __future__ import annotations

from typing import Any

import typer

from mipkit.cli.options import (
    DataOption,
    DomainOption,
    DropnaOption,
    DropOption,
    EncodeOption,
    JsonOption,
    NoiseSeedOption,
    RiskValueOption,
    RunFolderOption,
    TargetOption,
    comma_names,
    config_from_flags,
    echo_json,
    target_parameters,
    with_options,
)

OWNER = "mipkit train-private"


MAX_LAYERS = 32
"""Most hidden layers ``--hidden`` takes."""


def _hidden(text: str) -> tuple[int, ...]:
    """``"64"`` or ``"64,32"`` -> widths; ``""`` or ``"0"`` -> ``()`` (logistic regression)."""
    from mipkit._validation import MipkitValueError
    from mipkit.cli.options import check_count

    items = [t.strip() for t in str(text).split(",") if t.strip()]
    try:
        widths = tuple(int(t) for t in items)
    except ValueError:
        raise MipkitValueError(
            f"--hidden must be comma-separated layer widths such as 64,32. Got {text!r}."
        ) from None
    if widths == (0,):
        return ()
    if any(w < 1 for w in widths):
        raise MipkitValueError(
            f"--hidden widths must be positive (0 alone: logistic regression). Got {text!r}."
        )
    if len(widths) > MAX_LAYERS:
        raise MipkitValueError(f"--hidden must list at most {MAX_LAYERS} layers. Got {len(widths)}.")
    for w in widths:
        check_count("--hidden", w, kind="width")
    return widths


def _risk_target(name: str | None, value: float | None, noise: float | None, given: dict) -> dict | None:
    """The target dict of the flags, after checking that exactly one privacy setting is given."""
    from mipkit._validation import MipkitValueError, check_choice
    from mipkit.cli.calibrate import _FLAGS, TARGET_OPTIONS

    if (name is None) == (noise is None):
        raise MipkitValueError(
            "Give the privacy either as a risk target (--target-risk NAME --value V) or as "
            f"--noise-multiplier; got {'both' if name is not None else 'neither'}."
        )
    for key in ("fpr", "baseline", "base_rate", "recall"):
        wanted = (
            name is not None
            and key in TARGET_OPTIONS[check_choice("target_risk", name, tuple(TARGET_OPTIONS))]
        )
        if given.get(key) is not None and not wanted:
            users = [t for t, opts in TARGET_OPTIONS.items() if key in opts]
            raise MipkitValueError(f"{_FLAGS[key]} applies only to --target-risk {' / '.join(users)}.")
    if name is None:
        if value is not None:
            raise MipkitValueError("--value applies only with --target-risk.")
        return None
    tgt = check_choice("target_risk", name, tuple(TARGET_OPTIONS), owner=OWNER)
    if value is None:
        raise MipkitValueError(f"--target-risk {tgt} needs --value.")
    params = {}
    for key in TARGET_OPTIONS[tgt]:
        if key == "delta":
            params[key] = given["delta"]
        elif given.get(key) is None:
            raise MipkitValueError(f"--target-risk {tgt} needs {_FLAGS[key]}.")
        else:
            params[key] = given[key]
    from mipkit.accounting.targets import target_from_dict

    return target_from_dict({"name": tgt, "value": value, **params}).to_dict()  # validated here


def _print_human(d: dict) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from mipkit.report.dpia import train_private_paragraph

    typer.echo(train_private_paragraph(d))
    typer.echo("")
    console = Console()
    table = Table(title="Private training (DP-SGD)", title_justify="left")
    table.add_column("Quantity", style="bold")
    table.add_column("Value", justify="right")
    if d["target"]:
        t = d["target"]
        table.add_row("Risk target", f"{t['name']} <= {t['value']:g}")
    table.add_row("Noise multiplier", f"{d['noise_multiplier']:.4g}")
    table.add_row("Sample rate / steps", f"{d['sample_rate']:.4g} / {d['steps']}")
    c = d["certified"]
    table.add_row("Certified MIP eta", f"{c['eta']:.4g}")
    table.add_row("Certified advantage", f"{c['advantage']:.4g}")
    for fpr, bound in c["tpr_at_fpr"].items():
        table.add_row(f"Certified TPR at FPR {fpr}", f"{bound:.4g}")
    table.add_row(f"Certified epsilon (delta {c['delta']:g})", f"{c['epsilon']:.4g}")
    table.add_row("Held-out accuracy", f"{d['test_accuracy']:.4f} (majority {d['majority_rate']:.4f})")
    dom = d["domain"]
    table.add_row(
        "Encoding", f"public domain ({dom['columns']} columns)" if "columns" in dom else dom["source"]
    )
    console.print(table)
    console.print(escape(f"Neighbours: {d['neighbours'].replace('_', '-')}, {d['premise']}."))
    if d["noise_source"] != "os-entropy":
        console.print(escape(f"Noise and batches {d['noise_source']} (--noise-seed)."))
    audit = d.get("audit")
    if audit:
        audited = Table(title="Audit of the released model against its certificate", title_justify="left")
        for col in ("Risk", "Measured", "Certified", "Within"):
            audited.add_column(col, justify="left" if col == "Risk" else "right")
        for fpr, r in audit["tpr_at_fpr"].items():
            within = (
                "NO (beyond sampling error)" if r["violation"] else "yes" if r["within"] else "point above"
            )
            audited.add_row(f"TPR at FPR {fpr}", f"{r['measured']:.4g}", f"{r['certified']:.4g}", within)
        console.print(audited)
        console.print(
            escape(f"{audit['attack'].upper()} on {audit['members']} training rows vs {audit['non_members']} "
                   f"held-out rows. {audit['note']}")
        )  # fmt: skip
    if d.get("run_dir"):
        split = "; split.parquet: the rows trained on, keep it private" if d["held_out"]["file"] else ""
        console.print(escape(f"Run folder: {d['run_dir']} (report.html{split})"))


def register(app: typer.Typer) -> None:
    @app.command("train-private")
    @with_options("target_params", target_parameters("--target-risk"))
    def train_private_command(
        data: DataOption = ...,
        target: TargetOption = ...,
        encode: EncodeOption = "none",
        dropna: DropnaOption = False,
        drop: DropOption = None,
        domain: DomainOption = None,
        target_risk: str = typer.Option(
            None, "--target-risk", help="eta, advantage, tpr-at-fpr, success, precision or epsilon."
        ),
        value: RiskValueOption = None,
        target_params: Any = None,
        delta: float = typer.Option(
            1e-5, "--delta", help="Delta of the certified epsilon (and of an epsilon target)."
        ),
        noise_multiplier: float = typer.Option(
            None, "--noise-multiplier", help="DP-SGD noise multiplier instead of a risk target."
        ),
        epochs: int = typer.Option(5, "--epochs", help="Passes over the data."),
        batch_size: int = typer.Option(256, "--batch-size", help="Expected batch size (Poisson sampling)."),
        max_grad_norm: float = typer.Option(1.0, "--max-grad-norm", help="Per-sample clipping norm."),
        learning_rate: float = typer.Option(0.5, "--learning-rate", help="SGD step size."),
        hidden: str = typer.Option(
            "64", "--hidden", help="Hidden layer widths, e.g. 64,32; 0: logistic regression."
        ),
        neighbours: str = typer.Option(
            "replace_one", "--neighbours", help="replace_one (the audit's game) or add_remove."
        ),
        test_size: float = typer.Option(
            0.2, "--test-size", help="Share of rows held out for the test accuracy."
        ),
        scale: bool = typer.Option(
            True, "--scale/--no-scale", help="Standardise features with the held-out rows' mean and sd."
        ),
        seed: int = typer.Option(0, "--seed", help="Random seed (initial weights; the split is secret)."),
        noise_seed: NoiseSeedOption = None,
        id_column: str = typer.Option(
            None, "--id-column", help="Column of unique record ids: not a feature; named in split.parquet."
        ),
        record_split: bool = typer.Option(
            False, "--record-split", help="Write split.parquet: which rows trained the model (private)."
        ),
        audit: bool = typer.Option(
            False, "--audit", help="Audit the model against its certificate: training vs held-out rows."
        ),
        out: RunFolderOption = "runs/train-private",
        as_json: JsonOption = False,
    ) -> None:
        """Train with DP-SGD to a risk target; writes the model and its certificate."""
        from mipkit.cli.options import check_count, check_seed, hold_run_folder
        from mipkit.workflows.train_private.run import TrainPrivateConfig, train_private

        check_count("--epochs", epochs, kind="steps", minimum=None)
        check_count("--batch-size", batch_size, kind="rows")
        check_seed(seed)
        given = {**target_params(), "delta": delta}  # fpr, baseline, base_rate, recall and delta
        cfg = config_from_flags(  # the flags named like TrainPrivateConfig's fields, and these
            TrainPrivateConfig,
            drop=comma_names(drop) or (),
            risk_target=_risk_target(target_risk, value, noise_multiplier, given),
            hidden=_hidden(hidden),
        )
        cfg.classifier()._privacy()  # the target and the privacy settings, before the table is read
        hold_run_folder(out)  # checked, and locked until the command ends
        if as_json:
            result = train_private(cfg, out)
            echo_json(result.to_dict())
            return
        from mipkit.cli._progress import FitProgress

        with FitProgress("DP-SGD steps") as progress:  # the bar starts at the first step
            result = train_private(cfg, out, progress=progress)
        _print_human(result.to_dict())
