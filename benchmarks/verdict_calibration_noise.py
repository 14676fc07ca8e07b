"""Calibration of the audit-noise verdict: false alarms on a release that ignores its data, power on a leak.

``mipkit audit-noise`` plays the MIP game against a noise-wrapped model: ``n_releases`` releases, each trained
on a random half, attacked by the Bayes-optimal posterior at ``n_targets`` records. Its guesses form a
releases x targets table whose cells share a release (one noise draw, one training half) or a target (one
record's exposure), so they are not independent trials.

* **Null** (``--audits``, default 200): ``DummyRegressor(strategy="constant")`` wrapped with an a-priori noise
  scale: the released value never depends on the data, the attack's accuracy is exactly 1/2. A "finding" is an
  interval whose lower end is above 1/2 (the audit says the release measurably reveals membership).
* **Power** (``--power-audits``, default 100): ``DummyRegressor(strategy="mean")`` on 30 rows with eight
  heavy outliers, released with noise of scale 0.5 (far too little for them): the released mean moves with
  each outlier's membership, so the most exposed targets are guessed well above chance.

"Before" is the interval of the earlier versions: Clopper-Pearson on the pooled releases x targets guesses, as
if independent. "After" is the two-way cluster bootstrap over releases and targets that audit-noise reports
now (docs/theory.md section 11). Each share comes with its Clopper-Pearson interval.

Run: ``.venv/bin/python benchmarks/verdict_calibration_noise.py`` (``--quick`` for 40 + 20 audits).
Results: ``benchmarks/results/verdict_calibration_noise[_small].json`` (``--quick``: ``_small``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.dummy import DummyRegressor

from mipkit.stats import clopper_pearson
from mipkit.workflows.audit_noise import AuditNoiseConfig, audit_noise

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SETTINGS = {"n_reference": 20, "n_releases": 40, "n_targets": 4, "n_boot": 300}
POWER_SETTINGS = {**SETTINGS, "n_releases": 100, "n_targets": 8}
"""The null uses the unit test's size (tests/verdicts/test_noise_audit_verdict.py); the leak a larger game."""


def _null_case(seed: int) -> dict:
    X = np.random.default_rng(seed).normal(size=(30, 3))
    model = DummyRegressor(strategy="constant", constant=0.0)
    return {"estimator": model, "X": X, "y": X[:, 0], "eta": 0.1, "sigma": 1.0, "attributes": ("constant_",)}


def _leak_case(seed: int) -> dict:
    rng = np.random.default_rng(10_000 + seed)
    X = rng.normal(size=(30, 2))
    y = rng.normal(size=30)
    y[:8] = [40.0, -40.0, 60.0, -60.0, 50.0, -50.0, 45.0, -45.0]  # outliers: the mean says who was in
    model = DummyRegressor(strategy="mean")
    return {"estimator": model, "X": X, "y": y, "eta": 0.1, "sigma": 0.5, "attributes": ("constant_",)}


def _one(case: dict, seed: int, settings: dict) -> dict:
    config = AuditNoiseConfig(
        model=case["estimator"],
        eta=case["eta"],
        sigma=case["sigma"],
        attributes=case["attributes"],
        seed=seed,
        **settings,
    )
    out = audit_noise((case["X"], case["y"]), config)
    result, iv = out.game, out.intervals
    correct = int(np.sum(result.correct))
    trials = int(settings["n_releases"] * len(result.targets))
    before = clopper_pearson(correct, trials)
    return {
        "accuracy": float(iv["accuracy"]),
        "before_ci": [float(before[0]), float(before[1])],
        "after_ci": [float(iv["accuracy_ci"][0]), float(iv["accuracy_ci"][1])],
        "design_effect": iv.get("design_effect"),
    }


def _share(flags: list[bool]) -> dict:
    k, n = int(sum(flags)), len(flags)
    lo, hi = clopper_pearson(k, n)
    return {"findings": k, "audits": n, "rate": k / n, "rate_ci": [lo, hi]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=200)
    ap.add_argument("--power-audits", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="40 null and 20 leaky audits")
    args = ap.parse_args()
    n_null, n_power = (40, 20) if args.quick else (args.audits, args.power_audits)
    t0 = time.perf_counter()
    null = [_one(_null_case(s), s, SETTINGS) for s in range(n_null)]
    leak = [_one(_leak_case(s), s, POWER_SETTINGS) for s in range(n_power)]
    out = {
        "settings": {
            "null": SETTINGS,
            "power": POWER_SETTINGS,
            "null_audits": n_null,
            "power_audits": n_power,
        },
        "null": {
            "mean_accuracy": float(np.mean([r["accuracy"] for r in null])),
            "before": _share([r["before_ci"][0] > 0.5 for r in null]),
            "after": _share([r["after_ci"][0] > 0.5 for r in null]),
            "mean_design_effect": float(np.nanmean([r["design_effect"] or np.nan for r in null])),
        },
        "power": {
            "mean_accuracy": float(np.mean([r["accuracy"] for r in leak])),
            "before": _share([r["before_ci"][0] > 0.5 for r in leak]),
            "after": _share([r["after_ci"][0] > 0.5 for r in leak]),
        },
        "seconds": time.perf_counter() - t0,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(out, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "verdict_calibration_noise_small.json" if args.quick else "verdict_calibration_noise.json"
    (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
