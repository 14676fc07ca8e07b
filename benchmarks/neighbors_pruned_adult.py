"""The neighbour search pruned by category mismatches against the screened search, on the real Adult trio.

Data: anonymeter's Adult trio (``synthetic_adult_vs_anonymeter.load_adult_trio``; original 39,084, CTGAN
synthetic 39,040, control 9,758 rows), mixed distance.

1. one-way (attribute inference): the first 1,000 original rows against the synthetic table, the secret
   ``income`` left out of the columns, k = 1 and 3: ``algorithm="auto"`` (pruned) against ``"screened"``;
2. the share of pairs the bound keeps (256 query rows, k = 1);
3. two-way (NNAA): 20,000 original against 20,000 synthetic rows (seeded samples), k = 1:
   ``kneighbors_both_ways`` with ``"auto"`` (two pruned searches) against ``"screened"`` (the shared pass).
Each timing is the best of ``--repeats``; every pair of searches must return the same distances and rows.

Run: ``.venv/bin/python benchmarks/neighbors_pruned_adult.py [--repeats 3]``; results in
``benchmarks/results/neighbors_pruned_adult.json``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from mipkit.data.neighbors import kneighbors, kneighbors_both_ways
from mipkit.data.neighbors.categorical_bound import CategoricalBound
from mipkit.data.tables import check_tables, encode_mixed
from mipkit.report.results import write_json_atomic
from synthetic_adult_vs_anonymeter import RESULTS, load_adult_trio


def best_of(repeats: int, run):
    """(smallest wall time, last result) of ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    original, synthetic, control = load_adult_trio()
    schema = check_tables(original, {"synthetic": synthetic, "control": control})
    out: dict = {"load_start": os.getloadavg()[0], "repeats": args.repeats, "one_way": {}}

    known = schema.subset([c for c in original.columns if c != "income"])
    q = encode_mixed(original.iloc[:1000], known)
    r = encode_mixed(synthetic, known)
    for k in (1, 3):
        t_auto, (d1, i1) = best_of(args.repeats, lambda k=k: kneighbors(q, r, k=k))
        t_scr, (d2, i2) = best_of(args.repeats, lambda k=k: kneighbors(q, r, k=k, algorithm="screened"))
        same = bool(np.array_equal(d1, d2) and np.array_equal(i1, i2))
        out["one_way"][f"k={k}"] = {"pruned_s": t_auto, "screened_s": t_scr, "same": same}
        print(f"one-way, 1,000 x 39,040, k={k}: pruned {t_auto:.2f} s, screened {t_scr:.2f} s, same: {same}")

    qs = q.take(np.arange(256))
    mism = CategoricalBound(r).mismatches(qs)  # (reference rows, query rows)
    fewest = mism.min(axis=0)
    out["share_at_fewest"] = float(np.mean(mism <= fewest[None, :]))
    print(f"share of pairs with the fewest mismatches (256 queries): {out['share_at_fewest']:.4f}")

    rng = np.random.default_rng(args.seed)
    a = encode_mixed(original.iloc[np.sort(rng.choice(len(original), 20000, replace=False))], schema)
    b = encode_mixed(synthetic.iloc[np.sort(rng.choice(len(synthetic), 20000, replace=False))], schema)
    t_auto, ((d1, i1), (e1, j1)) = best_of(args.repeats, lambda: kneighbors_both_ways(a, b, k=1))
    t_scr, ((d2, i2), (e2, j2)) = best_of(
        args.repeats, lambda: kneighbors_both_ways(a, b, k=1, algorithm="screened")
    )
    same = bool(all(np.array_equal(x, y) for x, y in ((d1, d2), (i1, i2), (e1, e2), (j1, j2))))
    out["two_way"] = {"pruned_s": t_auto, "screened_s": t_scr, "same": same}
    print(f"two-way, 20,000 x 20,000: pruned {t_auto:.2f} s, screened {t_scr:.2f} s, same: {same}")
    out["load_end"] = os.getloadavg()[0]
    write_json_atomic(RESULTS / "neighbors_pruned_adult.json", out)


if __name__ == "__main__":
    main()
