"""The console view of a model audit's results (``results.json`` fields): the attacks' table, the subgroups'
table and the plain summary, as the command line prints them, and the ``--json`` view.

Every function here reads the results' fields only; the command line chooses which to print.
"""

from __future__ import annotations

from pathlib import Path

from mipkit.report.dpia import audit_paragraph

__all__ = ["json_view", "print_human", "print_paragraph", "print_slices"]


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
    if len(results.get("attacks") or {}) > 1:  # the headline interval covers all attacks at once
        cluster = cluster[:-1] + ", this attack alone]"
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
    print(audit_paragraph(results))
    print()


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
    # 100 columns: the kind under the name, trials under the records, each interval under its estimate
    table = Table(title=title, show_lines=True, box=box.SIMPLE_HEAD, show_edge=False, padding=0)
    rows = [slices["overall"], *slices["groups"]]
    names = ["all records", *[f"{r['column']} = {r['group']}" for r in slices["groups"]]]
    table.add_column("subgroup", min_width=min(max(map(len, names)), 20))
    table.add_column("records\nin/out", justify="right", no_wrap=True)
    for col in ["AUC", *[f"TPR@{f}" for f in fprs], "eta"]:
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("more\nexposed", no_wrap=True)
    for name, r in zip(names, rows, strict=True):
        info = columns.get(r["column"], {})
        kind = (
            "target"
            if info.get("kind") == "true class"
            else {True: "feature", False: "not a feature"}.get(info.get("is_feature"), "")
        )
        cells = [
            f"{name}\n({kind})" if kind else name,
            f"{r['n_records']}\n{r['member_trials']}/{r['nonmember_trials']}",
        ]
        if r.get("auc") is None:
            cells += ["too few\nrecords", *["" for _ in fprs], "", ""]
        else:
            cells.append(_two_lines(r["auc"], r["auc_ci"], 3))
            cells += [_two_lines(r["tpr_at_fpr"][f], r["tpr_at_fpr_ci"][f], 1, 100, "%") for f in fprs]
            cells.append(_two_lines(r["eta"], r["eta_ci"], 3))
            flag = r.get("more_exposed")
            cells.append(
                "" if flag is None else ("yes:\n" + ", ".join(r["more_exposed_by"]) if flag else "no")
            )
        table.add_row(*[escape(c) for c in cells])
    if not console.is_terminal:  # a file or a pipe: no terminal to fit, keep the rows whole
        console = Console(width=max(console.width, 100))
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
