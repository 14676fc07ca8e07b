"""False alarms and power of the certified-bound verdict of ``audit-synthetic --certificate`` (DCR ROC scan).

Null: member and non-member distances exchangeable (a synthesizer whose output ignores its training data:
2,000 members, 600 non-members, exponential), checked against the certificate of an (epsilon, 1e-5)-DP
synthesizer. Counted per audit: ``violation`` (beyond sampling error, simultaneous over the ROC points: the
headline) and ``above_bound`` (some point estimate above the bound by more than one member: the rule used as
the headline before 2026-11-26). Leak: half the members copied (distance 0), the rest as under the null.

Run: ``.venv/bin/python benchmarks/certified_bounds_calibration.py [--runs 200]`` (about 20 s);
results in ``benchmarks/results/certified_bounds_calibration.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mipkit.stats import clopper_pearson
from mipkit.synthesizers.audit_bounds import certified_roc_excess
from mipkit.synthesizers.certificate import certificate_curve, certificate_from_dp

RESULTS = Path(__file__).resolve().parent / "results"


def rate(k: int, n: int) -> dict:
    lo, hi = clopper_pearson(k, n)
    return {"count": k, "runs": n, "rate": k / n, "ci95": [lo, hi]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    out: dict = {"runs": args.runs, "members": 2000, "non_members": 600, "seed": args.seed, "epsilons": {}}
    for eps in (1.0, 3.0):
        curve = certificate_curve(certificate_from_dp(method="null", epsilon=eps, delta=1e-5))
        null_v = null_a = leak_v = 0
        for _ in range(args.runs):
            members, non = rng.exponential(1.0, 2000), rng.exponential(1.0, 600)
            res = certified_roc_excess(curve, members, non)
            null_v += res["violation"]
            null_a += res["above_bound"]
            members[:1000] = 0.0
            leak_v += certified_roc_excess(curve, members, non)["violation"]
        out["epsilons"][str(eps)] = {
            "null_violation": rate(null_v, args.runs),
            "null_point_above_bound": rate(null_a, args.runs),
            "leak_violation": rate(leak_v, args.runs),
        }
        print(
            f"epsilon {eps:g}: null violations {null_v}/{args.runs}, null points above bound "
            f"{null_a}/{args.runs}, leak found {leak_v}/{args.runs}"
        )
    out["command"] = "python benchmarks/certified_bounds_calibration.py"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "certified_bounds_calibration.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
