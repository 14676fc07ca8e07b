"""The Bayes-optimal attack on MIP-noise-wrapped logistic regression (breast cancer), full size.

The pool ``D`` is the whole breast-cancer table (569 rows; standardised, constant feature, unit rows),
``A = LogisticRegression(C=1, fit_intercept=False)``. ``N_REF`` fits on random halves of ``D`` are the
attacker's reference pool and the sigma estimate (95% bootstrap upper bound), the same as
``MIPNoise(train_on="half")`` computes; ``N_REL`` fresh random halves are released with fresh noise. For the
``N_TARGETS`` most exposed records the Monte Carlo Bayes posterior decides membership (guess member iff
``>= 1/2``). The measured accuracy (pooled over targets, Clopper-Pearson 95%) must stay at or below
``1/2 + eta``. A row with 1/20 of the mipkit-gaussian noise shows what the attack finds when the noise is
too small.

Run: ``.venv/bin/python benchmarks/mip_optimal_attack.py`` -> benchmarks/results/mip_optimal_attack.json
(env ``MIPKIT_BENCH_NREF``, ``MIPKIT_BENCH_NREL`` to change the sizes; defaults 400 and 400).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from mipkit.attacks.bayes import membership_posterior, most_exposed_targets
from mipkit.game import mip_game
from mipkit.mechanisms import calibrate_noise, estimate_spread, fit_on_halves

RESULTS = Path(__file__).resolve().parent / "results"
N_REF = int(os.environ.get("MIPKIT_BENCH_NREF", "400"))
N_REL = int(os.environ.get("MIPKIT_BENCH_NREL", "400"))
N_TARGETS = 10
ETAS = (0.05, 0.1, 0.2)


def main() -> dict:
    X, y = load_breast_cancer(return_X_y=True)
    Z = np.c_[StandardScaler().fit_transform(X), np.ones(len(X))]
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    est = LogisticRegression(C=1.0, fit_intercept=False, max_iter=1000)
    t0 = time.perf_counter()
    ref_out, ref_halves = fit_on_halves(
        est, Z, y, n_fits=N_REF, attributes=("coef_",), random_state=1, n_jobs=2
    )
    game_out, game_halves = fit_on_halves(
        est, Z, y, n_fits=N_REL, attributes=("coef_",), random_state=2, n_jobs=2
    )
    fit_s = time.perf_counter() - t0
    rows = []
    for cal in ("mipkit-gaussian", "mipkit-laplace", "izzo2024"):
        spread = estimate_spread(ref_out, calibration=cal, confidence=0.95, random_state=3)
        targets = most_exposed_targets(ref_out, ref_halves, spread.weights, N_TARGETS)
        for eta in ETAS:
            for factor in (1.0, 0.05) if cal == "mipkit-gaussian" else (1.0,):
                noise = calibrate_noise(eta, cal, spread.weights, sigma_1=spread.sigma_1_upper * factor)
                res = mip_game(
                    game_out,
                    game_halves,
                    noise,
                    attack=membership_posterior,
                    targets=targets,
                    n_releases=N_REL,
                    reference=(ref_out, ref_halves),
                    eta_bound=eta,
                    random_state=4,
                    draw="sequential",
                )
                d = res.to_dict()
                rows.append(
                    {
                        "calibration": cal,
                        "eta": eta,
                        "noise_factor": factor,
                        "accuracy": d["accuracy"],
                        "ci": d["ci"],
                        "bound": d["accuracy_bound"],
                        "trials": d["trials"],
                        "upper_ci_within_bound": d["upper_ci_within_bound"],
                    }
                )
    out = {
        "n_reference": N_REF,
        "n_releases": N_REL,
        "n_targets": N_TARGETS,
        "fit_seconds": fit_s,
        "elapsed_s": time.perf_counter() - t0,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mip_optimal_attack.json").write_text(json.dumps(out, indent=2))
    print("| calibration | eta | noise | accuracy | 95% CI | bound 1/2+eta | upper CI <= bound |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        noise = "calibrated" if r["noise_factor"] == 1.0 else "1/20 (too little)"
        print(
            f"| {r['calibration']} | {r['eta']} | {noise} | {r['accuracy']:.4f} | "
            f"{r['ci'][0]:.4f} - {r['ci'][1]:.4f} | {r['bound']:.2f} | {r['upper_ci_within_bound']} |"
        )
    print(f"\n{N_REF} reference fits + {N_REL} released fits in {fit_s:.0f} s; {N_TARGETS} targets each")
    return out


if __name__ == "__main__":
    main()
