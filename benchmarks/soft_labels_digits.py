"""Optimally soft labels (Pedersen ch. 5) on scikit-learn's digits: the thesis experiment, attacker included.

The thesis (ch. 5.4-5.5) used 1,280-dimensional CIFAR-10 embeddings we cannot download; here the 64 pixels
of scikit-learn's digits (1,797 images) stand in. 400 defender + 400 reserve records; 20% of the labels of
each set flipped in pairs; the remaining 997 images with their clean labels measure utility. Features are
standardised with the mean and SD of those 997 (a fixed preparation independent of the audited records).
The DP-SGD MLP baseline and the settings are the thesis's (see ``_soft_labels.py``): hard labels, label
smoothing a in {0.5, 0.7, 0.9}, optimally soft labels alpha in {0, 0.25, 0.5, 1}, and alpha chosen on a
validation split globally and per group of samples. The LTU attacker replays the whole procedure on every
shadow model.

Questions, inference and size (fixed before the main run; ``_soft_labels_stats.py``):

1. Does the validated alpha give more LTU privacy than hard labels? Paired difference of the LTU privacy
   (expected over the game's pairing, i.e. from each defender model's AUC), 95% cluster-bootstrap interval
   over defender models, paired t test.
2. Does it keep hard labels' accuracy? TOST of the paired test-accuracy difference, margin 1 point, level
   0.05 (90% interval inside +-0.01).
3. Which alphas does validation choose? Counts over the defender models.
Every other setting gets the same intervals against hard labels (secondary, not adjusted for multiplicity).

Power calculation (``--power``, from the pilot ``--pilot``: 16 defender models with model seed 1 and the 32
shadow models, on the same data): SD over models of the paired privacy difference validated - hard 0.0375
(0.033-0.053 over the settings); of the paired accuracy difference 0.0596 (the larger of the pilot's and
that of the 50-model run of commit b92cff6). 80% power at level 0.05 needs 113 defender models to detect a
privacy difference of 0.01 (89-224 over the settings; smoothing 0.5: 120) and 306 for the TOST at a true
difference of 0. The main run asks for 306, starting from the pilot's fits (the same model seed, so its
shadow models and first 16 defender models are the pilot's: an internal pilot, Wittes & Brittain, Stat. Med.
9, 1990, whose size comes from the SDs only), and stops starting batches of 16 after 45 minutes (on time,
never on results); docs/defences.md states the number of models it reached and the power achieved.

Run::

    .venv/bin/python benchmarks/soft_labels_digits.py --pilot     # the pilot (16 defender models)
    .venv/bin/python benchmarks/soft_labels_digits.py --power     # the power calculation from the pilot
    cp benchmarks/results/soft_labels_digits_pilot_fits.npz benchmarks/results/soft_labels_digits_fits.npz
    .venv/bin/python benchmarks/soft_labels_digits.py --model-seed 1 --defenders 306 --budget-minutes 45
    .venv/bin/python benchmarks/soft_labels_digits.py --quick     # reduced size, a few minutes

Writes ``benchmarks/results/soft_labels_digits{_small,_pilot}.json``, ``.csv``, ``.png`` and
``_p_in_histograms.png``, and the fitted models' outputs to ``..._fits.npz`` (not committed; a stopped run
resumes from it, and ``--defenders N`` with the N reached redoes the analysis alone). DP-SGD draws its noise
from OS entropy, so a rerun gives other models and the figures vary within their intervals.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import load_digits

from _soft_labels import LOGISTIC, RESULTS, Config, flip_in_pairs, print_table, run, save, target_agreement


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


PILOT_DEFENDERS, PILOT_MODEL_SEED = 16, 1
"""The pilot: 16 defender models (model seed 1, so none is reused by the main run) on the same data."""
OLD_RUN_ACCURACY_SD = 0.0596
"""SD over defender models of the paired test-accuracy difference OSL validated - hard labels in the
50-model run of commit b92cff6 (benchmarks/results/soft_labels_digits.json there)."""


def power_plan(pilot_path=None, delta: float = 0.01, margin: float = 0.01, power: float = 0.8) -> dict:
    """Defender models needed (80% power, level 0.05) for the two questions, from the pilot's per-model SDs.

    Privacy: a paired t test detecting a difference of ``delta`` in LTU privacy between a setting and hard
    labels. Accuracy: a TOST at ``margin`` when the true difference is 0. The SD of each paired difference
    is the pilot's (and, for accuracy, the larger of the pilot's and the 50-model run's). When the main run's
    JSON exists, ``achieved`` gives the power at the number of models it reached, from its own SDs.
    """
    from _soft_labels_stats import models_for_power, models_for_tost, power_paired, tost_power

    path = pilot_path or RESULTS / "soft_labels_digits_pilot.json"
    pilot = json.loads(path.read_text())
    out = {"pilot": str(path.name), "pilot_models": pilot["config"]["n_defenders"], "settings": {}}
    for row in pilot["settings"]:
        if "vs_hard" not in row:
            continue
        sd_priv = row["vs_hard"]["ltu_privacy"]["sd_per_model"]
        sd_acc = row["vs_hard"]["test_accuracy"]["sd_per_model"]
        if row["setting"] == "OSL validated":
            sd_acc = max(sd_acc, OLD_RUN_ACCURACY_SD)
        out["settings"][row["setting"]] = {
            "sd_privacy_difference": sd_priv,
            "models_privacy_delta": models_for_power(sd_priv, delta, power),
            "sd_accuracy_difference": sd_acc,
            "models_accuracy_tost": models_for_tost(sd_acc, margin, power),
        }
    main = RESULTS / "soft_labels_digits.json"
    if pilot_path is None and main.is_file():  # the power the main run achieved, from its own SDs
        done = json.loads(main.read_text())
        n = done["config"]["n_defenders"]
        out["achieved"] = {"models": n, "settings": {}}
        for row in done["settings"]:
            if "vs_hard" in row:
                sd_priv = row["vs_hard"]["ltu_privacy"]["sd_per_model"]
                sd_acc = row["vs_hard"]["test_accuracy"]["sd_per_model"]
                out["achieved"]["settings"][row["setting"]] = {
                    "sd_privacy_difference": sd_priv,
                    "power_privacy_delta": power_paired(sd_priv, delta, n),
                    "sd_accuracy_difference": sd_acc,
                    "power_accuracy_tost": tost_power(sd_acc, margin, n),
                }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 defender + 8 shadow models, 4 splits")
    parser.add_argument("--defenders", type=int, default=None)
    parser.add_argument("--shadows", type=int, default=None)
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--no-validated", action="store_true", help="skip alpha='validate'/'per-sample'")
    parser.add_argument("--base", choices=("mlp", "logistic"), default="mlp", help="base trainer [mlp]")
    parser.add_argument("--pilot", action="store_true", help="the pilot of the power calculation")
    parser.add_argument("--budget-minutes", type=float, default=None, help="stop fitting after this")
    parser.add_argument("--power", action="store_true", help="print the power calculation and exit")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="data split and label flips [0]")
    parser.add_argument("--model-seed", type=int, default=None, help="model seeds [--seed]")
    args = parser.parse_args(argv)
    if args.power:
        print(json.dumps(power_plan(), indent=2))
        return 0
    cfg = Config(
        name="digits",
        seed=args.seed,
        model_seed=args.model_seed,
        n_jobs=args.n_jobs,
        validated=not args.no_validated,
    )
    if args.base == "logistic":
        cfg.base, cfg.base_params, cfg.inner_params = "logistic", dict(LOGISTIC), {}
    if args.quick:
        cfg.n_defenders, cfg.n_shadows, cfg.n_splits = 6, 8, 4
        cfg.alpha_grid, cfg.n_alpha_groups = (0.0, 0.5, 1.0), 2
    if args.pilot:
        cfg.n_defenders, cfg.model_seed = PILOT_DEFENDERS, PILOT_MODEL_SEED
    cfg.n_defenders = args.defenders or cfg.n_defenders
    cfg.budget_s = None if args.budget_minutes is None else 60 * args.budget_minutes
    cfg.n_shadows = args.shadows or cfg.n_shadows
    cfg.n_splits = args.splits or cfg.n_splits
    stem = (
        "soft_labels_digits"
        + ("" if args.base == "mlp" else "_logistic")
        + ("_small" if args.quick else "")
        + ("_pilot" if args.pilot else "")
    )
    start = time.perf_counter()
    data = prepare(args.seed)
    result = run(cfg, data, RESULTS / f"{stem}_fits.npz")
    result["target_agreement"] = target_agreement(cfg, data)
    result["wall_seconds"] = time.perf_counter() - start
    result["markdown"] = print_table(result)
    for row in result["target_agreement"]["rows"]:
        print(
            f"alpha {row['alpha']:<4}: argmax(target) = given label {row['matches_given_label']:.3f}, "
            f"= clean label {row['matches_clean_label']:.3f}; mass on the given label "
            f"{row['target_on_given_label_mean']:.3f}"
        )
    size = "quick size" if args.quick else ("pilot" if args.pilot else f"{cfg.n_defenders} defender models")
    base = "DP-SGD MLP" if args.base == "mlp" else "logistic regression"
    save(result, stem, f"Optimally soft labels on digits ({size}; {base}, 20% labels flipped)")
    print(f"total {result['wall_seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
