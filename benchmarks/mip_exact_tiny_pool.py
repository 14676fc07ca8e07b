"""The figures of docs/protect.md and the README on MIP noise that need no data: exact and in seconds.

1. The exact optimal attack on the 12-record pool of docs/theory.md section 2b (11 N(0, 1) draws from seed
   0 and an outlier at 10, the mean of each of the C(12, 6) = 924 halves, the outlier as target), by
   numerical integration (:func:`mipkit.attacks.bayes.optimal_accuracy_1d`), for two ways of giving the
   spread:

   - ``tightest``: ``sigma_1 = E|theta - E theta|`` computed exactly over the halves (Theorem A's premise
     with nothing to spare; the code example of docs/protect.md);
   - ``a-priori``: the weight ``w = SD(theta)`` over the halves with ``sigma_1 = 1``, what
     ``MIPNoise(sigma=SD)`` / ``mipkit protect --sigma SD`` calibrate (``izzo2024`` always takes this path,
     with ``M = 2``).

2. The noise per coordinate of ``izzo2024`` (Cor. 10 as published) over ``mipkit-gaussian`` and
   ``mipkit-laplace`` for the same a-priori weights (all 1, ``sigma_1 = 1``), by dimension: the ratio of
   the laws' per-coordinate standard deviations (:meth:`NoiseLaw.coordinate_std`). The ratio of the scale
   constants alone, ``(6.16/eta)^2 / (1/(2 eta))`` = 1518 at eta = 0.05, is the d = 1 ratio for
   ``mipkit-laplace`` only.

Run: ``.venv/bin/python benchmarks/mip_exact_tiny_pool.py`` -> benchmarks/results/mip_exact_tiny_pool.json
(about 10 s on one core).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mipkit.attacks.bayes import optimal_accuracy_1d
from mipkit.game import all_halves
from mipkit.mechanisms import calibrate_noise

RESULTS = Path(__file__).resolve().parent / "results"
ETAS = (0.01, 0.05, 0.1, 0.2)
DIMS = (1, 2, 3, 5, 10, 31)


def exact_table() -> list[dict]:
    """Optimal accuracy on the 12-record pool for each calibration and way of giving the spread."""
    halves = all_halves(12)
    data = np.r_[np.random.default_rng(0).normal(size=11), 10.0]
    outputs = (halves.astype(float) @ data / 6)[:, None]
    sigma_1 = float(np.abs(outputs - outputs.mean()).mean())
    sd = np.array([float(outputs.std())])
    rows = []
    for eta in ETAS:
        laws = {
            "mipkit-laplace tightest": calibrate_noise(eta, "mipkit-laplace", np.ones(1), sigma_1=sigma_1),
            "mipkit-gaussian tightest": calibrate_noise(eta, "mipkit-gaussian", np.ones(1), sigma_1=sigma_1),
            "mipkit-laplace a-priori": calibrate_noise(eta, "mipkit-laplace", sd, sigma_1=1.0),
            "mipkit-gaussian a-priori": calibrate_noise(eta, "mipkit-gaussian", sd, sigma_1=1.0),
            "izzo2024 a-priori": calibrate_noise(eta, "izzo2024", sd),
        }
        acc = {k: round(optimal_accuracy_1d(outputs, halves, law, target=11), 4) for k, law in laws.items()}
        rows.append({"eta": eta, "bound": 0.5 + eta, **acc})
    return rows


def noise_ratios(eta: float = 0.05) -> list[dict]:
    """Per-coordinate noise SD of izzo2024 over the mipkit calibrations, same weights, by dimension."""
    rows = []
    for d in DIMS:
        w = np.ones(d)
        izzo = calibrate_noise(eta, "izzo2024", w).coordinate_std()[0]
        gauss = calibrate_noise(eta, "mipkit-gaussian", w, sigma_1=1.0).coordinate_std()[0]
        lap = calibrate_noise(eta, "mipkit-laplace", w, sigma_1=1.0).coordinate_std()[0]
        rows.append(
            {
                "d": d,
                "eta": eta,
                "izzo/gaussian": round(float(izzo / gauss), 1),
                "izzo/laplace": round(float(izzo / lap), 1),
            }
        )
    return rows


def main() -> dict:
    out = {"exact_12_records": exact_table(), "noise_ratio_per_coordinate": noise_ratios()}
    out["scale_constant_ratio_eta_0.05"] = round((6.16 / 0.05) ** 2 / (1 / (2 * 0.05)), 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mip_exact_tiny_pool.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    result = main()
    for row in result["exact_12_records"]:
        print(row)
    for row in result["noise_ratio_per_coordinate"]:
        print(row)
    print("scale constants:", result["scale_constant_ratio_eta_0.05"])
