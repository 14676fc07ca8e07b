"""Reproduce Fig. 1 of Izzo et al. (TMLR 2024): noise needed for eta-MIP vs eta-MIP-through-DP.

The Prop. 11 construction: ``A(D) = 1 / sum_{x in D} x`` on ``D = {2^i : i = 0..n-2} u {A}`` with
``p = 1/C(n, n/2)`` and ``A = sqrt(p) - sum_{i=0}^{n/2-2} 2^i``. Over random halves the output has
variance ``sigma^2 <= 5`` (App. D), while its sensitivity grows like ``p^(-1/2) ~ 2^(n/2)``:

    Delta(n) = p^(-1/2) - 1 / (2^(n/2-1) - 1 + 2^(n-2))

(the half ``D* = {2^0..2^(n/2-2), A}`` has output ``p^(-1/2)``; every other half has output in [0, 1], and
the neighbour of ``D*`` with the largest sum swaps ``A`` for ``2^(n-2)``). The script checks this formula
and the variance bound by brute force for small n.

Curves (y = noise scale, log axis), as functions of eta:
- DP, Laplace via Thm 4 (the paper's dotted lines): ``b = Delta / log((1+2 eta)/(1-2 eta))``, per n;
- DP, Laplace with the exact Laplace curve (mipkit): ``b = Delta / (-2 log(1 - 2 eta))``; and Gaussian GDP;
- MIP, Cor. 10 as published (the paper's solid line, M = 2): Laplace scale ``(6.16/eta)^2 sigma``;
- MIP, Theorem A (mipkit-laplace): Laplace scale ``sigma_1 / (2 eta)``;
- MIP, Theorem A Gaussian variant: sigma ``sigma_1 / (eta sqrt(2 pi))``;
with ``sigma = sigma_1 = sqrt(5)`` (``E|theta - E theta| <= sqrt(Var) <= sqrt(5)``).

Run: ``.venv/bin/python benchmarks/fig1_mip_vs_dp.py`` -> benchmarks/results/fig1_mip_vs_dp.{png,csv,json}.
"""

from __future__ import annotations

import csv
import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np

from mipkit.mechanisms import IZZO_CONSTANT
from mipkit.mechanisms.dp_noise import gaussian_sigma_for_eta, laplace_scale_for_eta

RESULTS = Path(__file__).resolve().parent / "results"
SIGMA_BOUND = math.sqrt(5.0)
NS = (36, 40, 44, 48)


def prop11_dataset(n: int) -> list[float]:
    p = 1.0 / math.comb(n, n // 2)
    a = math.sqrt(p) - sum(2.0**i for i in range(n // 2 - 1))
    return [2.0**i for i in range(n - 1)] + [a]


def prop11_sensitivity(n: int) -> float:
    p = 1.0 / math.comb(n, n // 2)
    return p**-0.5 - 1.0 / (2.0 ** (n // 2 - 1) - 1 + 2.0 ** (n - 2))


def brute_force(n: int) -> tuple[float, float]:
    """Exact sensitivity over neighbouring halves and the exact std over all halves (small n)."""
    data = prop11_dataset(n)
    halves = list(combinations(range(n), n // 2))
    value = {h: 1.0 / sum(data[i] for i in h) for h in halves}
    sens = 0.0
    for h in halves:
        inside = set(h)
        for out_i in h:
            for in_j in range(n):
                if in_j in inside:
                    continue
                nb = tuple(sorted((inside - {out_i}) | {in_j}))
                sens = max(sens, abs(value[h] - value[nb]))
    vals = np.array(list(value.values()))
    return sens, float(vals.std())


def curves(etas: np.ndarray) -> dict[str, np.ndarray]:
    out = {
        "mip_izzo2024_published": (IZZO_CONSTANT / etas) ** 2 * SIGMA_BOUND,
        "mip_theorem_a_laplace": SIGMA_BOUND / (2 * etas),
        "mip_theorem_a_gaussian_sigma": SIGMA_BOUND / (etas * math.sqrt(2 * math.pi)),
    }
    for n in NS:
        sens = prop11_sensitivity(n)
        out[f"dp_laplace_thm4_n{n}"] = np.array([laplace_scale_for_eta(e, sens, method="thm4") for e in etas])
        out[f"dp_laplace_exact_n{n}"] = np.array(
            [laplace_scale_for_eta(e, sens, method="exact-curve") for e in etas]
        )
        out[f"dp_gaussian_sigma_n{n}"] = np.array([gaussian_sigma_for_eta(e, sens) for e in etas])
    return out


def main() -> dict:
    RESULTS.mkdir(parents=True, exist_ok=True)
    checks = []
    for n in (6, 8, 10, 12):
        sens, std = brute_force(n)
        checks.append(
            {
                "n": n,
                "sensitivity_brute_force": sens,
                "sensitivity_formula": prop11_sensitivity(n),
                "std_over_halves": std,
                "std_bound": SIGMA_BOUND,
            }
        )
        assert abs(sens - prop11_sensitivity(n)) <= 1e-9 * sens, (n, sens)
        assert std <= SIGMA_BOUND
    etas = np.round(np.linspace(0.005, 0.45, 90), 6)
    data = curves(etas)
    with open(RESULTS / "fig1_mip_vs_dp.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["eta", *data])
        for i, e in enumerate(etas):
            w.writerow([e, *(f"{data[k][i]:.6g}" for k in data)])

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(NS)))
    for c, n in zip(colors, NS, strict=True):
        ax.plot(etas, data[f"dp_laplace_thm4_n{n}"], ":", color=c, lw=2, label=f"DP Laplace (Thm 4), n={n}")
    ax.plot(
        etas, data["mip_izzo2024_published"], "-", color="black", lw=2, label="MIP Cor. 10 published (M=2)"
    )
    ax.plot(etas, data["mip_theorem_a_laplace"], "-", color="tab:red", lw=2, label="MIP Theorem A (Laplace)")
    ax.plot(
        etas,
        data["mip_theorem_a_gaussian_sigma"],
        "--",
        color="tab:red",
        lw=1.5,
        label="MIP Theorem A (Gaussian sigma)",
    )
    ax.set_yscale("log")
    ax.set_xlabel("eta (bound on attack accuracy - 1/2)")
    ax.set_ylabel("noise scale")
    ax.set_title("Noise for eta-MIP vs DP, Prop. 11 data (Izzo et al. 2024, Fig. 1)")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(RESULTS / "fig1_mip_vs_dp.png", dpi=120)

    pick = [0.01, 0.05, 0.1, 0.2]
    table = []
    for e in pick:
        row = {"eta": e}
        scalar = curves(np.array([e]))
        row.update({k: float(v[0]) for k, v in scalar.items()})
        table.append(row)
    summary = {
        "sigma_bound": SIGMA_BOUND,
        "sensitivity": {n: prop11_sensitivity(n) for n in NS},
        "brute_force_checks": checks,
        "at_eta": table,
        "published_over_theorem_a_at_0.05": (IZZO_CONSTANT / 0.05) ** 2 / (1 / (2 * 0.05)),
        "files": ["fig1_mip_vs_dp.png", "fig1_mip_vs_dp.csv"],
    }
    (RESULTS / "fig1_mip_vs_dp.json").write_text(json.dumps(summary, indent=2))
    print(
        "| eta | DP Laplace Thm4 n=36 | DP Laplace Thm4 n=48 | MIP Cor.10 published | "
        "MIP Thm A Laplace | MIP Thm A Gaussian sigma |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for row in table:
        print(
            f"| {row['eta']} | {row['dp_laplace_thm4_n36']:.4g} | {row['dp_laplace_thm4_n48']:.4g} | "
            f"{row['mip_izzo2024_published']:.4g} | {row['mip_theorem_a_laplace']:.4g} | "
            f"{row['mip_theorem_a_gaussian_sigma']:.4g} |"
        )
    for c in checks:
        print(
            f"n={c['n']}: sensitivity brute force {c['sensitivity_brute_force']:.6g} = formula "
            f"{c['sensitivity_formula']:.6g}; std over halves {c['std_over_halves']:.4g} <= sqrt(5)"
        )
    return summary


if __name__ == "__main__":
    main()
