"""Coverage and width of the NNAA intervals: the neighbourhood variance against the delete-one jackknife.

Each replicate draws training, holdout and synthetic tables of the mixed-type population of
``verdict_calibration_synthetic.py`` (integer and categorical columns: ties everywhere) and runs
:func:`mipkit.metrics.nnaa.privacy_loss` at ``--n`` records per set, twice:

* ``null``: the synthetic rows are fresh draws (E[AA] = 1/2 for train and test, E[privacy loss] = 0);
* ``leaky``: 30% of the synthetic rows are copies of training rows (the truth is the Monte Carlo mean of the
  estimates, which the intervals should cover 95% of the time).

For each interval method (``neighbourhood``, the default, and ``jackknife``) and each quantity (train AA,
test AA, privacy loss): the coverage with its Clopper-Pearson interval and the ratio of the mean interval
width to the ideal ``2 x 1.96 x`` Monte Carlo sd of the estimates.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/nnaa_interval_coverage.py --n 2000 --reps 600``
Results: ``benchmarks/results/nnaa_interval_coverage.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from verdict_calibration_synthetic import clopper_pearson, leaky_synthetic, population  # noqa: E402

METHODS = ("neighbourhood", "jackknife")
KEYS = ("train", "test", "privacy_loss")


def one(n: int, rng: np.random.Generator, share: float, seed: int) -> dict:
    from mipkit.data.tables import check_tables, encode_mixed
    from mipkit.metrics.nnaa import _normal_intervals, privacy_loss

    train, test = population(n, rng), population(n, rng)
    syn = leaky_synthetic(train, 2 * n, share, rng) if share > 0 else population(2 * n, rng)
    schema = check_tables(train, {"holdout": test, "synthetic": syn})
    tr, te, sy = (encode_mixed(df, schema) for df in (train, test, syn))
    pl = privacy_loss(tr, te, sy, random_state=seed, n_jobs=1)
    est = {"train": pl.train.value, "test": pl.test.value, "privacy_loss": pl.value}
    ivs = {m: _normal_intervals(pl.train, pl.test, 0.95, m) for m in METHODS}
    return {"est": est, "ci": {m: {k: ivs[m][f"{k}_ci"] for k in KEYS} for m in METHODS}}


def summarise(runs: list[dict], truth: dict | None) -> dict:
    est = {k: np.array([r["est"][k] for r in runs]) for k in KEYS}
    mc = {k: {"mean": float(v.mean()), "sd": float(v.std(ddof=1))} for k, v in est.items()}
    target = truth or {k: mc[k]["mean"] for k in KEYS}
    out = {"monte_carlo": mc, "truth": target, "truth_is": "exact" if truth else "Monte Carlo mean"}
    for m in METHODS:
        out[m] = {}
        for k in KEYS:
            ci = np.array([r["ci"][m][k] for r in runs])
            hits = int(np.sum((ci[:, 0] <= target[k]) & (target[k] <= ci[:, 1])))
            out[m][k] = {
                "coverage": hits / len(runs),
                "coverage_ci": clopper_pearson(hits, len(runs)),
                "width_over_ideal": float(np.mean(ci[:, 1] - ci[:, 0]) / (2 * 1.96 * mc[k]["sd"])),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "nnaa_interval_coverage.json"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    runs = {"null": [], "leaky": []}
    for r in range(args.reps):
        for case, share in (("null", 0.0), ("leaky", 0.3)):
            runs[case].append(one(args.n, np.random.default_rng([r, int(share * 100)]), share, r))
        if (r + 1) % 20 == 0:
            print(f"  {r + 1}/{args.reps} replicates, {time.perf_counter() - t0:.0f} s", flush=True)
    out = {
        "n": args.n,
        "reps": args.reps,
        "seconds": time.perf_counter() - t0,
        "null": summarise(runs["null"], {"train": 0.5, "test": 0.5, "privacy_loss": 0.0}),
        "leaky": summarise(runs["leaky"], None),
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    for case in ("null", "leaky"):
        print(f"\n{case} tables, n = {args.n} per set, {args.reps} replicates")
        for m in METHODS:
            for k in KEYS:
                s = out[case][m][k]
                lo, hi = s["coverage_ci"]
                print(
                    f"  {m:13s} {k:12s} coverage {100 * s['coverage']:5.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
                    f"  width / ideal {s['width_over_ideal']:.2f}"
                )


if __name__ == "__main__":
    main()
