"""Attribute inference on null BankChurners releases: is the precision improvement centred on 0?

Null: each split draws two disjoint random halves of ``--n`` rows from BankChurners (``CLIENTNUM`` and the two
``Naive_Bayes_*`` columns dropped): the "original" and a "synthetic" table that is a fresh sample of the same
population, so the release reveals nothing about the original's records. Every numeric column is a secret in
turn (all other columns known), attacked with mipkit's defaults
(:func:`mipkit.attacks.inference.attribute_inference_guesses`: 500 targets, nearest neighbour and ridge model,
each against the same analysis on the original without the targets) and scored by
:func:`mipkit.metrics.inference.measure_inference` with its default rule (within 5% of the targets' range,
the most frequent value only when exact).

Reported per split: the like-for-like PI of each (secret, attack) pair and whether the ``inference_pi``
policy fires (some pair's interval at level ``1 - 0.05 / J``, J pairs, lies above 0). For contrast, the same
guesses scored with one tolerance from the original's range for every guess, and paired with the most frequent
value only (``--no-non-member-baseline``, anonymeter's amount of work), the mode scored exactly and within the
tolerance.

Power: ``--leak 0.3`` replaces 30% of the synthetic rows by verbatim rows of the original (a generator that
copies), and the policy should fire; results in ``benchmarks/results/inference_leak_bankchurners.json``.

Run: ``.venv/bin/python benchmarks/inference_null_bankchurners.py [--splits 50] [--n 3000] [--leak 0]``.
Results: ``benchmarks/results/inference_null_bankchurners.json``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"
CONFIDENCE = 0.95
N_REFITS = 20  # attribute_inference_guesses' default


def fired(results: list, confidence: float = CONFIDENCE) -> list[str]:
    """The (secret, attack) pairs for which the family policy "PI above 0" fires: the pair's interval at the
    Bonferroni level lies above 0 (the policy fires when the list is not empty)."""
    pairs = [(r, a) for r in results for a in r.attacks]
    level = 1.0 - (1.0 - confidence) / len(pairs)
    return [f"{r.secret}/{a}" for r, a in pairs if (r.pi_interval(a, level)[0] or -np.inf) > 0]


def main() -> None:
    from mipkit.attacks.inference import attribute_inference_guesses
    from mipkit.data.io import read_table
    from mipkit.data.tables import check_tables
    from mipkit.metrics.inference import measure_inference
    from mipkit.report.results import write_json_atomic
    from mipkit.stats import clopper_pearson

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=50)
    ap.add_argument("--n", type=int, default=3000, help="rows of the original and of the synthetic table")
    ap.add_argument(
        "--leak", type=float, default=0.0, help="share of synthetic rows copied from the original"
    )
    args = ap.parse_args()
    df = read_table(DATA / "bankchurners" / "BankChurners.csv")
    df = df.drop(columns=["CLIENTNUM", *[c for c in df.columns if c.startswith("Naive_Bayes")]])
    t0 = time.perf_counter()
    uptime0 = os.popen("uptime").read().strip()
    splits = []
    for split in range(args.splits):
        perm = np.random.default_rng(split).permutation(len(df))
        orig = df.iloc[np.sort(perm[: args.n])].reset_index(drop=True)
        syn = df.iloc[np.sort(perm[args.n : 2 * args.n])].reset_index(drop=True)
        if args.leak:
            rng = np.random.default_rng([split, 1])
            k = round(args.leak * args.n)
            syn.iloc[rng.choice(args.n, k, replace=False)] = orig.iloc[
                rng.choice(args.n, k, replace=False)
            ].values
        schema = check_tables(orig, {"synthetic": syn})
        like, like_orig, fallback = [], [], {"exact": [], "tolerance": []}
        for secret in schema.numeric:
            g = attribute_inference_guesses(
                orig, syn, secret=secret, schema=schema, random_state=split, n_refits=N_REFITS
            )
            like.append(measure_inference(g, random_state=split))
            tol = 0.05 * float(schema.num_range[schema.numeric.index(secret)])
            like_orig.append(
                measure_inference(replace(g, tolerance=tol), random_state=split, constant_guess="tolerance")
            )
            only_mode = replace(g, baselines={"most_frequent": g.baselines["most_frequent"]})
            for rule in fallback:
                fallback[rule].append(measure_inference(only_mode, random_state=split, constant_guess=rule))
        splits.append(
            {
                "split": split,
                "pi": {f"{r.secret}/{a}": r.pi_of(a) for r in like for a in r.attacks},
                "fired": fired(like),
                "original_range": {
                    "pi": {f"{r.secret}/{a}": r.pi_of(a) for r in like_orig for a in r.attacks},
                    "fired": fired(like_orig),
                },
                **{
                    f"fallback_{rule}": {
                        "pi": {f"{r.secret}/{a}": r.pi_of(a) for r in res for a in r.attacks},
                        "fired": fired(res),
                    }
                    for rule, res in fallback.items()
                },
            }
        )
        last = splits[-1]
        print(split, last["fired"], last["original_range"]["fired"], flush=True)
    elapsed = time.perf_counter() - t0

    def summary(get) -> dict:
        pis = {k: np.array([get(s)["pi"][k] for s in splits]) for k in get(splits[0])["pi"]}
        # pairs whose baseline is perfect in every split (an exact identity between columns) have no PI
        means = {k: float(np.mean(v[np.isfinite(v)])) for k, v in pis.items() if np.isfinite(v).any()}
        fired_pairs = [p for s in splits for p in get(s)["fired"]]
        n_fired = int(sum(bool(get(s)["fired"]) for s in splits))
        return {
            "false_alarms" if not args.leak else "fired": n_fired,
            "splits": len(splits),
            "fired_clopper_pearson_95": list(clopper_pearson(n_fired, len(splits))),
            "fired_per_pair": {p: fired_pairs.count(p) for p in sorted(set(fired_pairs))},
            "mean_pi_per_pair": means,
            "pairs_without_pi": sorted(set(pis) - set(means)),
            "mean_pi": float(np.mean(list(means.values()))),
            "mean_pi_lowest_highest_pair": [min(means.values()), max(means.values())],
            "pairs_mean_pi_above_0": int(sum(m > 0 for m in means.values())),
        }

    out = {
        "like_for_like": summary(lambda s: s),
        "like_for_like_original_range_mode_within_tolerance": summary(lambda s: s["original_range"]),
        **{f"fallback_mode_{r}": summary(lambda s, r=r: s[f"fallback_{r}"]) for r in ("exact", "tolerance")},
    }
    for k, v in out.items():
        print(
            f"{k}: fired {v.get('fired', v.get('false_alarms'))}/{v['splits']} "
            f"(95% CI {v['fired_clopper_pearson_95']}), mean PI over pairs {v['mean_pi']:+.3f}, "
            f"pairs with mean PI > 0: {v['pairs_mean_pi_above_0']}/{len(v['mean_pi_per_pair'])}"
        )
    print(f"{elapsed:.0f} s; {uptime0}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        RESULTS / f"inference_{'leak' if args.leak else 'null'}_bankchurners.json",
        {
            "n": args.n,
            "leak": args.leak,
            "n_refits": N_REFITS,
            "seconds": elapsed,
            "uptime_start": uptime0,
            **out,
            "pi_per_split": {k: [round(s["pi"][k], 4) for s in splits] for k in splits[0]["pi"]},
        },
    )


if __name__ == "__main__":
    main()
