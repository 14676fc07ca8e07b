"""Rebuild the report of an ``audit-synthetic`` run folder: plain-language summary, tables and figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mipkit.report.html import Figure, Section, figure_to_png
from mipkit.report.results import read_results


def _fmt(x, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{digits}f}"


def _summary(res: dict) -> list[str]:
    out = []
    nn = res.get("nnaa", {})
    if nn.get("privacy_loss") is not None:
        lo, hi = nn["bootstrap"]["privacy_loss_ci"]
        verdict = (
            "no measurable sign that the synthetic data copies its training records"
            if lo <= 0.02
            else "the synthetic data sits measurably closer to its training records than to unseen records"
        )
        out.append(
            f"Nearest-neighbour adversarial accuracy: {_fmt(nn['train'])} on the training records and "
            f"{_fmt(nn['test'])} on unseen records (1/2 = indistinguishable). Privacy loss "
            f"{_fmt(nn['privacy_loss'])} (95% interval {_fmt(lo)} to {_fmt(hi)}): {verdict}."
        )
    dcr = res.get("dcr", {})
    if dcr.get("auc") is not None:
        t1 = dcr["tpr_at_fpr"].get("0.01")
        prot = dcr["protection"]
        out.append(
            f"Distance-to-closest-record attack: AUC {_fmt(dcr['auc'])} (0.5 = guessing); at a 1% "
            f"false-positive rate it finds {_fmt(100 * t1, 1)}% of training records. "
            f"{_fmt(100 * prot['exact_match_share'], 2)}% of training records have an exact copy in the "
            f"synthetic data (unseen records: {_fmt(100 * prot['holdout_exact_match_share'], 2)}%)."
        )
    if dcr.get("baseline_protection"):
        out.append(
            f"DCR baseline protection {_fmt(dcr['baseline_protection']['score'], 2)} "
            "(1 = synthetic records are as far from real ones as random records would be)."
        )
    for s, r in res.get("inference", {}).items():
        pi = r["precision_improvement"]
        msg = (
            f"Inferring '{s}': the attack is right {_fmt(100 * r['precision'], 1)}% of the time; without the "
            f"targets' records one is right {_fmt(100 * r['baseline_precision'], 1)}% of the time "
            f"(non-member baseline, {r['baseline']}), a precision improvement of {_fmt(pi, 3)}"
        )
        if r.get("control"):
            rk = r["control"]["risk"]
            msg += f"; anonymeter-style risk against the control set {_fmt(rk['value'])}"
        out.append(msg + ".")
    return out


def _dcr_figures(run_dir: Path) -> list[Figure]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = run_dir / "scores.parquet"
    if not path.is_file():
        return []
    sc = pd.read_parquet(path)
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
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend()
        figs.append(
            Figure("DCR attack ROC (log-log)", figure_to_png(fig), "Low false-positive rates matter most.")
        )
    return figs


def _inference_figure(res: dict) -> list[Figure]:
    inf = res.get("inference", {})
    if not inf:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for s, r in inf.items():
        c = r["curve"]
        (line,) = ax.plot(c["coverage"], c["precision"], label=f"{s}: attack")
        ax.plot(c["coverage"], c["baseline_precision"], "--", color=line.get_color(), label=f"{s}: baseline")
    ax.set_xlabel("coverage (share of targets predicted)")
    ax.set_ylabel("precision")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    return [Figure("Precision vs coverage", figure_to_png(fig), "Baseline measured on the same targets.")]


def build(run_dir: str | Path) -> tuple[str, list[str], list[Section]]:
    """``(title, summary, sections)`` of an ``audit-synthetic`` run folder."""
    run_dir = Path(run_dir)
    res = read_results(run_dir)
    title = "Synthetic data audit"
    sections = []
    nn = res.get("nnaa", {})
    if nn.get("privacy_loss") is not None:
        b = nn["bootstrap"]
        tbl = pd.DataFrame(
            {
                "quantity": ["AA train", "AA test", "privacy loss"],
                "value": [nn["train"], nn["test"], nn["privacy_loss"]],
                "ci low": [b["train_ci"][0], b["test_ci"][0], b["privacy_loss_ci"][0]],
                "ci high": [b["train_ci"][1], b["test_ci"][1], b["privacy_loss_ci"][1]],
            }
        )
        sections.append(
            Section(
                "Nearest-neighbour adversarial accuracy",
                [
                    "Unbiased NNAA (Pedersen, ch. 4.1): 1/2 means a nearest-neighbour classifier cannot "
                    f"tell the two sets apart. Each set subsampled to n = {nn['n']}; "
                    + ("one synthetic table split in two halves." if nn["split_synthetic"] else "")
                ],
                [tbl],
            )
        )
    dcr = res.get("dcr", {})
    rows = []
    if dcr.get("auc") is not None:
        rows.append(("AUC", dcr["auc"]))
        rows += [(f"TPR at FPR {k}", v) for k, v in dcr["tpr_at_fpr"].items()]
        rows += [(k, v) for k, v in dcr["protection"].items()]
    for key in ("baseline_protection", "overfitting_protection"):
        if dcr.get(key):
            rows.append((key.replace("_", " ") + " score", dcr[key]["score"]))
    sections.append(
        Section(
            "Distance to closest record",
            ["Score of a record = minus its distance to the closest synthetic record."],
            [pd.DataFrame(rows, columns=["quantity", "value"])] if rows else [],
            _dcr_figures(run_dir),
        )
    )
    inf = res.get("inference", {})
    if inf:
        tbl = pd.DataFrame(
            [
                {
                    "secret": s,
                    "precision": r["precision"],
                    "coverage": r["coverage"],
                    "baseline precision": r["baseline_precision"],
                    "baseline": r["baseline"],
                    "precision improvement": r["precision_improvement"],
                    "control risk": (r.get("control") or {}).get("risk", {}).get("value"),
                }
                for s, r in inf.items()
            ]
        )
        sections.append(
            Section(
                "Attribute inference vs the non-member baseline",
                [
                    "Baseline: the same analyses on the original data without the targets, and the most "
                    "frequent value (Francis & Wagner). Precision improvement (P_atk - P_base)/(1 - P_base)."
                ],
                [tbl],
                _inference_figure(res),
            )
        )
    return title, _summary(res), sections
