"""Tables and figures of the optimally-soft-labels benchmarks (``_soft_labels.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def _ci(r: dict, key: str, digits: int = 3) -> str:
    lo, hi = r[key + "_ci"]
    return f"{r[key]:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _diff(r: dict, key: str, digits: int = 3) -> str:
    if "vs_hard" not in r:
        return ""
    d = r["vs_hard"][key]
    return f"{d['estimate']:+.{digits}f} [{d['ci'][0]:+.{digits}f}, {d['ci'][1]:+.{digits}f}]"


def print_table(result: dict) -> str:
    """The markdown table of docs/defences.md (95% cluster-bootstrap intervals over defender models)."""
    head = (
        "| setting | test accuracy (mean) | minus hard | TOST p (+-1 pt) | LTU privacy | minus hard | "
        "LiRA TPR@1% | RMIA TPR@1% |"
    )
    lines = [head, "|" + " --- |" * 8]
    for r in result["settings"]:
        tost = "" if "vs_hard" not in r else f"{r['vs_hard']['test_accuracy']['tost']['p']:.2g}"
        lines.append(
            f"| {r['setting']} | {_ci(r, 'test_accuracy')} | {_diff(r, 'test_accuracy')} | {tost} | "
            f"{_ci(r, 'ltu_privacy')} | {_diff(r, 'ltu_privacy')} | {_ci(r, 'lira_tpr', 4)} | "
            f"{_ci(r, 'rmia_tpr', 4)} |"
        )
    for r in result["settings"]:
        if "chosen_alpha_counts" in r:
            lines.append(f"\n{r['setting']}: chosen alphas (models) {r['chosen_alpha_counts']}")
    table = "\n".join(lines)
    print(table, flush=True)
    return table


def save(result: dict, stem: str, title: str) -> None:
    """``<stem>.json``, ``<stem>.csv`` and the figures ``<stem>.png`` / ``<stem>_p_in_histograms.png`` in
    results/."""
    import pandas as pd

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2, default=float))
    flat = [
        {
            k: (json.dumps(v) if isinstance(v, (list, dict)) else v)
            for k, v in r.items()
            if k != "chosen_alphas"
        }
        for r in result["settings"]
    ]
    pd.DataFrame(flat).to_csv(RESULTS / f"{stem}.csv", index=False)
    _figures(result, stem, title)
    print(f"wrote {RESULTS / stem}.json/.csv/.png/_p_in_histograms.png", flush=True)


def _figures(result: dict, stem: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["settings"]
    names = [r["setting"] for r in rows]
    n = result["config"]["n_defenders"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    ax = axes[0]
    ax.boxplot([result["per_model"][k]["test_accuracy"] for k in names], showfliers=True)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=60, ha="right")
    ax.set_ylabel("test accuracy (held-out, clean labels)")
    ax.set_title(f"utility over {n} defender models")
    ax = axes[1]
    for r in rows:
        colour = "k" if r["kind"] == "hard" else ("tab:orange" if r["kind"] == "smooth" else "tab:blue")
        x, y = r["test_accuracy"], r["ltu_privacy"]
        xe = [[x - r["test_accuracy_ci"][0]], [r["test_accuracy_ci"][1] - x]]
        ye = [[y - r["ltu_privacy_ci"][0]], [r["ltu_privacy_ci"][1] - y]]
        ax.errorbar(x, y, xerr=xe, yerr=ye, fmt="o", color=colour)
        ax.annotate(r["setting"], (x, y), fontsize=8, xytext=(4, 3), textcoords="offset points")
    ax.set_xlabel("mean test accuracy")
    ax.set_ylabel("LTU privacy min{2(1-A), 1}")
    ax.set_title("privacy vs utility (thesis Fig. 5.12); bars: 95% cluster bootstrap")
    ax = axes[2]
    x = np.arange(len(names))
    for off, key, lab in ((-0.2, "lira_tpr", "LiRA"), (0.2, "rmia_tpr", "RMIA")):
        vals = np.array([r[key] for r in rows])
        ci = np.array([r[key + "_ci"] for r in rows]).T
        ax.bar(x + off, vals, width=0.4, label=lab, yerr=[vals - ci[0], ci[1] - vals])
    ax.axhline(result["config"]["fpr"], color="grey", ls=":", lw=1, label="chance")
    ax.set_xticks(x, names, rotation=60, ha="right")
    ax.set_ylabel(f"TPR at {result['config']['fpr']:.0%} FPR (pooled over defender models)")
    ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}.png", dpi=110)
    plt.close(fig)

    bins = np.array(result["histograms"]["bins"])
    hist = result["histograms"]["median_p_in"]
    cols = 4
    nrows = int(np.ceil(len(names) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 2.8 * nrows), sharex=True, squeeze=False)
    for ax, r in zip(axes.ravel(), rows, strict=False):
        for part, colour in (("defender", "tab:red"), ("reserve", "tab:blue")):
            ax.stairs(hist[r["setting"]][part], bins, color=colour, label=part)
        mood = "" if "mood_p_value_vs_hard" not in r else f", Mood p={r['mood_p_value_vs_hard']:.2g}"
        ax.set_title(f"{r['setting']}: median {r['median_p_in_defender']:.3f}{mood}", fontsize=9)
        ax.axvline(0.5, color="grey", lw=0.8)
    for ax in axes.ravel()[len(rows) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=8)
    fig.supxlabel("median over defender models of the LTU attacker's P_IN")
    fig.suptitle(title + " - thesis Fig. 5.2")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}_p_in_histograms.png", dpi=110)
    plt.close(fig)
