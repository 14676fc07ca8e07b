"""Optimally soft labels (Pedersen ch. 5) on scikit-learn's digits: the thesis experiment, attacker included.

The thesis (ch. 5.4-5.5) used 1,280-dimensional CIFAR-10 embeddings we cannot download; here the 64 pixels
of scikit-learn's digits (1,797 images) stand in. 400 defender + 400 reserve records; 20% of the labels of
each set flipped in pairs; the remaining 997 images with their clean labels measure utility. Features are
standardised with the mean and SD of those 997 (a fixed preparation independent of the audited records).
The DP-SGD MLP baseline and the settings are the thesis's (see ``_soft_labels.py``): hard labels, label
smoothing a in {0.5, 0.7, 0.9}, optimally soft labels alpha in {0, 0.25, 0.5, 1}, and alpha chosen on a
validation split globally and per group of samples. The LTU attacker replays the whole procedure on every
shadow model.

Run::

    .venv/bin/python benchmarks/soft_labels_digits.py            # full: 50 defender + 32 shadow models per
                                                                 # setting, 25 splits (see docs/defences.md)
    .venv/bin/python benchmarks/soft_labels_digits.py --quick    # reduced size, a few minutes

Writes ``benchmarks/results/soft_labels_digits[_logistic][_small].{json,csv,png}`` and
``..._p_in_histograms.png`` (``--base logistic``: ``_logistic``; ``--quick``: ``_small``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

from _soft_labels import LOGISTIC, Config, flip_in_pairs, print_table, run, save, target_agreement


def prepare(seed: int, n: int = 400, flip: float = 0.2) -> dict:
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(y.size)
    pool, test = order[: 2 * n], order[2 * n :]
    mean, sd = X[test].mean(axis=0), X[test].std(axis=0)
    Xs = (X - mean) / np.where(sd > 0, sd, 1.0)
    y_pool = y[pool]
    noisy = flip_in_pairs(y_pool, np.arange(n), flip, rng)
    noisy = flip_in_pairs(noisy, np.arange(n, 2 * n), flip, rng)
    return {
        "X": Xs[pool],
        "y": noisy,
        "y_clean": y_pool,
        "n_defender": n,
        "X_test": Xs[test],
        "y_test": y[test],
        "n_test": int(test.size),
        "flipped": int(np.sum(noisy != y_pool)),
        "description": f"sklearn digits: {n} defender + {n} reserve, {flip:.0%} of labels flipped in pairs; "
        f"{test.size} held-out images with clean labels for utility; features standardised on the held-out",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 defender + 8 shadow models, 4 splits")
    parser.add_argument("--defenders", type=int, default=None)
    parser.add_argument("--shadows", type=int, default=None)
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--no-validated", action="store_true", help="skip alpha='validate'/'per-sample'")
    parser.add_argument("--base", choices=("mlp", "logistic"), default="mlp", help="base trainer [mlp]")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cfg = Config(name="digits", seed=args.seed, n_jobs=args.n_jobs, validated=not args.no_validated)
    if args.base == "logistic":
        cfg.base, cfg.base_params, cfg.inner_params = "logistic", dict(LOGISTIC), {}
    if args.quick:
        cfg.n_defenders, cfg.n_shadows, cfg.n_splits = 6, 8, 4
        cfg.alpha_grid, cfg.n_alpha_groups = (0.0, 0.5, 1.0), 2
    cfg.n_defenders = args.defenders or cfg.n_defenders
    cfg.n_shadows = args.shadows or cfg.n_shadows
    cfg.n_splits = args.splits or cfg.n_splits
    start = time.perf_counter()
    data = prepare(args.seed)
    result = run(cfg, data)
    result["target_agreement"] = target_agreement(cfg, data)
    result["wall_seconds"] = time.perf_counter() - start
    result["markdown"] = print_table(result)
    for row in result["target_agreement"]["rows"]:
        print(
            f"alpha {row['alpha']:<4}: argmax(target) = given label {row['matches_given_label']:.3f}, "
            f"= clean label {row['matches_clean_label']:.3f}"
        )
    stem = (
        "soft_labels_digits" + ("" if args.base == "mlp" else "_logistic") + ("_small" if args.quick else "")
    )
    size = "quick size" if args.quick else "full size"
    base = "DP-SGD MLP" if args.base == "mlp" else "logistic regression"
    save(result, stem, f"Optimally soft labels on digits ({size}; {base}, 20% labels flipped)")
    print(f"total {result['wall_seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
