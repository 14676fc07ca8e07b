"""The synthetic audit's exact neighbour searches on Ray (blocks of queries x references): results, cost.

Data: UCI Adult (``adult.data`` + ``adult.test``, 48,842 rows; ``../shared/data`` or ``$MIPKIT_SHARED_DATA``;
skipped with a message when absent), resampled with replacement up to the sizes asked (so larger tables
hold exact duplicates: ties), mixed distance on all 15 columns.

1. Equality: ``audit_synthetic`` with ``backend="local"`` and with ``backend="ray"`` (``--block-rows``, so
   many blocks) on training, holdout and synthetic tables of each of ``--equal-rows`` rows (caps off:
   ``--caps none``); the two ``results.json`` payloads are compared without ``backend`` and ``timings_s``.
2. Speed: one search of ``--search-rows`` training rows against as many synthetic rows (``k = 2``, what
   NNAA asks): the local backend (1 and 2 threads), Ray with 1 and 2 CPUs (``num_cpus``; the Ray start is
   not timed, the ``ray.put`` of the tables is), seconds and seconds per million pairs; and the peer
   scikit-learn ``NearestNeighbors(algorithm="brute", metric="manhattan", n_jobs=1/2)`` on the same rows
   encoded as floats (range-normalised numerics, one-hot categories at weight 1/2, missing as 0: the same
   distance without the missing-value rule and without our tie rule, a speed reference only), as the ratio
   peer time / mipkit time.
3. Memory: the peak bytes one block task allocates (``tracemalloc`` around one block of ``--block-rows`` x
   ``--block-rows``) beside the bound the results state (:func:`mipkit.data.neighbors.blocks.task_bytes`).
4. Projection to 1,000,000 x 1,000,000 rows on N = 1, 4, 16, 64 nodes of ``--cores-per-node`` cores, from
   the measured Ray cost per million pairs per CPU and per block task. Assumptions (stated in the JSON):
   the pairs' cost scales linearly with their number (the pruned search's share of kept pairs as on Adult),
   the blocks spread evenly over the cores, and each node receives both tables once (their bytes over a
   1 GB/s link, measured ``ray.put`` time locally).

Run: ``.venv/bin/python benchmarks/ray_synthetic_scaling.py`` (8,000 and 100,000 rows; an idle machine) or
``--quick`` (a small run: 1,500 rows, saved as ``ray_synthetic_scaling_small.json``); ``--tag T`` saves
``ray_synthetic_scaling_<tag>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
NODES = (1, 4, 16, 64)


def load_adult() -> pd.DataFrame | None:
    if not (DATA / "adult" / "adult.data").exists():
        return None
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthesizers_adult import load_adult as load

    a, b = load()
    return pd.concat([a, b], ignore_index=True)


def resample(adult: pd.DataFrame, n: int, rng: np.random.Generator) -> list[pd.DataFrame]:
    """Training, holdout and synthetic tables of ``n`` rows each, drawn from Adult with replacement."""
    return [adult.iloc[rng.integers(0, len(adult), n)].reset_index(drop=True) for _ in range(3)]


def equality(adult: pd.DataFrame, n: int, args, rng: np.random.Generator) -> dict:
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
    from mipkit.workflows.audit_synthetic.scale import NOT_COMPARED

    train, holdout, syn = resample(adult, n, rng)
    data = SyntheticRelease(train, syn, holdout=holdout)
    caps = {"max_nnaa_rows": None, "max_dcr_rows": None, "max_protection_rows": None}
    common = {"secrets": ["income"], "n_attacks": 500, "random_state": 0, "n_jobs": 2,
              **(caps if args.caps == "none" else {})}  # fmt: skip
    t = time.perf_counter()
    local = audit_synthetic(data, AuditSyntheticConfig(**common)).to_dict()
    t_local = time.perf_counter() - t
    t = time.perf_counter()
    remote = audit_synthetic(
        data, AuditSyntheticConfig(**common, backend="ray", block_rows=args.block_rows)
    ).to_dict()
    t_ray = time.perf_counter() - t

    def compared(d: dict) -> str:
        return json.dumps({k: v for k, v in d.items() if k not in NOT_COMPARED}, sort_keys=True)

    same = compared(local) == compared(remote)
    print(
        f"audit on {n:,} rows: local {t_local:.1f} s, ray {t_ray:.1f} s (Ray start included), equal: {same}"
    )
    return {
        "rows": n,
        "equal_except": list(NOT_COMPARED),
        "equal": same,
        "local_s": t_local,
        "ray_s_with_start": t_ray,
        "backend": remote["backend"],
        "samples": remote["samples"],
        "privacy_loss": local["nnaa"].get("privacy_loss"),
    }


def encoded(adult: pd.DataFrame, n: int, rng: np.random.Generator):
    from mipkit.data.tables import check_tables, encode_mixed, one_hot

    train, _, syn = resample(adult, n, rng)
    schema = check_tables(train, {"synthetic": syn})
    a, b = encode_mixed(train, schema), encode_mixed(syn, schema)

    def floats(x):
        return np.hstack([np.nan_to_num(x.numeric), 0.5 * one_hot(x.codes, x.n_levels)])

    return a, b, floats(a), floats(b)


def timed(run) -> tuple[float, object]:
    t = time.perf_counter()
    out = run()
    return time.perf_counter() - t, out


def _warm_up(plan, table) -> None:
    """Start the Ray workers (their processes and imports are not the search's cost): a few tiny blocks."""
    from mipkit.data.neighbors import kneighbors

    rows, plan.block_rows = plan.block_rows, 50
    kneighbors(table, table, k=2)
    plan.block_rows = rows
    plan.searches.clear()


def speed(adult: pd.DataFrame, args, rng: np.random.Generator) -> dict:
    from sklearn.neighbors import NearestNeighbors

    from mipkit.data.neighbors import kneighbors
    from mipkit.data.neighbors.blocks import in_blocks
    from mipkit.engine.ray_blocks import ray_blocks

    n = args.search_rows
    a, b, fa, fb = encoded(adult, n, rng)
    mpairs = n * n / 1e6
    rows: dict = {}
    want = None
    for threads in (1, 2):
        t, want = timed(lambda threads=threads: kneighbors(a, b, k=2, n_jobs=threads))
        rows[f"local_{threads}_threads"] = {"s": t, "s_per_mpairs": t / mpairs}
    for cpus in (1, 2):
        with ray_blocks(n_cpus=cpus, address=None, block_rows=args.block_rows) as plan, in_blocks(plan):
            warm = a.take(np.arange(min(n, 2 * cpus * 50)))  # the workers start and import mipkit
            _warm_up(plan, warm)
            t_put, _ = timed(lambda plan=plan: [plan.mapper.put(x) for x in (a, b)])
            t, got = timed(lambda: kneighbors(a, b, k=2))
            totals = plan.totals()
        same = bool(np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]))
        rows[f"ray_{cpus}_cpus"] = {"s": t, "s_per_mpairs": t / mpairs, "put_s": t_put,
                                    "blocks": totals["blocks"], "same_as_local": same}  # fmt: skip
    for jobs in (1, 2):
        nn = NearestNeighbors(n_neighbors=2, algorithm="brute", metric="manhattan", n_jobs=jobs).fit(fb)
        t, _ = timed(lambda nn=nn: nn.kneighbors(fa))
        rows[f"sklearn_brute_{jobs}_jobs"] = {"s": t, "s_per_mpairs": t / mpairs}
    for jobs, ours in ((1, "ray_1_cpus"), (2, "ray_2_cpus")):
        rows[f"sklearn_brute_{jobs}_jobs"]["peer_over_mipkit_ray"] = (
            rows[f"sklearn_brute_{jobs}_jobs"]["s"] / rows[ours]["s"]
        )
        rows[f"sklearn_brute_{jobs}_jobs"]["peer_over_mipkit_local"] = (
            rows[f"sklearn_brute_{jobs}_jobs"]["s"] / rows[f"local_{jobs}_threads"]["s"]
        )
    for name, r in rows.items():
        print(f"{name}: {r['s']:.2f} s, {r['s_per_mpairs']:.4f} s per million pairs")
    table_bytes = sum(x.numeric.nbytes + x.codes.nbytes for x in (a, b))
    return {"rows": n, "k": 2, "million_pairs": mpairs, "table_bytes": table_bytes, "runs": rows}


def task_memory(adult: pd.DataFrame, args, rng: np.random.Generator) -> dict:
    from mipkit.data.neighbors.blocks import task_bytes
    from mipkit.data.neighbors.kernels import exact_lattice
    from mipkit.data.neighbors.search import search_block

    m = args.block_rows
    a, b, _, _ = encoded(adult, m, rng)
    tracemalloc.start()
    search_block(a, b, 0, m, 0, m, 2, False, "mixed", "pruned", exact_lattice(a, b))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    bound = task_bytes(a, b, m, m, 2)
    mb = 2**20
    print(f"one block of {m:,} x {m:,}: peak {peak / mb:.1f} MB allocated, stated bound {bound / mb:.1f} MB")
    return {"block_rows": m, "measured_peak_bytes": peak, "stated_bytes": bound, "within": peak <= bound}


def projection(sp: dict, args) -> dict:
    """1,000,000 x 1,000,000 rows on N nodes from the measured Ray cost (2 CPUs: cost per CPU)."""
    r2 = sp["runs"]["ray_2_cpus"]
    cpu_s_per_mpairs = r2["s_per_mpairs"] * 2
    n = 1_000_000
    mpairs = n * n / 1e6
    table_bytes = sp["table_bytes"] / (2 * sp["rows"]) * 2 * n
    transfer_s = table_bytes / 1e9
    out = {}
    for nodes in NODES:
        cores = nodes * args.cores_per_node
        out[str(nodes)] = {"cores": cores, "hours": (mpairs * cpu_s_per_mpairs / cores + transfer_s) / 3600}
    print("projection, 1e6 x 1e6 rows:", {k: f"{v['hours']:.2f} h" for k, v in out.items()})
    return {
        "rows": n,
        "cpu_s_per_mpairs": cpu_s_per_mpairs,
        "cores_per_node": args.cores_per_node,
        "transfer_s_per_node": transfer_s,
        "assumptions": "pairs' cost linear in their number (Adult's pruning share); blocks spread evenly "
        "over all cores; each node receives both tables once over 1 GB/s; measured on this machine's cores",
        "nodes": out,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small run (1,500 rows)")
    ap.add_argument("--equal-rows", default="8000,100000")
    ap.add_argument("--search-rows", type=int, default=20_000)
    ap.add_argument("--block-rows", type=int, default=5_000)
    ap.add_argument("--caps", choices=("none", "default"), default="none")
    ap.add_argument("--cores-per-node", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default=None, help="save as ray_synthetic_scaling_<tag>.json")
    args = ap.parse_args()
    if args.quick:
        args.equal_rows, args.search_rows, args.block_rows = "1500", 4000, 1000
    adult = load_adult()
    if adult is None:
        print(f"Adult not found under {DATA} (set MIPKIT_SHARED_DATA): nothing run.")
        return
    rng = np.random.default_rng(args.seed)
    out: dict = {"load_start": os.getloadavg()[0], "cpus": os.cpu_count(), "args": vars(args)}
    out["equality"] = [equality(adult, int(n), args, rng) for n in args.equal_rows.split(",")]
    out["speed"] = speed(adult, args, rng)
    out["task_memory"] = task_memory(adult, args, rng)
    out["projection"] = projection(out["speed"], args)
    out["load_end"] = os.getloadavg()[0]
    name = "ray_synthetic_scaling" + (f"_{args.tag}" if args.tag else "_small" if args.quick else "")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"saved benchmarks/results/{name}.json")


if __name__ == "__main__":
    main()
