"""The report of a model audit (and of the demo's before/after comparison), rebuilt from the run folder.

Everything is regenerated from ``results.json`` (metrics, stored log-spaced ROC curves, histograms) and
``scores.parquet`` (per-record vulnerability), so ``mipkit report RUN_DIR`` re-renders without refitting.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mipkit.report.audit_slices_report import slices_section
from mipkit.report.audit_verdict_report import (
    _ci,
    _pct,
    certificate_sentences,
    certificate_table,
    roc_attacks,
    verdict_section,
    verdict_sentence,
)
from mipkit.report.html import Figure, Section, figure_to_png, plain_log_ticks
from mipkit.report.results import read_parquet_file, read_results

SCORES_FILE = "scores.parquet"
_LOW_FPR = "0.01"


def measured_fpr_note(detail: dict) -> str:
    """Beside a TPR at a low FPR: the smallest FPR a threshold measures on these scores, when ties make it
    larger than the FPR asked (the TPR is then a randomised rule's at the tied scores)."""
    low = detail.get("smallest_measured_fpr")
    if low is None or detail.get("tied_share", 0) == 0:
        return ""
    return (
        f" Scores tie: no threshold measures a TPR below FPR {_pct(low)}; this TPR flags a random "
        f"{_pct(detail['tied_share'])} of the records tied at the threshold (interpolated)."
    )


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


# ------------------------------------------------------------------------------------------------ figures


def roc_figure(
    curves: dict[str, dict],
    *,
    certified_eta: float | None = None,
    title: str = "",
    certificate: dict | None = None,
) -> Figure:
    """Log-log ROC of every attack, the chance diagonal and the certificate's bound, if any.

    The bound is the certified trade-off curve ``TPR <= 1 - f(FPR)`` when the certificate carries one
    (``certificate["tpr_bound_curve"]``), else ``TPR <= FPR + 2 eta``. The caption says whether the
    certificate is exact; an approximate one (estimated sigma) is not a bound no attack can cross.
    """
    if certificate is not None and certified_eta is None:
        certified_eta = certificate.get("eta")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    lo = 1.0
    for name, row in curves.items():
        f = np.asarray(row["roc"]["fpr"], dtype=float)
        t = np.asarray(row["roc"]["tpr"], dtype=float)
        keep = f > 0
        lo = min(lo, f[keep].min()) if keep.any() else lo
        auc = row.get("auc")
        ax.step(f[keep], np.maximum(t[keep], 1e-6), where="post", label=f"{name} (AUC {auc:.3f})")
    grid = np.logspace(np.log10(min(lo, 1e-3)), 0, 200)
    ax.plot(grid, grid, color="0.5", ls="--", lw=1, label="chance (TPR = FPR)")
    bound_curve = (certificate or {}).get("tpr_bound_curve")
    if bound_curve:
        ax.plot(
            np.asarray(bound_curve["fpr"], dtype=float),
            np.asarray(bound_curve["tpr"], dtype=float),
            color="crimson",
            lw=1.5,
            label=f"certified: TPR <= 1 - f(FPR) ({certificate.get('tradeoff', 'trade-off curve')})",
        )
    elif certified_eta is not None:
        ax.plot(
            grid,
            np.minimum(1.0, grid + 2 * certified_eta),
            color="crimson",
            lw=1.5,
            label=f"certified: TPR <= FPR + 2 eta (eta = {certified_eta:.3g})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    ax.set_xlim(min(lo, 1e-3), 1)
    ax.set_ylim(min(lo, 1e-3), 1.02)
    ax.set_xlabel("false positive rate (non-members flagged)")
    ax.set_ylabel("true positive rate (members found)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    caption = (
        "Each curve is an attack; a curve above the dashed diagonal at low FPR means the attack "
        "identifies some members with few false alarms."
    )
    if certified_eta is not None or bound_curve:
        exact = (certificate or {}).get("exact")
        if exact is True:
            caption += (
                " The red line is an exact certificate: no attack can lie above it beyond sampling error "
                "(docs/theory.md sections 1 and 3)."
            )
        else:
            caption += (
                " The red line is the certified bound of an approximate certificate (its sigma was "
                "estimated, or exactness is not stated): an attack above it is a finding to investigate, "
                "not an impossibility."
            )
    return Figure(title or "ROC on log-log axes", figure_to_png(fig), caption)


def precision_figure(curves: dict[str, dict], base_rates: dict[str, float]) -> Figure:
    """Precision against recall when only a fraction ``pi`` of the candidates are members."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(base_rates), figsize=(3.2 * len(base_rates), 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (label, pi) in zip(axes, base_rates.items(), strict=True):
        for name, row in curves.items():
            f = np.asarray(row["roc"]["fpr"], dtype=float)
            t = np.asarray(row["roc"]["tpr"], dtype=float)
            keep = (t + f) > 0
            prec = pi * t[keep] / (pi * t[keep] + (1 - pi) * f[keep])
            ax.plot(t[keep], prec, label=name, lw=1.2)
        ax.axhline(pi, color="0.5", ls="--", lw=1)
        ax.set_title(f"members : non-members = {label}", fontsize=9)
        ax.set_xlabel("recall (TPR, log scale)")
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_xlim(1e-3, 1)
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("precision")
    axes[-1].legend(fontsize=7)
    return Figure(
        "Precision-recall at realistic base rates",
        figure_to_png(fig),
        "Recall on a log axis, so the low-recall end where a careful attacker works can be read. The dashed "
        "line is the base rate itself (what guessing achieves). When members are rare, even a good attack's "
        "accusations are mostly wrong unless it works at very low FPR (Francis & Wagner).",
    )


def histogram_figure(curves: dict[str, dict]) -> Figure:
    plt = _plt()
    n = len(curves)
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.6 * rows), squeeze=False)
    for ax, (name, row) in zip(axes.ravel(), curves.items(), strict=False):
        h = row["histogram"]
        edges = np.asarray(h["edges"], dtype=float)
        for key, color in (("nonmembers", "tab:blue"), ("members", "tab:orange")):
            counts = np.asarray(h[key], dtype=float)
            dens = counts / max(counts.sum(), 1)
            ax.stairs(dens, edges, color=color, label=key, fill=False, lw=1.3)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("attack score", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return Figure(
        "Score distributions",
        figure_to_png(fig),
        "Members (orange) against non-members (blue); the more the two separate, the more the model leaks.",
    )


# -------------------------------------------------------------------------------------------- tables


def attack_table(results: dict) -> pd.DataFrame:
    rows = []
    for name, a in results.get("attacks", {}).items():
        if a.get("game") == "ltu":
            rows.append(
                {
                    "attack": f"{name} ({a.get('strategy')} strategy, pairwise game)",
                    "AUC [95% CI]": "",
                    **{f"TPR@FPR {k}": "" for k in (results.get("tpr_at_fpr") or {})},
                    "eta [95% CI]": "",
                    "balanced acc.": f"pair accuracy {a['accuracy']:.3f} {_ci(a.get('accuracy_ci'))}",
                    "": f"LTU privacy {a['privacy']:.3f} +- {a['privacy_error']:.3f}",
                }
            )
            continue
        auc_ci = a.get("auc_ci_cluster") or a.get("auc_ci")
        row = {"attack": name, "AUC [95% CI]": f"{a['auc']:.3f} {_ci(auc_ci)}"}
        for k, d in a["tpr_at_fpr_detail"].items():
            ci = d.get("tpr_ci_cluster") or d["tpr_ci"]
            row[f"TPR@FPR {k}"] = f"{_pct(d['tpr'], 2)} {_ci(ci, 2, 100)}"
        row["eta [95% CI]"] = f"{a['eta']:.3f} {_ci(a.get('eta_ci_cluster') or a['eta_ci'])}"
        row["balanced acc."] = f"{a['balanced_accuracy']:.3f}"
        row[""] = ""
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.drop(columns=[""]) if "" in df and not df[""].astype(bool).any() else df


def precision_table(results: dict) -> pd.DataFrame:
    rows = []
    for name, a in roc_attacks(results).items():
        for base, per_fpr in a["precision_at_base_rate"].items():
            row = {"attack": name, "members : non-members": base}
            for fpr, d in per_fpr.items():
                p = d["precision"]
                row[f"precision at FPR {fpr}"] = (
                    "n/a (no trial flagged at this FPR)" if p is None else f"{p:.3f} {_ci(d['precision_ci'])}"
                )
            rows.append(row)
    return pd.DataFrame(rows)


def top_records(
    scores: pd.DataFrame, attack: str, k: int = 10, *, id_column: str | None = None
) -> pd.DataFrame:
    """The ``k`` records most exposed to ``attack``: highest hit rate at FPR 1%, then largest score gap; named
    by ``record``, ``row`` (position in the table as read) and ``id_column`` when the scores hold them."""
    cols = [c for c in (f"{attack}_hit_rate", f"{attack}_gap") if c in scores]
    if not cols:
        return pd.DataFrame()
    top = scores.sort_values(cols, ascending=False).head(k)
    names = ("record", "row", id_column, "label", "n_member_trials")
    keep = [c for c in names if c is not None and c in scores] + cols
    if f"{attack}_false_alarm" in scores:
        keep.append(f"{attack}_false_alarm")
    return top[keep].reset_index(drop=True)


# -------------------------------------------------------------------------------------------- summary


def plain_summary(results: dict, *, who: str = "the model") -> list[str]:
    """Plain-language sentences for a decision maker (the verdict first)."""
    lines = []
    head = verdict_sentence(results)
    if head:
        lines.append(head)
    best = results.get("strongest_attack")
    a = results.get("attacks", {}).get(best) if best else None
    game = results.get("game", {})
    util = results.get("utility") or {}
    if util.get("warning"):
        lines.append(f"WARNING: {util['warning']}")
    if a is not None:
        acc = 0.5 + a["eta"]
        lo, hi = results.get("eta_ci") or a["eta_ci"]
        hl = results.get("headline") or {}
        n_run = len(hl.get("family", []))
        which = "the only attack" if n_run == 1 else "the strongest attack"
        choice = f" and for choosing the strongest of {n_run} attacks" if n_run > 1 else ""
        fitted = (results.get("question") or {}).get("answered") == "this fitted model"
        how = (
            ("a bootstrap over the records of the one model" if fitted else "an interval that allows for "
             "dependent trials") + choice
            if hl
            else "trials taken as independent"
        )  # fmt: skip
        lines.append(
            f"Given a record and {who}, {which} ({best}) guessed correctly whether the record "
            f"was in the training data {_pct(acc)} of the time (a coin flip gets 50%). That is a measured "
            f"MIP eta of {a['eta']:.3f} (95% interval {lo:.3f} to {hi:.3f}, {how})"
            + ("; a stronger attack may find more." if a["eta"] > 0 else ".")
        )
        if lo > 0:
            lines.append(
                "The interval excludes zero: the model measurably reveals who was in its training data."
            )
        else:
            lines.append(
                "The interval includes zero: this audit found no leak it could distinguish from chance."
            )
    roc = roc_attacks(results)
    if roc:
        name, row = max(roc.items(), key=lambda kv: kv[1]["tpr_at_fpr"].get(_LOW_FPR, 0) or 0)
        tpr = row["tpr_at_fpr"].get(_LOW_FPR)
        if tpr is not None:
            detail = (row.get("tpr_at_fpr_detail") or {}).get(_LOW_FPR) or {}
            lines.append(
                f"At a false-alarm rate of 1% (1 in 100 non-members wrongly flagged), {name} found "
                f"{_pct(tpr)} of the members; chance would find 1%.{measured_fpr_note(detail)}"
            )
            prec = row["precision_at_base_rate"].get("1:100", {}).get(_LOW_FPR, {}).get("precision")
            if prec is not None:
                lines.append(
                    f"If only 1 in 101 of the people checked were in the training data, {_pct(prec)} of that "
                    "attack's accusations at this setting would be right."
                )
    cert = results.get("certificate")
    if cert:
        lines.extend(certificate_sentences(cert))
        violations = (results.get("verdict") or {}).get("certificate_violations")
        if violations:
            lines.append("The measurement is ABOVE the certificate: " + "; ".join(violations) + ".")
        elif results.get("eta") is not None:
            lines.append("The measurement is consistent with the certificate.")
    if util:
        rate = util.get("majority_class_rate")
        maj = f" (always guessing the majority class: {_pct(rate)})" if rate is not None else ""
        one = (results.get("question") or {}).get("answered") == "this fitted model"
        model, it, own = ("The model is", "it", "its") if one else ("The models are", "they", "their")
        lines.append(
            f"{model} right on {_pct(util['accuracy_nonmembers'])} of records {it} did not train on{maj} and "
            f"{_pct(util['accuracy_members'])} of {own} own training records."
        )
    if game:
        lines.append(
            f"Set-up: {game.get('n_models')} models on random halves of {game.get('n_records')} records; "
            f"{game.get('n_targets')} of them attacked in turn with the others as reference models "
            f"({game.get('trials')} trials)."
        )
    return lines


def audit_sections(results: dict, scores: pd.DataFrame | None, *, heading: str = "") -> list[Section]:
    """The sections of one audit (used by the audit report and, per stage, by the demo report)."""
    pre = f"{heading}: " if heading else ""
    curves = roc_attacks(results)
    cert = results.get("certificate")
    sections: list[Section] = []
    figs = []
    if curves:
        figs.append(roc_figure(curves, certificate=cert))
    sections.append(
        Section(
            f"{pre}Attacks",
            [
                "Each attack scores every (target model, record) pair; TPR at FPR uses the lowest threshold "
                "with at most that FPR on the trials. eta is accuracy - 1/2 of hard guesses with a threshold "
                "chosen on the other half of the target models. Intervals: a two-way cluster bootstrap over "
                "target models and records (docs/theory.md section 11); the headline's is simultaneous over "
                "the attacks. The per-attack intervals in this table are the cluster ones.",
                *(results.get("notes") or []),
            ],
            [attack_table(results)],
            figs,
        )
    )
    ctable = certificate_table(results)
    if cert and ctable is not None:
        sections.append(
            Section(
                f"{pre}Certificate",
                certificate_sentences(cert) + [f"Certified TPR: {cert.get('tpr_bound_rule', '')}."],
                [ctable],
            )
        )
    if curves:
        base_rates = {
            label: 1.0 / (1.0 + float(label.split(":")[1]))
            for label in next(iter(curves.values()))["precision_at_base_rate"]
        }
        sections.append(
            Section(
                f"{pre}Precision at realistic base rates",
                [
                    "How often an accusation is right when only a fraction of the people checked are members "
                    "(docs/theory.md section 4). Under an eta-MIP certificate alone precision at low FPR is "
                    "not bounded."
                ],
                [precision_table(results)],
                [precision_figure(curves, base_rates)],
            )
        )
        sections.append(Section(f"{pre}Score distributions", [], [], [histogram_figure(curves)]))
    if scores is not None and curves:
        best = results.get("strongest_attack") or next(iter(curves))
        best = best if best in curves else next(iter(curves))
        sections.append(
            Section(
                f"{pre}Most exposed records ({best})",
                [
                    "hit_rate: fraction of the record's member trials flagged at "
                    "the pooled threshold of FPR 1%; "
                    "gap: mean score as member minus as non-member, in standard deviations of all scores; "
                    "false_alarm: fraction of its non-member trials flagged; record: position in the "
                    "audited data, row: position in the table as read (before dropna and the subsample). "
                    "The full table is scores.parquet."
                ],
                [top_records(scores, best, id_column=(results.get("records") or {}).get("id_field"))],
            )
        )
    slices = slices_section(results, pre)
    if slices is not None:
        sections.append(slices)
    return sections


def _setup_section(results: dict) -> Section:
    game = results.get("game", {})
    trainer = results.get("trainer", {})
    rows = [
        ("trainer", trainer.get("import_path")),
        ("trainer parameters", str(trainer.get("params"))),
        *[(k, str(v)) for k, v in game.items() if k != "protocol"],
        ("attack settings", str(results.get("attack_settings") or {})),
        ("seed", str(results.get("config", {}).get("seed"))),
        ("data", str(results.get("config", {}).get("data"))),
    ]
    return Section(
        "Set-up",
        [game.get("protocol", "")],
        [pd.DataFrame(rows, columns=["setting", "value"])],
    )


def read_run(run_dir: Path) -> tuple[dict, pd.DataFrame | None]:
    """The ``results.json`` of a run folder and its ``scores.parquet`` (None when the run wrote none).

    Parameters
    ----------
    run_dir : Path
        The run folder.

    Returns
    -------
    results : dict
        As :func:`mipkit.report.results.read_results`.
    scores : pandas.DataFrame or None
        The per-record vulnerability table.
    """
    return read_results(run_dir), read_parquet_file(run_dir / SCORES_FILE)


def build(run_dir: str | Path) -> tuple[str, list[str], list[Section]]:
    """Rebuild ``(title, summary, sections)`` of an audit run from its folder (REPORT_BUILDERS["audit"])."""
    results, scores = read_run(Path(run_dir))
    trainer = results.get("trainer", {}).get("import_path", "model")
    title = f"Membership-inference audit of {trainer.rsplit('.', 1)[-1]}"
    box = verdict_section(results)
    sections = ([box] if box else []) + audit_sections(results, scores)
    sections.append(_setup_section(results))
    return title, plain_summary(results), sections


# ----------------------------------------------------------------------------------------------- demo


def build_demo(run_dir: str | Path) -> tuple[str, list[str], list[Section]]:
    """Rebuild the demo's before/after report (REPORT_BUILDERS["demo"]) from ``run_dir`` and its stages."""
    run_dir = Path(run_dir)
    demo = read_results(run_dir)
    stages = demo.get("stages", {})
    loaded = {}
    for key, sub in stages.items():
        loaded[key] = (sub, *read_run(run_dir / sub["folder"]))
    summary = list(demo.get("summary", []))
    rows = []
    for key, (sub, res, _) in loaded.items():
        best = res.get("strongest_attack")
        rows.append(
            {
                "stage": sub.get("label", key),
                "test accuracy": f"{sub.get('test_accuracy', float('nan')):.3f}",
                "strongest attack": best,
                "eta [95% CI]": f"{res['eta']:.3f} {_ci(res['eta_ci'])}"
                if res.get("eta") is not None
                else "",
                "AUC (best)": f"{res['auc']:.3f}" if res.get("auc") is not None else "",
                "TPR@FPR 1% (best)": _pct(res["tpr_at_fpr"].get(_LOW_FPR), 2, "FPR 1% not measured"),
                "certified eta": f"{res['certificate']['eta']:.3g}" if res.get("certificate") else "none",
            }
        )
    figs = []
    for key, (sub, res, _) in loaded.items():
        curves = roc_attacks(res)
        if curves:
            cert = res.get("certificate")
            figs.append(roc_figure(curves, certificate=cert, title=f"ROC, {sub.get('label', key)}"))
    sections = [
        Section(
            "Before and after protection",
            list(demo.get("text", [])),
            [pd.DataFrame(rows)],
            figs,
        )
    ]
    for key, (sub, res, sc) in loaded.items():
        sections.extend(audit_sections(res, sc, heading=sub.get("label", key)))
    return demo.get("title", "mipkit demo: audit, protect, audit again"), summary, sections
