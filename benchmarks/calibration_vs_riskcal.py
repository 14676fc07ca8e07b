"""DP-SGD noise calibration to a risk target: mipkit against riskcal (speed, agreement, safe side).

For each DP-SGD configuration and each risk target, both libraries calibrate the noise multiplier (mipkit
with its defaults: two-sided PLDs, the grid refined until the noise is within 0.5% of the least safe one);
the script records both noises, their relative difference, both wall-clock times (timed in the same
process, one after the other, so machine load affects both), and the risk each noise achieves re-evaluated
on the SAME fine pessimistic PLD (``--eval-grid``, default 5e-5; finer than either search), with mipkit's
PLD curve and, as a cross-check, riskcal's ``get_beta_from_pld`` on that same PLD. It also reports the
epsilon at ``delta = 1e-5`` of each noise, and where each answer lands against the interval of the
independent dp_accounting reference of ``benchmarks/accounting_vs_dp_accounting.py`` (pessimistic and
optimistic PLDs at a fine grid): ``below`` (the reference's upper risk meets the target: certified),
``inside`` (the target lies in the reference interval: not decided at that grid) or ``ABOVE`` (even the
reference's lower risk exceeds the target: the noise is too small).

Setup (riskcal lives in its own environment, never in mipkit's)::

    python3 -m venv benchmarks/envs/riskcal
    benchmarks/envs/riskcal/bin/pip install -e . riskcal
    benchmarks/envs/riskcal/bin/python benchmarks/calibration_vs_riskcal.py

``--quick`` runs the first configuration with the advantage target only (under a minute). The full run
takes ten minutes or more (riskcal's TPR-at-FPR calibration is the slow part). Results: a Markdown table
on stdout and ``benchmarks/results/calibration_vs_riskcal.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from mipkit.accounting import (
    SubsampledGaussian,
    calibrate_noise,
    dpsgd_family,
    target_from_dict,
    tradeoff_curve,
)
from mipkit.report import write_json_atomic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounting_vs_dp_accounting import Reference  # the independent reference, next door

RESULTS = Path(__file__).resolve().parent / "results" / "calibration_vs_riskcal.json"

FULL_CONFIGS = [(0.01, 1000), (256 / 60000, 2344)]
QUICK_CONFIGS = [(0.01, 1000)]  # with --quick: the advantage target only
TARGETS = [
    {"target": "advantage", "value": 0.1, "label": "advantage <= 0.1"},
    {"target": "tpr-at-fpr", "value": 0.1, "fpr": 0.01, "label": "TPR <= 0.1 at FPR 0.01"},
]
DELTA = 1e-5


def _riskcal_calibrate(spec: dict, q: float, steps: int) -> float:
    from riskcal.calibration.dpsgd import (
        find_noise_multiplier_for_advantage,
        find_noise_multiplier_for_err_rates,
    )

    if spec["target"] == "advantage":
        return float(
            find_noise_multiplier_for_advantage(advantage=spec["value"], sample_rate=q, num_steps=steps)
        )
    # TPR <= v at FPR a  <=>  FNR beta >= 1 - v at alpha = a
    return float(
        find_noise_multiplier_for_err_rates(
            alpha=spec["fpr"], beta=1.0 - spec["value"], sample_rate=q, num_steps=steps
        )
    )


def _fine_risk(spec: dict, noise: float, q: float, steps: int, grid: float) -> dict:
    """Risk of ``noise`` on one fine pessimistic PLD, evaluated by mipkit and by riskcal."""
    from riskcal.analysis import get_beta_from_pld

    curve = tradeoff_curve(SubsampledGaussian(noise, q, steps), value_discretization_interval=grid)
    if spec["target"] == "advantage":
        ours = curve.advantage()
        theirs = float(curve.pld.get_delta_for_epsilon(0.0))  # riskcal's get_advantage_from_pld
    else:
        ours = curve.tpr_at_fpr(spec["fpr"])
        theirs = 1.0 - float(get_beta_from_pld(curve.pld, alpha=spec["fpr"]))
    return {
        "mipkit_eval": float(ours),
        "riskcal_eval": float(theirs),
        "epsilon": curve.epsilon_for_delta(DELTA),
    }


def _landing(spec: dict, noise: float, q: float, steps: int) -> dict:
    """Where the target lands against the reference interval of the risk at ``noise``."""
    kind, param = ("advantage", 0.0) if spec["target"] == "advantage" else ("tpr", spec["fpr"])
    up = Reference(noise, q, steps, True).risk(kind, param)
    low = Reference(noise, q, steps, False).risk(kind, param)
    where = "below" if up <= spec["value"] else ("ABOVE" if low > spec["value"] else "inside")
    return {"upper": up, "lower": low, "lands": where}


def run(
    configs: list[tuple[float, int]], eval_grid: float, skip_riskcal: bool, quick: bool = False
) -> list[dict]:
    rows = []
    for q, steps in configs:
        for spec in TARGETS[:1] if quick else TARGETS:
            extra = {"fpr": spec["fpr"]} if "fpr" in spec else {}
            t0 = time.perf_counter()
            target = target_from_dict({"name": spec["target"], "value": spec["value"], **extra})
            ours = calibrate_noise(dpsgd_family(q, steps), target)
            t_ours = time.perf_counter() - t0
            row = {
                "sample_rate": q,
                "steps": steps,
                "target": spec["target"],
                "target_value": spec["value"],
                "label": spec["label"],
                **extra,
                "mipkit_noise": ours.noise,
                "mipkit_seconds": t_ours,
                "mipkit_converged": ours.converged,
                "mipkit_achieved": ours.achieved,
                "mipkit_achieved_fine": ours.achieved_fine,
                "mipkit_achieved_lower": ours.achieved_lower,
                "mipkit_noise_lower": ours.noise_lower,
                "mipkit_minimal": ours.minimal,
            }
            if not skip_riskcal:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs = _riskcal_calibrate(spec, q, steps)
                t_theirs = time.perf_counter() - t0
                row |= {
                    "riskcal_noise": theirs,
                    "riskcal_seconds": t_theirs,
                    "relative_difference": (ours.noise - theirs) / theirs,
                    "speedup": t_theirs / t_ours,
                }
            for who in ("mipkit", "riskcal"):
                if f"{who}_noise" not in row:
                    continue
                ev = _fine_risk(spec, row[f"{who}_noise"], q, steps, eval_grid)
                row[f"{who}_risk_fine"] = ev["mipkit_eval"]
                row[f"{who}_risk_fine_riskcal_eval"] = ev["riskcal_eval"]
                row[f"{who}_meets_target"] = bool(ev["mipkit_eval"] <= spec["value"])
                row[f"{who}_epsilon_at_delta"] = ev["epsilon"]
                row[f"{who}_reference"] = _landing(spec, row[f"{who}_noise"], q, steps)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def _lands(row: dict, who: str) -> str:
    ref = row.get(f"{who}_reference")
    if ref is None:
        return "-"
    return f"{ref['lands']} [{ref['lower']:.5f}, {ref['upper']:.5f}]"


def markdown(rows: list[dict], eval_grid: float) -> str:
    head = (
        "| q | T | target | mipkit noise | riskcal noise | rel. diff | mipkit s | riskcal s | speed-up "
        "| risk @ mipkit noise | risk @ riskcal noise | vs reference mipkit / riskcal "
        "| eps (delta=1e-5) mipkit / riskcal |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    ok = {True: "ok", False: "ABOVE"}
    for r in rows:

        def fmt(key: str, spec: str = ".4f", row: dict = r) -> str:
            return format(row[key], spec) if key in row else "-"

        lines.append(
            f"| {r['sample_rate']:.6g} | {r['steps']} | {r['label']} | {fmt('mipkit_noise')} | "
            f"{fmt('riskcal_noise')} | {fmt('relative_difference', '+.3%')} | "
            f"{fmt('mipkit_seconds', '.2f')} | {fmt('riskcal_seconds', '.1f')} | {fmt('speedup', '.1f')}x | "
            f"{fmt('mipkit_risk_fine', '.5f')} ({ok[r['mipkit_meets_target']]}) | "
            + (
                f"{fmt('riskcal_risk_fine', '.5f')} ({ok[r['riskcal_meets_target']]}) | "
                if "riskcal_meets_target" in r
                else "- | "
            )
            + f"{_lands(r, 'mipkit')} / {_lands(r, 'riskcal')} | "
            + f"{fmt('mipkit_epsilon_at_delta', '.3f')} / {fmt('riskcal_epsilon_at_delta', '.3f')} |"
        )
    note = (
        f"\nRisk re-evaluated for both noises on the same pessimistic PLD (grid {eval_grid:g}); "
        "'vs reference': the target against the dp_accounting reference interval [lower, upper] of the "
        "risk at that noise.\n"
    )
    return head + "\n".join(lines) + "\n" + note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small configurations (CI)")
    parser.add_argument("--eval-grid", type=float, default=5e-5, help="PLD grid of the common re-evaluation")
    parser.add_argument("--skip-riskcal", action="store_true", help="time mipkit only")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    configs = QUICK_CONFIGS if args.quick else FULL_CONFIGS
    rows = run(configs, args.eval_grid, args.skip_riskcal, quick=args.quick)
    table = markdown(rows, args.eval_grid)
    print(table)
    try:
        import riskcal

        riskcal_version = getattr(riskcal, "__version__", None)
        if riskcal_version is None:
            from importlib.metadata import version

            riskcal_version = version("riskcal")
    except ImportError:
        riskcal_version = None
    payload = {
        "benchmark": "calibration_vs_riskcal",
        "command": "benchmarks/envs/riskcal/bin/python benchmarks/calibration_vs_riskcal.py"
        + (" --quick" if args.quick else ""),
        "delta": DELTA,
        "eval_grid": args.eval_grid,
        "riskcal_version": riskcal_version,
        "python": platform.python_version(),
        "machine": platform.platform(),
        "numpy": np.__version__,
        "rows": rows,
        "table_markdown": table,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out, payload)
    print(f"saved {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
