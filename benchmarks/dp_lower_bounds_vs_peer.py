"""mipkit's measured privacy lower bounds against DeepMind's jax_privacy auditing and exact enumeration.

Three independent checks of :mod:`mipkit.metrics.dp_lower_bounds`:

1. **Peer, same scores.** ``jax_privacy.auditing.CanaryScoreAuditor`` (pip ``jax-privacy``, installed in its
   own environment ``benchmarks/envs/jaxpriv``; created on first run with ``python -m venv`` and
   ``pip install jax-privacy``) is run in a subprocess on the very scores mipkit sees: Gaussian scores at
   three separations, randomized-response outputs, and, when ``benchmarks/dpsgd_adult.py`` has run, the
   strongest attack's scores of its DP-SGD (target 0.05) and non-private audits. Compared: the
   Clopper-Pearson epsilon lower bound (Jagielski et al. 2020; Nasr et al. 2021) at a fixed threshold
   (one- and two-sided) and with jax_privacy's Bonferroni correction over its own candidate thresholds
   (mipkit's formula evaluated at those thresholds), the GDP-based epsilon estimate (jax_privacy's
   ``epsilon_from_gdp``), and the one-run bound of Steinke, Nasr & Jagielski (2023) at a fixed threshold and
   with Bonferroni.
2. **Exact enumeration, small m.** Canaries revealed through eps-randomized response: the law of the number
   of correct guesses enumerated over all ``4^m`` outcomes with exact fractions, against the one-run
   theorem's bound; Clopper-Pearson upper bounds against exact binomial sums.
3. **Validity.** The bounds on randomized response with known epsilon exceed it at most at the stated rate.

Run (about 2 minutes plus, the first time, the peer's installation)::

    .venv/bin/python benchmarks/dp_lower_bounds_vs_peer.py [--quick]

Writes ``benchmarks/results/dp_lower_bounds_vs_peer[_small].json`` (``--quick``: ``_small``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mipkit.metrics.dp_lower_bounds import (  # noqa: E402
    clopper_pearson_upper,
    epsilon_from_rates,
    epsilon_lower_bound,
    mu_from_rates,
    one_run_epsilon,
    one_run_lower_bound,
    one_run_p_value,
    threshold_counts,
)

ENV = ROOT / "benchmarks" / "envs" / "jaxpriv"
SIGNIFICANCE, DELTA = 0.05, 1e-5

PEER = r"""
import json, sys
import numpy as np
from jax_privacy import auditing as A
import importlib.metadata as md
data = np.load(sys.argv[1])
sig, delta = float(sys.argv[2]), float(sys.argv[3])
out = {"version": md.version("jax-privacy")}
for key in sorted({k.rsplit("__", 1)[0] for k in data.files}):
    s_in, s_out, t = data[key + "__in"], data[key + "__out"], float(data[key + "__t"])
    a = A.CanaryScoreAuditor(s_in, s_out)
    ex = A.Explicit(t)
    out[key] = {
        "cp_fixed_one": float(a.epsilon_clopper_pearson(sig, delta, True, threshold_strategy=ex)),
        "cp_fixed_two": float(a.epsilon_clopper_pearson(sig, delta, False, threshold_strategy=ex)),
        "cp_bonferroni": float(a.epsilon_clopper_pearson(sig, delta, True)),
        "gdp_epsilon": float(a.epsilon_from_gdp(sig, delta)),
        "one_run_fixed": float(a.epsilon_one_run(sig, delta, threshold_strategy=ex)),
        "one_run_bonferroni": float(a.epsilon_one_run(sig, delta)),
        "thresholds": [float(x) for x in a._thresholds],
    }
print(json.dumps(out))
"""


def ensure_peer() -> tuple[Path | None, str]:
    """The peer's interpreter, installing jax-privacy into its own venv when missing; or (None, why)."""
    py = ENV / "bin" / "python"
    probe = [str(py), "-c", "import jax_privacy.auditing"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return py, ""
    try:
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True, capture_output=True)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "jax-privacy"],
            check=True,
            capture_output=True,
            timeout=1800,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
        return None, f"could not install jax-privacy: {err}"
    ok = subprocess.run(probe, capture_output=True, text=True)
    return (
        (py, "") if ok.returncode == 0 else (None, f"jax_privacy does not import: {ok.stderr.strip()[-300:]}")
    )


def score_sets(quick: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (scores, labels): synthetic sets, plus the Adult audits' scores when saved."""
    rng = np.random.default_rng(0)
    n = 2000 if quick else 20000
    out = {}
    for mu in (0.5, 1.0, 2.0):
        y = rng.random(n) < 0.5
        out[f"gaussian_mu{mu:g}"] = (rng.normal(size=n) + mu * y, y)
    y = rng.random(n) < 0.5
    keep = math.exp(1.0) / (1 + math.exp(1.0))
    out["randomized_response_eps1"] = (np.where(rng.random(n) < keep, y, ~y) + 0.001 * rng.random(n), y)
    for suffix in ("", "_small"):
        saved = ROOT / "runs" / f"dpsgd_adult{suffix}_work" / "strongest_scores.npz"
        if saved.is_file():
            d = np.load(saved)
            for key in ("0.05", "non-private"):
                if f"{key}__scores" in d.files:
                    s, lab = d[f"{key}__scores"], d[f"{key}__labels"].astype(bool)
                    cap = 40000 if quick else 100000  # a seeded subsample keeps the peer's loops short
                    if s.size > cap:
                        pick = np.random.default_rng(1).choice(s.size, size=cap, replace=False)
                        s, lab = s[pick], lab[pick]
                    out[f"adult{suffix}_{key.replace('-', '_')}"] = (s, lab)
            break
    return out


def mipkit_side(s: np.ndarray, y: np.ndarray, t: float, peer_thresholds: list[float] | None) -> dict:
    conf = 1 - SIGNIFICANCE
    out = {
        "cp_fixed_one": epsilon_lower_bound(
            s, y, delta=DELTA, confidence=conf, threshold=t, one_sided=True
        ).epsilon,
        "cp_fixed_two": epsilon_lower_bound(s, y, delta=DELTA, confidence=conf, threshold=t).epsilon,
        "cp_bonferroni_own": epsilon_lower_bound(
            s, y, delta=DELTA, confidence=conf, threshold="bonferroni", one_sided=True
        ).epsilon,
    }
    m = s.size
    guess = s >= t
    out["one_run_fixed"] = one_run_epsilon(
        m, int(guess.sum()), int((guess & y).sum()), delta=DELTA, confidence=conf
    )
    if peer_thresholds is not None:  # mipkit's formulas at the peer's candidate thresholds and correction
        thr, fp, fn, n_neg, n_pos = threshold_counts(s, y, peer_thresholds)
        k = len(peer_thresholds)
        a = SIGNIFICANCE / k
        fu, nu = clopper_pearson_upper(fp, n_neg, a / 2), clopper_pearson_upper(fn, n_pos, a / 2)
        out["cp_bonferroni"] = float(np.max(epsilon_from_rates(fu, nu, DELTA, one_sided=True)))
        fu2, nu2 = (
            clopper_pearson_upper(fp, n_neg, SIGNIFICANCE / (2 * k)),
            clopper_pearson_upper(fn, n_pos, SIGNIFICANCE / (2 * k)),
        )
        keep = np.maximum(fu2, nu2) < 1 - DELTA
        mu = float(np.max(mu_from_rates(fu2[keep], nu2[keep]))) if keep.any() else 0.0
        # jax_privacy takes |Phi^-1(1 - FPR+) - Phi^-1(FNR+)|: a negative value is read as the reversed test,
        # but the reversed test's rates are 1 - FPR and 1 - FNR, which upper bounds on FPR and FNR do not
        # bound from above; so that branch can overstate mu (mipkit keeps the valid direction only)
        raw = stats.norm.isf(fu2[keep]) - stats.norm.ppf(nu2[keep]) if keep.any() else np.zeros(1)
        mu_abs = float(np.max(np.abs(raw)))
        from mipkit.accounting import GDP, tradeoff_curve

        def eps_of(m: float) -> float:
            return 0.0 if m == 0 else float(tradeoff_curve(GDP(m)).epsilon_for_delta(DELTA))

        out["gdp_mu"], out["gdp_epsilon"] = mu, eps_of(mu)
        out["gdp_mu_abs"], out["gdp_epsilon_as_peer"] = mu_abs, eps_of(mu_abs)
        best = 0.0
        guesses, correct = fp + (n_pos - fn), n_pos - fn
        precision = np.where(guesses > 0, correct / np.maximum(guesses, 1), 0.0)
        for i in np.argsort(-precision, kind="stable"):  # a rule whose raw precision is at most
            if precision[i] <= 1 / (1 + math.exp(-best)):  # e^eps / (1 + e^eps) rejects no larger eps
                continue
            best = max(
                best, one_run_epsilon(m, int(guesses[i]), int(correct[i]), delta=DELTA, confidence=1 - a)
            )
        out["one_run_bonferroni"] = best
    return out


def exact_checks() -> dict:
    """Small-m enumeration of the one-run game and exact Clopper-Pearson sums."""
    m, r = 6, 4
    eps = 1.0
    keep = Fraction(math.exp(eps)) / (1 + Fraction(math.exp(eps)))
    law = [Fraction(0)] * (r + 1)
    for s_bits in range(2**m):
        for flips in range(2**m):
            p, correct = Fraction(1, 2**m), 0
            for i in range(m):
                member, flipped = (s_bits >> i) & 1, (flips >> i) & 1
                p *= (1 - keep) if flipped else keep
                correct += int(i < r and (member ^ flipped) == member)
            law[correct] += p
    rows = []
    for v in range(r + 1):
        tail = float(sum(law[v:]))
        rows.append(
            {
                "v": v,
                "exact_tail": tail,
                "bound_delta0": one_run_p_value(m, r, v, eps, 0.0),
                "bound_delta1e-3": one_run_p_value(m, r, v, eps, 1e-3),
            }
        )
    cp = []
    for k, n in [(0, 10), (3, 10), (17, 60), (120, 1000)]:
        p = float(clopper_pearson_upper(k, n, 0.025))
        tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1))
        cp.append({"k": k, "n": n, "upper": p, "P[Bin(n, upper) <= k]": tail, "alpha": 0.025})
    return {
        "one_run_enumeration": {
            "m": m,
            "r": r,
            "epsilon": eps,
            "rows": rows,
            "max_abs_error_delta0": max(abs(x["exact_tail"] - x["bound_delta0"]) for x in rows),
        },
        "clopper_pearson": cp,
    }


def validity(quick: bool) -> dict:
    rng = np.random.default_rng(3)
    runs = 100 if quick else 500
    keep = math.exp(1.0) / (1 + math.exp(1.0))
    over_cp = over_one = 0
    for _ in range(runs):
        y = rng.random(400) < 0.5
        out = np.where(rng.random(400) < keep, y, ~y) + 0.001 * rng.random(400)
        over_cp += epsilon_lower_bound(out, y, delta=0.0, threshold="split", random_state=rng).epsilon > 1.0
        over_one += one_run_lower_bound(out, y, delta=0.0, k_plus=(0.25,), k_minus=(0.25,)).epsilon > 1.0
    return {
        "mechanism": "randomized response, eps = 1",
        "runs": runs,
        "cp_bound_above_eps": int(over_cp),
        "one_run_bound_above_eps": int(over_one),
        "allowed_rate": SIGNIFICANCE,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    clock = time.perf_counter()
    sets = score_sets(args.quick)
    work = ROOT / "runs" / "dp_lower_bounds_vs_peer"
    work.mkdir(parents=True, exist_ok=True)
    arrays, thresholds = {}, {}
    for key, (s, y) in sets.items():
        t = float(np.quantile(s[~y], 0.99))  # a threshold fixed in advance: the non-members' 99th percentile
        thresholds[key] = t
        arrays[f"{key}__in"], arrays[f"{key}__out"], arrays[f"{key}__t"] = s[y], s[~y], np.array(t)
    np.savez(work / "scores.npz", **arrays)
    py, why = ensure_peer()
    peer: dict = {}
    if py is not None:
        proc = subprocess.run(
            [str(py), "-c", PEER, str(work / "scores.npz"), str(SIGNIFICANCE), str(DELTA)],
            capture_output=True,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
        )
        if proc.returncode == 0:
            peer = json.loads(proc.stdout.strip().splitlines()[-1])
        else:
            why = f"jax_privacy failed: {proc.stderr.strip()[-300:]}"
    rows = []
    for key, (s, y) in sets.items():
        p = peer.get(key)
        ours = mipkit_side(s, y, thresholds[key], None if p is None else p["thresholds"])
        row = {"scores": key, "n": int(s.size), "threshold": thresholds[key], "mipkit": ours}
        if p is not None:
            row["peer"] = {k: v for k, v in p.items() if k != "thresholds"}
            row["peer_candidate_thresholds"] = len(p["thresholds"])
            pairs = {k: k for k in p if k in ours and k not in ("thresholds", "gdp_epsilon")}
            pairs["gdp_epsilon_as_peer"] = "gdp_epsilon"  # the peer's |mu| rule, reproduced
            row["abs_diff"] = {k: abs(ours[k] - p[v]) for k, v in pairs.items()}
            row["gdp_peer_overstates"] = bool(p["gdp_epsilon"] > ours["gdp_epsilon"] * (1 + 1e-9))
        rows.append(row)
    diffs = [v for r in rows for k, v in r.get("abs_diff", {}).items()]
    summary = {
        "benchmark": "dp_lower_bounds_vs_peer",
        "command": ".venv/bin/python benchmarks/dp_lower_bounds_vs_peer.py"
        + (" --quick" if args.quick else ""),
        "significance": SIGNIFICANCE,
        "delta": DELTA,
        "peer": {
            "name": "jax-privacy (DeepMind), jax_privacy.auditing.CanaryScoreAuditor",
            "version": peer.get("version"),
            "environment": str(ENV.relative_to(ROOT)),
            "unavailable_because": why or None,
        },
        "rows": rows,
        "max_abs_diff": max(diffs) if diffs else None,
        "exact": exact_checks(),
        "validity": validity(args.quick),
        "seconds": time.perf_counter() - clock,
    }
    out = ROOT / "benchmarks" / "results" / f"dp_lower_bounds_vs_peer{'_small' if args.quick else ''}.json"
    out.write_text(json.dumps(summary, indent=2, default=float) + "\n")
    print(f"peer: {summary['peer']['name']} {summary['peer']['version'] or '(unavailable: ' + why + ')'}")
    keys = [
        "cp_fixed_one",
        "cp_fixed_two",
        "cp_bonferroni",
        "gdp_epsilon",
        "one_run_fixed",
        "one_run_bonferroni",
    ]
    for r in rows:
        print(f"\n{r['scores']} (n={r['n']}, threshold {r['threshold']:.3f})")
        for k in keys:
            if k in r["mipkit"]:
                pv = r.get("peer", {}).get(k)
                print(f"  {k:<20} mipkit {r['mipkit'][k]:.6f}" + ("" if pv is None else f"   peer {pv:.6f}"))
        print(
            f"  cp_bonferroni_own    mipkit {r['mipkit']['cp_bonferroni_own']:.6f} (all distinct thresholds)"
        )
        if "gdp_epsilon_as_peer" in r["mipkit"]:
            print(f"  gdp_epsilon (|mu|)   mipkit {r['mipkit']['gdp_epsilon_as_peer']:.6f} (the peer's rule)")
    print(f"\nmax |mipkit - peer| = {summary['max_abs_diff']}")
    e = summary["exact"]["one_run_enumeration"]
    print(
        f"one-run bound vs exact enumeration (m={e['m']}, r={e['r']}):"
        f" max error {e['max_abs_error_delta0']:.2e}"
    )
    v = summary["validity"]
    print(
        f"validity over {v['runs']} runs: CP above eps {v['cp_bound_above_eps']},"
        f" one-run {v['one_run_bound_above_eps']}"
    )
    print(f"total {summary['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
