"""mipkit's two-sided DP-SGD accounting and calibration against a reference built directly on dp_accounting.

The reference (written here, independent of mipkit's PLD code): ``dp_accounting``'s Poisson-subsampled
Gaussian PLD of one step in the *remove* direction, pessimistic (Connect-the-Dots) and optimistic (privacy
buckets, ``pessimistic_estimate=False``), on a fine grid, composed with ``dp_accounting``'s ``self_compose``.
The add direction is the same pair reversed (reflect the output): one step's add PMF has masses
``q_i = p_i e^{-l_i}`` at ``-l_i`` (and the mass ``Q`` lacks at ``+inf``), composed the same way. (Not
``dp_accounting``'s own add-direction PMF, whose total mass exceeds 1 by rounding: docs/theory.md
section 3.) Risks, for the symmetric curve of ``delta = max(delta_remove, delta_add)``:

* advantage ``= delta(0)``;
* TPR at FPR ``a``: ``min over the grid losses eps >= 0`` of ``min(delta(eps) + e^eps a,
  1 - e^-eps (1 - delta(eps) - a))``; on the optimistic side the remove direction's own symmetric curve
  (exact at the grid losses), which is never above the true envelope (the reverse of an optimistic PMF is
  not a lower bound: rounding losses down inflates the implied masses of ``Q``);
* epsilon at ``delta``: the smallest eps with ``delta(eps) <= delta`` (bisection).

Cases: DP-SGD configurations (q, T up to 1e6, noise 0.3-10) whose advantage lies in [0.01, 0.9], each with
six targets (advantage; TPR at FPR 1e-3, 1e-2, 1e-1; epsilon at delta 1e-5 and 1e-6). For every case:

1. mipkit's two-sided risk at the configuration's noise ``z``: its upper value must not be below the
   reference's lower value (nor its lower above the reference's upper), and its width must be within the
   tolerance (1e-4 on probabilities, 1e-3 relative on epsilon);
2. the target value is the reference's upper risk at ``z``, so the reference's minimal safe noise is ``z``
   (its upper risk decreases with the noise): mipkit's calibrated noise must be within 0.5% of ``z`` and
   must not be refused.

Usage::

    .venv/bin/python benchmarks/accounting_vs_dp_accounting.py            # the 200-case grid
    .venv/bin/python benchmarks/accounting_vs_dp_accounting.py --quick    # 12 cases
    .venv/bin/python benchmarks/accounting_vs_dp_accounting.py --one-million   # the T = 1e6 case only

Results: ``benchmarks/results/accounting_vs_dp_accounting[_small].json`` and a summary on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from mipkit.accounting import (
    AdvantageTarget,
    EpsilonTarget,
    SubsampledGaussian,
    TprAtFprTarget,
    calibrate_noise,
    dpsgd_family,
    tradeoff_curve,
)
from mipkit.report import write_json_atomic

RESULTS = Path(__file__).resolve().parent / "results"
FPRS = (1e-3, 1e-2, 1e-1)
DELTAS = (1e-5, 1e-6)
TOL, EPS_RTOL, NOISE_TOL = 1e-4, 1e-3, 5e-3

# (q, T, z): chosen so that the advantage lies in [0.01, 0.9] (checked at run time)
CONFIGS = [
    (0.1, 10, 0.6), (0.1, 10, 1.0), (0.1, 10, 3.0), (0.1, 100, 1.0), (0.1, 100, 2.0), (0.1, 100, 5.0),
    (0.1, 1000, 2.0), (0.1, 1000, 4.0), (0.1, 1000, 10.0), (0.1, 10_000, 6.0), (0.1, 10_000, 10.0),
    (0.01, 100, 0.5), (0.01, 100, 0.8), (0.01, 1000, 0.7), (0.01, 1000, 1.0), (0.01, 1000, 2.0),
    (0.01, 10_000, 1.0), (0.01, 10_000, 2.0), (0.01, 10_000, 4.0), (0.01, 100_000, 2.0),
    (0.01, 100_000, 4.0), (0.01, 1_000_000, 6.0), (0.01, 1_000_000, 10.0),
    (0.001, 1000, 0.3), (0.001, 1000, 0.5), (0.001, 10_000, 0.6), (0.001, 10_000, 1.0),
    (0.001, 100_000, 1.0), (0.001, 100_000, 2.0), (0.001, 1_000_000, 2.0), (0.001, 1_000_000, 4.09),
    (0.001, 1_000_000, 8.0), (0.003, 30_000, 1.5), (0.03, 3000, 1.5),
]  # fmt: skip
QUICK = [(0.1, 10, 1.0), (0.01, 1000, 1.0)]


# ---------------------------------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------------------------------
def _ref_grid(z: float, q: float, steps: int) -> float:
    """A fine grid: a sixteenth of one step's loss spread, at most 5e-5, and finer for long runs (the
    error of one step is of second order in the grid and adds up over the steps)."""
    scale = q * math.sqrt(math.expm1(min(1.0 / (z * z), 700.0)))  # one step's loss spread
    return float(min(5e-5, 2e-2 / math.sqrt(steps), max(scale / 16.0, 2e-7)))


def _pmfs(z: float, q: float, steps: int, grid: float, pessimistic: bool) -> list:
    """The composed remove PMF and (pessimistic side) the composed add PMF, as dense PMFs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # privacy buckets are used for the optimistic side, as asked
        pld = pld_lib.from_gaussian_mechanism(
            z, pessimistic_estimate=pessimistic, value_discretization_interval=grid, sampling_prob=q
        )
    one = pld._pmf_remove  # private: dp_accounting has no accessor
    out = [(one.self_compose(steps) if steps > 1 else one).to_dense_pmf()]
    if pessimistic:
        # the add pair is the remove pair reversed: one step's PMF has masses q_i = p_i e^{-l_i} at -l_i and
        # the mass Q lacks at +inf; composed by dp_accounting like the remove one
        dense = one.to_dense_pmf()
        p = np.asarray(dense._probs, dtype=float)
        losses = dense._lower_loss + np.arange(p.size)
        qm = p * np.exp(-losses * grid)
        add = pld_pmf.create_pmf(
            {int(-k): float(m) for k, m in zip(losses, qm, strict=True) if m > 0},
            grid,
            max(0.0, 1.0 - float(qm.sum())),
            pessimistic_estimate=True,
        )
        out.append((add.self_compose(steps) if steps > 1 else add).to_dense_pmf())
    return out


class _Profile:
    """``delta(eps)`` of one dense PMF, exactly, from cumulative sums (suffix sums from the largest loss
    down, so small tails keep their relative precision): ``sum_{l > eps} p_i (1 - e^{eps - l_i}) + p_inf``."""

    def __init__(self, pmf, grid: float) -> None:
        p = np.asarray(pmf._probs, dtype=float)
        losses = (pmf._lower_loss + np.arange(p.size)) * grid
        keep = p > 0
        self.p, self.losses, self.inf = p[keep], losses[keep], float(pmf._infinity_mass)
        qm = self.p * np.exp(-self.losses)
        self.sp = np.concatenate([np.cumsum(self.p[::-1])[::-1], [0.0]])
        self.sq = np.concatenate([np.cumsum(qm[::-1])[::-1], [0.0]])

    def __call__(self, eps: np.ndarray) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        i = np.searchsorted(self.losses, e, side="right")
        return np.clip(self.sp[i] - np.exp(e) * self.sq[i] + self.inf, 0.0, 1.0)


class Reference:
    """Risks of one side (``pessimistic`` True: upper, False: lower) of the reference."""

    def __init__(self, z: float, q: float, steps: int, pessimistic: bool) -> None:
        self.grid = _ref_grid(z, q, steps)
        self.pessimistic = pessimistic
        pmfs = _pmfs(z, q, steps, self.grid, pessimistic)
        self.remove = _Profile(pmfs[0], self.grid)
        self.add = _Profile(pmfs[1], self.grid) if pessimistic else None
        losses = np.concatenate([self.remove.losses] + ([self.add.losses] if self.add else []))
        self.eps = np.unique(np.concatenate([[0.0], losses[(losses >= 0) & (losses <= 60.0)]]))

    def delta(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """delta_remove and delta_add at each eps >= 0. The optimistic PMF rounds losses down under P, so
        its reverse is not a lower bound (the implied masses of Q are too large): on that side the remove
        direction alone, whose symmetric curve lies above the true envelope."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        rem = self.remove(e)
        return rem, (self.add(e) if self.add is not None else np.zeros(e.size))

    def advantage(self) -> float:
        rem, add = self.delta(np.array([0.0]))
        return float(max(rem[0], add[0]))

    def tpr(self, a: float) -> float:
        rem, add = self.delta(self.eps)
        g = np.exp(self.eps)

        def line_min(delta: np.ndarray) -> float:
            return float(min(np.min(delta + g * a), np.min(1.0 - (1.0 - delta - a) / g)))

        if self.pessimistic:
            return min(line_min(np.maximum(rem, add)), 1.0)
        return max(line_min(rem), line_min(add), a)

    def epsilon(self, delta: float) -> float:
        def worst(e: float) -> float:
            rem, add = self.delta(np.array([e]))
            return float(max(rem[0], add[0]))

        if worst(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, 1.0
        while worst(hi) > delta:
            lo, hi = hi, 2 * hi
            if hi > 200:
                return math.inf
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if worst(mid) <= delta else (mid, hi)
        return hi if self.pessimistic else lo

    def risk(self, kind: str, param: float) -> float:
        if kind == "advantage":
            return self.advantage()
        if kind == "tpr":
            return self.tpr(param)
        return self.epsilon(param)


# ---------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------
def _targets() -> list[tuple[str, float]]:
    return [("advantage", 0.0)] + [("tpr", a) for a in FPRS] + [("epsilon", d) for d in DELTAS]


def _mip_target(kind: str, param: float, value: float):
    if kind == "advantage":
        return AdvantageTarget(value)
    if kind == "tpr":
        return TprAtFprTarget(param, value)
    return EpsilonTarget(param, value)


def _mip_risk(curve, kind: str, param: float) -> float:
    if kind == "advantage":
        return float(curve.advantage())
    if kind == "tpr":
        return float(curve.tpr_at_fpr(param))
    return float(curve.epsilon_for_delta(param))


def run_config(q: float, steps: int, z: float, *, calibrate_too: bool = True) -> list[dict]:
    clock = time.perf_counter()
    up, low = Reference(z, q, steps, True), Reference(z, q, steps, False)
    ref_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    curve = tradeoff_curve(SubsampledGaussian(z, q, steps))
    lower = curve.lower_curve()
    mip_seconds = time.perf_counter() - clock
    rows = []
    for kind, param in _targets():
        r_up, r_low = up.risk(kind, param), low.risk(kind, param)
        m_up, m_low = _mip_risk(curve, kind, param), _mip_risk(lower, kind, param)
        width = m_up - m_low
        tol = EPS_RTOL * max(m_up, 1e-12) if kind == "epsilon" else TOL
        row = {
            "q": q, "steps": steps, "z": z, "target": kind, "param": param,
            "reference": {"upper": r_up, "lower": r_low, "grid": up.grid},
            "mipkit": {"upper": m_up, "lower": m_low, "width": width, "grid": curve.grid},
            "upper_not_below_reference_lower": bool(m_up >= r_low - 1e-12),
            "lower_not_above_reference_upper": bool(m_low <= r_up + 1e-12),
            "width_within_tolerance": bool(width <= tol),
            "seconds": {"reference_curve": ref_seconds, "mipkit_curve": mip_seconds},
        }  # fmt: skip
        if calibrate_too and math.isfinite(r_up) and r_up > (param if kind == "tpr" else 0.0):
            clock = time.perf_counter()
            try:
                cal = calibrate_noise(dpsgd_family(q, steps), _mip_target(kind, param, r_up))
                row["calibration"] = {
                    "value": r_up,
                    "noise": cal.noise,
                    "noise_lower": cal.noise_lower,
                    "minimal": cal.minimal,
                    "relative_to_reference": cal.noise / z - 1.0,
                    "within_tolerance": bool(abs(cal.noise / z - 1.0) <= NOISE_TOL),
                    "refused": False,
                    "seconds": time.perf_counter() - clock,
                }
            except ValueError as err:
                row["calibration"] = {"value": r_up, "refused": True, "message": str(err)}
        rows.append(row)
    return rows


def summarise(rows: list[dict]) -> dict:
    cals = [r["calibration"] for r in rows if "calibration" in r]
    done = [c for c in cals if not c["refused"]]
    return {
        "cases": len(rows),
        "upper_never_below_reference_lower": all(r["upper_not_below_reference_lower"] for r in rows),
        "lower_never_above_reference_upper": all(r["lower_not_above_reference_upper"] for r in rows),
        "width_within_tolerance_share": float(np.mean([r["width_within_tolerance"] for r in rows])),
        "calibrations": len(cals),
        "refusals": sum(c["refused"] for c in cals),
        "noise_within_0.5pct_of_reference_share": float(np.mean([c["within_tolerance"] for c in done]))
        if done
        else None,
        "largest_noise_gap_to_reference": max((abs(c["relative_to_reference"]) for c in done), default=None),
        "all_proved_minimal": all(c["minimal"] for c in done),
    }


def one_million() -> dict:
    """The T = 1e6 case: q = 0.001, advantage <= 0.1."""
    clock = time.perf_counter()
    cal = calibrate_noise(dpsgd_family(0.001, 1_000_000), AdvantageTarget(0.1))
    seconds = time.perf_counter() - clock
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    check = Reference(cal.noise, 0.001, 1_000_000, True)
    return {
        "noise": cal.noise,
        "noise_lower": cal.noise_lower,
        "minimal": cal.minimal,
        "achieved": cal.achieved_fine,
        "achieved_lower": cal.achieved_lower,
        "seconds": seconds,
        "max_rss_mb": rss_mb,
        "reference_upper_advantage_at_noise": check.advantage(),
        "relative_to_4.09": cal.noise / 4.09 - 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 configurations (12 cases)")
    parser.add_argument("--one-million", action="store_true", help="only the T = 1e6 calibration")
    args = parser.parse_args(argv)
    meta = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg(),
    }
    if args.one_million:
        out = {"one_million": one_million(), **meta, "load_average_end": os.getloadavg()}
        write_json_atomic(RESULTS / "accounting_vs_dp_accounting_one_million.json", out)
        print(json.dumps(out, indent=1))
        return 0
    clock = time.perf_counter()
    rows: list[dict] = []
    for q, steps, z in QUICK if args.quick else CONFIGS:
        t = time.perf_counter()
        new = run_config(q, steps, z)
        adv = new[0]["reference"]["upper"]
        print(f"q={q:g} T={steps} z={z:g}: advantage {adv:.4f}, {time.perf_counter() - t:.1f} s", flush=True)
        rows += new
    summary = summarise(rows)
    out = {
        "summary": summary,
        "seconds": time.perf_counter() - clock,
        **meta,
        "load_average_end": os.getloadavg(),
        "rows": rows,
    }
    name = "accounting_vs_dp_accounting_small.json" if args.quick else "accounting_vs_dp_accounting.json"
    write_json_atomic(RESULTS / name, out)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
