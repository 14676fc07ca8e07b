"""Memory and time of RMIA on 50,000 targets x 50,000 population records (K = 8 reference models).

mipkit scores every target by a binary search in the sorted population ratios (O(N + M) memory); the
pairwise formulation that ML Privacy Meter implements forms the N x M matrix of likelihood ratios
``(p(x|theta)/p(x)) / (p(z|theta)/p(z))`` and compares it with gamma. Each configuration runs in a fresh
subprocess and reports

- ``tracemalloc`` peak: NumPy / Python allocations made *during* the scoring call (beyond the inputs);
- ``ru_maxrss``: the process's peak resident memory (interpreter + NumPy + inputs + scoring), and its
  increase over the value just before scoring;
- wall time of the scoring call.

The naive matrix approach is run only at 5,000 x 5,000 (where it needs ~200 MB for the float matrix plus
25 MB for the boolean comparison) and checked to give bit-identical scores; its memory at 50,000 x 50,000 is
computed: ``N M 8`` bytes for the float64 ratio matrix (20 GB) plus ``N M`` bytes for the comparison.

Run::

    .venv/bin/python benchmarks/rmia_memory.py      # -> benchmarks/results/rmia_memory.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
MB = 1024**2


def _inputs(n: int, m: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    ref_in = rng.random((k, n)) < 0.5
    ref_p = rng.beta(2, 2, size=(k, n))
    target_p = np.clip(rng.beta(2, 2, size=n) + 0.1 * (rng.random(n) < 0.5), 0, 1)
    pop_ref_p = rng.beta(2, 2, size=(k, m))
    pop_target_p = rng.beta(2, 2, size=m)
    return target_p, ref_p, ref_in, pop_target_p, pop_ref_p


def _naive_scores(target_p, ref_p, ref_in, pop_target_p, pop_ref_p, a=0.3, gamma=1.0):
    """The N x M formulation (what a matrix implementation does), same p(x) / p(z) as mipkit."""
    from mipkit.attacks import rmia_reference_probability

    p_x = rmia_reference_probability(ref_p, ref_in, a=a)
    p_z = rmia_reference_probability(pop_ref_p, None, a=a)
    ratio_x = target_p / p_x
    ratio_z = pop_target_p / p_z
    matrix = ratio_x[:, None] / ratio_z[None, :]  # N x M float64
    return np.mean(matrix > gamma, axis=1)


def worker(mode: str, n: int, m: int, k: int) -> dict:
    from mipkit.attacks import rmia_scores

    data = _inputs(n, m, k)
    input_bytes = sum(x.nbytes for x in data)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    start = time.perf_counter()
    if mode == "mipkit":
        scores = rmia_scores(*data, a=0.3, gamma=1.0)
    else:
        scores = _naive_scores(*data)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "mode": mode,
        "n_targets": n,
        "n_population": m,
        "n_reference_models": k,
        "input_mb": input_bytes / MB,
        "tracemalloc_peak_mb": peak / MB,
        "maxrss_mb": rss_after / MB,
        "maxrss_increase_mb": (rss_after - rss_before) / MB,
        "seconds": seconds,
        "score_checksum": float(np.sum(scores)),
        "scores_head": scores[:5].tolist(),
    }


def _run_subprocess(mode: str, n: int, m: int, k: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", mode, str(n), str(m), str(k)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=4, metavar=("MODE", "N", "M", "K"))
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--out", type=Path, default=RESULTS / "rmia_memory.json")
    args = parser.parse_args(argv)
    if args.worker:
        mode, n, m, k = args.worker
        print(json.dumps(worker(mode, int(n), int(m), int(k))))
        return 0

    small = 5_000
    rows = [
        _run_subprocess("mipkit", args.n, args.n, args.k),
        _run_subprocess("mipkit", small, small, args.k),
        _run_subprocess("naive", small, small, args.k),
    ]
    # exactness at the size where the matrix fits: the two scorings must agree bit for bit
    from mipkit.attacks import rmia_scores

    data = _inputs(small, small, args.k)
    identical = bool(np.array_equal(rmia_scores(*data, a=0.3), _naive_scores(*data)))
    naive_full_mb = (args.n * args.n * 8 + args.n * args.n) / MB
    lines = [
        "| method | N x M | tracemalloc peak (MiB) | peak RSS (MiB) | RSS increase (MiB) | time (s) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r['n_targets']:,} x {r['n_population']:,} | {r['tracemalloc_peak_mb']:.1f} | "
            f"{r['maxrss_mb']:.0f} | {r['maxrss_increase_mb']:.1f} | {r['seconds']:.2f} |"
        )
    lines.append(f"| naive (computed) | {args.n:,} x {args.n:,} | {naive_full_mb:,.0f} | | | not run |")
    table = "\n".join(lines)
    print(table)
    print(f"\nmipkit == naive, bit for bit, at {small:,} x {small:,}: {identical}")
    payload = {
        "benchmark": "rmia_memory",
        "rows": rows,
        "naive_full_size_mb_computed": naive_full_mb,
        "identical_at_small_size": identical,
        "within_2gb": rows[0]["maxrss_mb"] < 2048,
        "markdown": table,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
