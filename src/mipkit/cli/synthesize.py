"""``mipkit synthesize``: make private synthetic data with a certificate.

``mipkit synthesize --data CSV --method dpwgan-gp|dpwgan-gp-scaled|dpwgan-clip|aim|mst|ctgan (--epsilon E
[--delta D] | --target-risk SPEC) --rows N --seed S [--noise-seed N] --out DIR [--domain JSON | --domain-share
S] [--drop COL ...] [--id-column COL] [--params JSON] [--json]`` writes ``DIR/synthetic.csv`` and
``DIR/certificate.json``: the flags become a :class:`~mipkit.workflows.synthesize.SynthesizeConfig`, the file
and ``--domain`` a :class:`~mipkit.workflows.synthesize.PrivateTable`,
:func:`mipkit.workflows.synthesize.synthesize` runs, and the result's DPIA paragraph is printed first. Without
``--domain`` the column domain is estimated with differential privacy from a share of the budget
(``--domain-share``, default 0.1). ``SPEC`` names a risk target and its parameters: ``eta=0.05``,
``advantage=0.2``, ``tpr-at-fpr=0.05,fpr=0.01``, ``success=0.3,baseline=0.2``,
``precision=0.6,base-rate=0.1,recall=0.5``.
The DP noise comes from OS entropy unless ``--noise-seed`` is given.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from mipkit.cli.options import JsonOption, NoiseSeedOption, SeedOption

__all__ = ["CHECKPOINT", "parse_target_risk", "register"]

#: The training state of a resumable method, in the output folder until the fit ends.
CHECKPOINT = "checkpoint"


def parse_target_risk(spec: str) -> Any:
    """``"tpr-at-fpr=0.05,fpr=0.01"`` -> ``TprAtFprTarget(fpr=0.01, value=0.05)`` (one-line errors)."""
    from mipkit._validation import MipkitValueError
    from mipkit.accounting import TARGETS, target_from_dict

    items = [p.strip() for p in spec.split(",") if p.strip()]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise MipkitValueError(f"--target-risk takes NAME=VALUE[,PARAM=VALUE...]. Got {spec!r}.")
        try:
            pairs.append((key.strip(), float(value)))
        except ValueError:
            raise MipkitValueError(f"--target-risk: {value!r} is not a number.") from None
    if not pairs:
        raise MipkitValueError("--target-risk is empty.")
    name, value = pairs[0]
    if name not in TARGETS:
        raise MipkitValueError(f"--target-risk must start with one of {list(TARGETS)}. Got {name!r}.")
    return target_from_dict({"name": name, "value": value, **{k.replace("-", "_"): v for k, v in pairs[1:]}})


#: The config fields whose flag is not the field's name in kebab case.
FIELD_FLAGS = {"random_state": "--seed", "target": "--target-risk"}


def _print_human(result: Any, out: str) -> None:
    """The DPIA paragraph (one line), then the table of the certified risks, the domain and the notes."""
    from rich.console import Console
    from rich.table import Table

    from mipkit.report.dpia_synthetic import domain_sentence

    typer.echo(result.summary())
    typer.echo("")
    summary = result.json_summary()
    console = Console()
    t = Table(title=f"Synthetic data: {summary['method']}", title_justify="left")
    t.add_column("quantity", style="bold")
    t.add_column("value", justify="right")
    t.add_row("rows", str(summary["rows"]))
    t.add_row("time", f"{summary['seconds']:.1f} s")
    cert = summary["certified"]
    if cert["eta"] is None:
        t.add_row("certified", "nothing (not differentially private)")
    else:
        t.add_row(
            f"epsilon ({summary['neighbours']}), delta", f"{summary['epsilon']:.4g}, {summary['delta']:g}"
        )
        t.add_row("certified MIP eta (replace-one)", f"{cert['eta']:.4f}")
        t.add_row("certified advantage", f"{cert['advantage']:.4f}")
        for fpr, tpr in cert["tpr_at_fpr"].items():
            t.add_row(f"certified TPR at FPR {fpr}", f"{tpr:.4f}")
    console.print(t)
    console.print(f"- Domain: {domain_sentence(summary.get('domain') or {})}.", highlight=False)
    if summary.get("resumed_from"):
        console.print(
            f"- Resumed a killed run from its checkpoint (iteration or round {summary['resumed_from']})."
        )
    for note in result.certificate.notes:
        console.print(f"- {note}", highlight=False)
    console.print(f"Wrote {out}/synthetic.csv and {out}/certificate.json", highlight=False)
    if result.quality is not None:
        from mipkit.report.synthetic_quality import quality_sentences

        for line in quality_sentences(result.quality):
            typer.echo(f"- Utility: {line}")


def _config(
    method: str, epsilon: float | None, target_risk: str | None, rows: int | None, seed: int,
    drop: list[str] | None, params: str | None,
) -> Any:  # fmt: skip
    """The flags as a :class:`~mipkit.workflows.synthesize.SynthesizeConfig` (the other flags named like its
    fields), with the command line's limits on ``--rows`` and ``--seed`` and an explicit budget."""
    from mipkit._validation import MipkitValueError
    from mipkit.cli.flag_errors import flag_errors
    from mipkit.cli.options import check_count, check_seed, config_from_flags, parse_params
    from mipkit.workflows.synthesize import SynthesizeConfig

    check_count("--rows", rows, kind="rows")
    check_seed(seed)
    target = parse_target_risk(target_risk) if target_risk is not None else None
    drops = [c.strip() for item in drop or [] for c in item.split(",") if c.strip()]
    with flag_errors("synthesize", FIELD_FLAGS):
        config = config_from_flags(
            SynthesizeConfig, target=target, drop=drops, random_state=seed, params=parse_params(params)
        )
    if config.method != "ctgan" and epsilon is None and target is None:
        raise MipkitValueError(f"--method {method} needs --epsilon (with --delta) or --target-risk.")
    return config


def register(app: typer.Typer) -> None:
    @app.command("synthesize")
    def synthesize_cmd(
        data: str = typer.Option(..., "--data", help="The private table (CSV/Parquet)."),
        method: str = typer.Option(
            ..., "--method", help="dpwgan-gp, dpwgan-gp-scaled, dpwgan-clip, aim, mst or ctgan."
        ),
        epsilon: float = typer.Option(None, "--epsilon", help="Privacy budget epsilon > 0."),
        delta: float = typer.Option(1e-5, "--delta", help="delta in (0, 1)."),
        target_risk: str = typer.Option(
            None,
            "--target-risk",
            help="A risk target instead of --epsilon, e.g. eta=0.05 or tpr-at-fpr=0.05,fpr=0.01.",
        ),
        rows: int = typer.Option(None, "--rows", help="Synthetic records (default: as many as the data)."),
        seed: SeedOption = 0,
        noise_seed: NoiseSeedOption = None,
        domain: str = typer.Option(None, "--domain", help="JSON file with the public domain of the columns."),
        domain_share: float = typer.Option(
            None,
            "--domain-share",
            help="Without --domain: the share of --epsilon and --delta that estimates the domain (0.1).",
        ),
        drop: list[str] = typer.Option(
            None, "--drop", help="A column to leave out (repeat, or separate with commas), e.g. an id."
        ),
        id_column: str = typer.Option(
            None,
            "--id-column",
            help="A column that names the records (e.g. person): left out of the model, never released.",
        ),
        params: str = typer.Option(
            None, "--params", help="Synthesizer options as JSON, e.g. '{\"n_generator\": 100}'."
        ),
        out: str = typer.Option(..., "--out", help="Output folder."),
        as_json: JsonOption = False,
        raw_csv: bool = typer.Option(
            False, "--raw-csv", help="Write synthetic.csv cells as they are (no leading ' before =, +, -, @)."
        ),
        quality: bool = typer.Option(
            False,
            "--quality",
            help="Print a utility report (it reads the real records: not covered by the certificate).",
        ),
        quality_target: str = typer.Option(
            None,
            "--quality-target",
            help="A two-class column: the utility report adds train-on-synthetic / test-on-real.",
        ),
    ) -> None:
        """Make private synthetic data: DP-WGAN-GP, AIM, MST or CTGAN, with a certificate of its privacy."""
        # long only by its option declarations
        from pathlib import Path

        from mipkit.cli._progress import ProgressBar
        from mipkit.cli.flag_errors import flag_errors
        from mipkit.cli.options import hold_run_folder
        from mipkit.data.domain import read_domain
        from mipkit.data.io import read_table
        from mipkit.workflows.synthesize import PrivateTable, synthesize

        config = _config(method, epsilon, target_risk, rows, seed, drop, params)
        dom = None if domain is None else read_domain(domain)
        hold_run_folder(out)  # checked, and locked until the command ends
        data_table = PrivateTable(read_table(data), dom)
        with (
            ProgressBar(enabled=not as_json) as bar,
            flag_errors("synthesize", FIELD_FLAGS),
        ):
            result = synthesize(data_table, config, progress=bar, checkpoint=Path(out) / CHECKPOINT)
        result.write(out, raw_csv=raw_csv)
        if as_json:
            typer.echo(json.dumps({**result.json_summary(), "out": str(out)}, allow_nan=False))
            return
        _print_human(result, out)
