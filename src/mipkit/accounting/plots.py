"""Figures of a certified guarantee: the trade-off curve as a ROC bound and certified precision-recall.

Built on :class:`matplotlib.figure.Figure` directly (the Agg canvas; no pyplot state, no GUI backend),
so it is safe in servers, tests and notebooks alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mipkit._defaults import DEFAULT_BASE_RATES
from mipkit.accounting.risk import certified_precision, eta_from_curve, mip_tpr_bound
from mipkit.accounting.tradeoff import TradeoffCurve
from mipkit.accounting.wording import describe_mechanism

__all__ = ["plot_tradeoff", "skew_label"]


def skew_label(base_rate: float) -> str:
    """``"1:10"`` for a member fraction of 1/11 (members : non-members)."""
    ratio = (1.0 - base_rate) / base_rate
    return f"1:{ratio:.4g}"


def plot_tradeoff(
    curve: TradeoffCurve,
    *,
    base_rates: Sequence[float] = DEFAULT_BASE_RATES,
    title: str | None = None,
) -> Figure:
    """Three panels: the certified ROC bound (linear and log-log) and certified precision-recall.

    * ROC panels: the largest TPR at each FPR, ``1 - f(FPR)`` (every membership attack lies on or under
      it), next to what MIP eta alone allows, ``min(1, FPR + 2 eta)``, and the chance line.
    * Precision-recall: ``pi r / (pi r + (1 - pi) alpha*(r))`` at the member fractions ``base_rates``
      (default skews 1:1, 1:10, 1:100, 1:1000; docs/theory.md section 4).

    Returns a :class:`matplotlib.figure.Figure` (save it with ``fig.savefig("file.png")``).
    """
    eta = eta_from_curve(curve)
    fig = Figure(figsize=(15, 4.6), layout="constrained")
    ax_lin, ax_log, ax_pr = fig.subplots(1, 3)

    lin = np.linspace(0.0, 1.0, 1001)
    ax_lin.plot(lin, curve.tpr(lin), color="C0", lw=2, label="f-DP bound: 1 - f(FPR)")
    ax_lin.plot(
        lin,
        mip_tpr_bound(min(eta, 0.5), lin),
        color="C1",
        ls="--",
        label=f"MIP bound: FPR + 2 eta ({eta:.3f})",
    )
    ax_lin.plot(lin, lin, color="grey", ls=":", label="chance")
    ax_lin.set(
        xlim=(0, 1), ylim=(0, 1.01), xlabel="false-positive rate (FPR)", ylabel="true-positive rate (TPR)"
    )
    ax_lin.set_title("Largest attack TPR at each FPR")
    ax_lin.legend(loc="lower right", fontsize="small")

    logs = np.logspace(-6, 0, 600)
    ax_log.loglog(logs, np.clip(curve.tpr(logs), 1e-300, None), color="C0", lw=2, label="f-DP bound")
    ax_log.loglog(logs, mip_tpr_bound(min(eta, 0.5), logs), color="C1", ls="--", label="MIP bound")
    ax_log.loglog(logs, logs, color="grey", ls=":", label="chance")
    ax_log.set(xlim=(1e-6, 1), ylim=(1e-6, 1.5), xlabel="FPR (log)", ylabel="TPR (log)")
    ax_log.set_title("Same, log-log (the low-FPR regime)")
    ax_log.legend(loc="lower right", fontsize="small")

    recall = np.logspace(-3, 0, 500)
    floor = min(base_rates) / 3
    for k, pi in enumerate(base_rates):
        ax_pr.plot(recall, certified_precision(curve, recall, pi), color=f"C{k}", lw=2, label=skew_label(pi))
        ax_pr.axhline(pi, color=f"C{k}", ls=":", lw=1)
    ax_pr.set_xscale("log")
    ax_pr.set_yscale("log")
    ax_pr.set(xlim=(1e-3, 1), ylim=(floor, 1.2), xlabel="recall (share of members found, log)")
    ax_pr.set_ylabel("precision (log)")
    ax_pr.set_title("Largest precision at each skew")
    ax_pr.legend(loc="best", fontsize="small", title="members : non-members\n(dotted: guessing)")

    desc = curve.describe()
    record = desc.get("mechanism") or {"name": desc["curve"]}
    fig.suptitle(title or f"Certified risk of {describe_mechanism(record)} ({desc['neighbours']} neighbours)")
    return fig
