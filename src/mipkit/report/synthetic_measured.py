"""The measured-risk sections of the ``audit-synthetic`` report: nearest-neighbour adversarial accuracy,
distance to closest record and attribute inference, each beside its certified bound when the run has one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mipkit.report.html import Figure, Section, figure_to_png, plain_log_ticks
from mipkit.report.results import read_parquet_file

__all__ = ["dcr_section", "inference_section", "nnaa_section"]


def _fmt(x, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{digits}f}"


def _nnaa_intervals(nn: dict) -> dict:
    """The NNAA intervals of a results dict."""
    return nn.get("intervals") or {}


def nnaa_section(res: dict) -> Section | None:
    """NNAA's accuracies and privacy loss with their intervals (None when it was not run)."""
    nn = res.get("nnaa", {})
    if nn.get("privacy_loss") is None:
        return None
    b = _nnaa_intervals(nn)
    tbl = pd.DataFrame(
        {
            "quantity": ["AA train", "AA test", "privacy loss"],
            "value": [nn["train"], nn["test"], nn["privacy_loss"]],
            "ci low": [b["train_ci"][0], b["test_ci"][0], b["privacy_loss_ci"][0]],
            "ci high": [b["train_ci"][1], b["test_ci"][1], b["privacy_loss_ci"][1]],
        }
    )
    return Section(
        "Nearest-neighbour adversarial accuracy",
        [
            "Unbiased NNAA (Pedersen, ch. 4.1): 1/2 means a nearest-neighbour classifier cannot "
            f"tell the two sets apart. Each set subsampled to n = {nn['n']}; "
            + ("one synthetic table split in two halves." if nn["split_synthetic"] else "")
        ],
        [tbl],
    )


def dcr_section(res: dict, run_dir: Path, certified: dict | None) -> Section:
    """The DCR attack's AUC, TPR at low FPR and protection scores, with its histograms and ROC."""
    dcr = res.get("dcr", {})
    rows = []
    if dcr.get("auc") is not None:
        rows.append(("AUC", dcr["auc"]))
        rows += [(f"TPR at FPR {k}", v) for k, v in dcr["tpr_at_fpr"].items()]
        rows += [(k, v) for k, v in dcr["protection"].items()]
    for key in ("baseline_protection", "overfitting_protection"):
        if dcr.get(key):
            rows.append((key.replace("_", " ") + " score", dcr[key]["score"]))
    dcr_figures = _dcr_figures(run_dir, certified)
    if not rows and not dcr_figures:
        dcr_note = dcr.get("note") or "not computed"
        return Section("Distance to closest record", [f"Not run: {dcr_note}."])
    return _dcr_table_section(rows, dcr_figures)


def inference_section(res: dict, certified: dict | None) -> Section | None:
    """Every attribute-inference attack against its like-for-like baseline, and the control-set risks
    (None when it was not run)."""
    inf = res.get("inference", {})
    if not inf:
        return None
    rows = []
    for s, r in inf.items():
        pairs = r.get("pairs") or {r["attack"]: r}
        for name, p in pairs.items():
            ci = p.get("precision_improvement_ci") or [None, None]
            note = p.get("note") or p.get("precision_improvement_note")
            rows.append(
                {
                    "secret": s,
                    "attack": name + (" (headline)" if name == r["attack"] else ""),
                    "precision": p["precision"],
                    "baseline (same analysis)": p["baseline"],
                    "baseline precision": p["baseline_precision"],
                    "precision improvement": p["precision_improvement"],
                    "95% interval": f"[{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci[0] is not None else "",
                    "n/a because": note or "",
                }
            )
    risk_rows = [
        {
            "secret": s,
            "attack": (r["control"].get("attack") or ""),
            "control risk": r["control"]["risk"]["value"],
        }
        for s, r in inf.items()
        if r.get("control")
    ]
    tables = [pd.DataFrame(rows)] + ([pd.DataFrame(risk_rows)] if risk_rows else [])
    return Section(
        "Attribute inference vs the like-for-like non-member baseline",
        [
            "Each attack on the synthetic data is compared with the same analysis run on the "
            "original data without the targets (Francis & Wagner): the nearest synthetic record "
            "against the nearest remaining real record, the model fitted on the synthetic data "
            "against the same model fitted on the real data without the targets. Precision "
            "improvement PI = (P_atk - P_base)/(1 - P_base); the headline is the strongest pair. "
            "Numeric secrets count as right within the stated share of the targets' range; "
            "the most-frequent value (the mode) is also reported as a baseline, right only where exact.",
        ],
        tables,
        _inference_figure(res, certified),
    )


def _dcr_figures(run_dir: Path, certified: dict | None = None) -> list[Figure]:
    sc = read_parquet_file(run_dir / "scores.parquet")
    if sc is None or not len(sc):  # the DCR part was not run
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    hi = float(np.quantile(sc["dcr"], 0.99)) if len(sc) else 1.0
    bins = np.linspace(0, max(hi, 1e-9), 50)
    for name, grp in sc.groupby("set"):
        ax.hist(np.clip(grp["dcr"], 0, hi), bins=bins, alpha=0.5, density=True, label=str(name))
    ax.set_xlabel("distance to closest synthetic record")
    ax.set_ylabel("density")
    ax.legend()
    figs.append(Figure("DCR histograms", figure_to_png(fig), "Training records vs unseen records."))
    if sc["member"].nunique() == 2:
        from mipkit.metrics import roc_curve

        f, t, _ = roc_curve(sc["score"].to_numpy(), sc["member"].to_numpy())
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        m = max(1, int((sc["member"] == 0).sum()))
        ax.loglog(np.clip(f, 1 / m, 1), np.clip(t, 1 / m, 1), label="DCR attack")
        ax.loglog([1 / m, 1], [1 / m, 1], "k--", lw=0.8, label="guessing")
        curve = ((certified or {}).get("dcr") or {}).get("curve")
        if curve:
            cf, ct = np.asarray(curve["fpr"]), np.asarray(curve["tpr"])
            keep = cf >= 1 / m
            ax.loglog(cf[keep], np.clip(ct[keep], 1 / m, 1), ":", color="C3", lw=1.5, label="certified bound")
        plain_log_ticks(ax.xaxis)
        plain_log_ticks(ax.yaxis)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend()
        figs.append(
            Figure("DCR attack ROC (log-log)", figure_to_png(fig), "Low false-positive rates matter most.")
        )
    return figs


def _inference_figure(res: dict, certified: dict | None = None) -> list[Figure]:
    inf = res.get("inference", {})
    if not inf:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    lo = 1.0
    for s, r in inf.items():
        c = r["curve"]
        if not len(c["coverage"]):
            continue
        lo = min(lo, min(c["coverage"]))
        (line,) = ax.step(c["coverage"], c["precision"], where="post", label=f"{s}: {r['attack']} attack")
        ax.step(
            c["coverage"],
            c["baseline_precision"],
            "--",
            where="post",
            color=line.get_color(),
            label=f"{s}: {r['baseline']} baseline",
        )
        bound = ((certified or {}).get("inference") or {}).get(s)
        if bound:
            # the bound holds for the guesses on all targets (coverage 1), not for a confident subset
            ax.plot([1.0], [bound["certified_success"]], marker="v", ms=9, ls="none", color=line.get_color(),
                    label=f"{s}: certified bound (all targets)")  # fmt: skip
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlim(max(lo, 1e-4) * 0.9, 1.3 if certified else 1.02)  # room for the bound markers at 1
    ax.set_xlabel("coverage (share of targets predicted, log scale)")
    ax.set_ylabel("precision")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    return [
        Figure(
            "Precision vs coverage",
            figure_to_png(fig),
            "Headline attack of each secret, predicting only above a confidence threshold; its like-for-like "
            "baseline measured on the same targets. Log scale: the few most confident guesses stay visible.",
        )
    ]


def _dcr_table_section(rows: list, figures: list[Figure]) -> Section:
    return Section(
        "Distance to closest record",
        ["Score of a record = minus its distance to the closest synthetic record."],
        [pd.DataFrame(rows, columns=["quantity", "value"])] if rows else [],
        figures,
    )
