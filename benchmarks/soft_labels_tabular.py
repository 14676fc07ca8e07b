"""Optimally soft labels (Pedersen ch. 5) on a tabular set (UCI Adult), with and without label noise.

The digits experiment (``soft_labels_digits.py``) on real tabular records: UCI Adult from
``../shared/data/adult/adult.data`` (override the folder with ``MIPKIT_SHARED_DATA``; the script exits with a
clear message when it is absent). ``fnlwgt`` and ``education`` (a copy of ``education-num``) are dropped,
rows with missing values dropped, categoricals one-hot encoded. The pool is class-balanced (income > 50K
is 24% of Adult; with a balanced pool the pair flips change 20% of each class): 400 defender + 400 reserve
records, each half positive; 2,000 further balanced records with clean labels measure utility, and the
features are standardised with their mean and SD. Two conditions: no label noise, and 20% of the labels of
each set flipped in pairs. Same DP-SGD MLP, settings and attacker as the digits benchmark.

Run::

    .venv/bin/python benchmarks/soft_labels_tabular.py            # full size (see docs/defences.md)
    .venv/bin/python benchmarks/soft_labels_tabular.py --quick    # reduced size, a few minutes

Writes ``benchmarks/results/soft_labels_tabular_{clean,noisy}{_small}.json``, ``.csv``, ``.png`` and
``_p_in_histograms.png`` (and the fitted models' outputs to ``..._fits.npz``, not committed, from which a
stopped run resumes).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _soft_labels import LOGISTIC, RESULTS, Config, flip_in_pairs, print_table, run, save, target_agreement

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


def load_adult(seed: int, n: int = 400, n_test: int = 2000, flip: float = 0.0) -> dict | None:
    from mipkit.data.io import features_target

    folder = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
    path = folder / "adult" / "adult.data"
    if not path.is_file():
        return None
    df = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True, na_values=["?"])
    df = df.drop(columns=["fnlwgt", "education"]).dropna().reset_index(drop=True)
    ds = features_target(df, "income", encode="onehot")
    rng = np.random.default_rng(seed)
    pos, neg = rng.permutation(np.flatnonzero(ds.y == 1)), rng.permutation(np.flatnonzero(ds.y == 0))
    half = n // 2
    defender = rng.permutation(np.concatenate([pos[:half], neg[:half]]))
    reserve = rng.permutation(np.concatenate([pos[half : 2 * half], neg[half : 2 * half]]))
    test = np.concatenate([pos[2 * half : 2 * half + n_test // 2], neg[2 * half : 2 * half + n_test // 2]])
    pool = np.concatenate([defender, reserve])
    mean, sd = ds.X[test].mean(axis=0), ds.X[test].std(axis=0)
    X = (ds.X - mean) / np.where(sd > 0, sd, 1.0)
    y_pool = ds.y[pool]
    noisy = flip_in_pairs(y_pool, np.arange(n), flip, rng)
    noisy = flip_in_pairs(noisy, np.arange(n, 2 * n), flip, rng)
    return {
        "X": X[pool],
        "y": noisy,
        "y_clean": y_pool,
        "n_defender": n,
        "X_test": X[test],
        "y_test": ds.y[test],
        "n_test": int(test.size),
        "flipped": int(np.sum(noisy != y_pool)),
        "description": f"UCI Adult (one-hot, {X.shape[1]} features): class-balanced {n} defender + {n} "
        "reserve, "
        f"{flip:.0%} of labels flipped in pairs; {test.size} balanced held-out records with clean labels",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 defender + 8 shadow models, 4 splits")
    parser.add_argument("--defenders", type=int, default=None)
    parser.add_argument("--shadows", type=int, default=None)
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--no-validated", action="store_true", help="skip alpha='validate'/'per-sample'")
    parser.add_argument("--base", choices=("mlp", "logistic"), default="mlp", help="base trainer [mlp]")
    parser.add_argument("--noise", choices=("both", "clean", "noisy"), default="both")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if load_adult(args.seed, n=4, n_test=4) is None:
        print(
            "soft_labels_tabular: skipped - UCI Adult not found under ../shared/data/adult/ "
            "(set MIPKIT_SHARED_DATA to the folder holding adult/adult.data)"
        )
        return 0
    conditions = {"clean": 0.0, "noisy": 0.2}
    if args.noise != "both":
        conditions = {args.noise: conditions[args.noise]}
    for name, flip in conditions.items():
        cfg = Config(
            name=f"adult-{name}", seed=args.seed, n_jobs=args.n_jobs, validated=not args.no_validated
        )
        if args.base == "logistic":
            cfg.base, cfg.base_params, cfg.inner_params = "logistic", dict(LOGISTIC), {}
        if args.quick:
            cfg.n_defenders, cfg.n_shadows, cfg.n_splits = 6, 8, 4
            cfg.alpha_grid, cfg.n_alpha_groups = (0.0, 0.5, 1.0), 2
        cfg.n_defenders = args.defenders or cfg.n_defenders
        cfg.n_shadows = args.shadows or cfg.n_shadows
        cfg.n_splits = args.splits or cfg.n_splits
        start = time.perf_counter()
        data = load_adult(args.seed, flip=flip)
        print(f"== {data['description']}", flush=True)
        suffix = ("" if args.base == "mlp" else "_logistic") + ("_small" if args.quick else "")
        stem = f"soft_labels_tabular_{name}{suffix}"
        result = run(cfg, data, RESULTS / f"{stem}_fits.npz")
        if flip > 0:
            result["target_agreement"] = target_agreement(cfg, data)
        result["wall_seconds"] = time.perf_counter() - start
        result["markdown"] = print_table(result)
        base = "DP-SGD MLP" if args.base == "mlp" else "logistic regression"
        size = "quick size" if args.quick else "full size"
        save(
            result,
            stem,
            f"Optimally soft labels on Adult, {name} labels ({size}; {base})",
        )
        print(f"{name}: {result['wall_seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
