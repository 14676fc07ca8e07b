"""LTU privacy of ten scikit-learn models on the digits data in the thesis's three scenarios.

Issue #4 must-show (Pedersen thesis, Thm 4.2.4 and Fig. 4.2): deterministic trainers leak everything to the
LTU retraining attack. Models are compared through their predictions on a probe set (black-box, as
Thm 5.2.2 frames it): ``predict_proba`` where the model has it, else ``decision_function``
(RidgeClassifier, Perceptron, and SVC with its default ``probability=False``). Probe set = every record of
the defender and reserve sets.

Scenarios (thesis Sec. 4.2.3): ``original`` (original order, fixed seed), ``random`` (secret random order,
fixed seed), ``unseeded`` (secret random order, secret seed). Models use scikit-learn defaults, as in the
thesis. For comparison the cheap loss strategy (Thm 4.2.1: lower loss = member) is run on the same rounds.

Sizes: the thesis uses 1,600 defender + 1,600 reserve records of QMNIST / CIFAR-10 features and 100
rounds. scikit-learn's digits has 1,797 records, so the default here is 400 + 400 (features scaled to
[0, 1]) and 40 rounds, which takes about 10 minutes on 2 busy cores (the random forest and the MLP are
most of it). Utility = accuracy of the defender's model on the 997 records in neither set.

Run::

    .venv/bin/python benchmarks/ltu_digits.py     # full size -> benchmarks/results/ltu_digits.json
    .venv/bin/python benchmarks/ltu_digits.py --rounds 10 --n-defender 100 --n-reserve 100 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from mipkit.attacks import ltu_game
from mipkit.game.trainers import TrainerSpec

MODELS: dict[str, str] = {
    "logistic regression": "sklearn.linear_model.LogisticRegression",
    "ridge classifier": "sklearn.linear_model.RidgeClassifier",
    "Gaussian naive Bayes": "sklearn.naive_bayes.GaussianNB",
    "SVC": "sklearn.svm.SVC",
    "k-nearest neighbours": "sklearn.neighbors.KNeighborsClassifier",
    "decision tree": "sklearn.tree.DecisionTreeClassifier",
    "random forest": "sklearn.ensemble.RandomForestClassifier",
    "MLP": "sklearn.neural_network.MLPClassifier",
    "SGD classifier": "sklearn.linear_model.SGDClassifier",
    "perceptron": "sklearn.linear_model.Perceptron",
}
SCENARIOS = ("original", "random", "unseeded")
RESULTS = Path(__file__).resolve().parent / "results"


def run(
    *,
    models: dict[str, str] | None = None,
    scenarios=SCENARIOS,
    n_defender: int = 400,
    n_reserve: int = 400,
    n_rounds: int = 40,
    seed: int = 0,
    n_jobs: int = 2,
    with_loss: bool = True,
) -> list[dict]:
    """One row per (model, scenario): retrain-attack LTU accuracy and privacy, loss-attack privacy and
    test accuracy."""
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    rows = np.random.default_rng(seed).permutation(len(y))
    defenders, reserves = rows[:n_defender], rows[n_defender : n_defender + n_reserve]
    test = rows[n_defender + n_reserve :]
    out = []
    for name, path in (models or MODELS).items():
        trainer = TrainerSpec(path, {})
        for scenario in scenarios:
            start = time.perf_counter()
            result = ltu_game(
                trainer,
                X,
                y,
                defender_idx=defenders,
                reserve_idx=reserves,
                strategy="retrain",
                compare="predictions",
                scenario=scenario,
                n_rounds=n_rounds,
                random_state=seed,
                utility_idx=test,
                n_jobs=n_jobs,
            )
            seconds = time.perf_counter() - start
            row = {
                "model": name,
                "trainer": path,
                "scenario": scenario,
                "test_accuracy": result.utility,
                "ltu_accuracy": result.accuracy.value,
                "ltu_accuracy_ci": list(result.accuracy.interval()),
                "privacy": result.privacy,
                "privacy_error": result.privacy_error,
                "ties": result.extra["n_ties"],
                "exact_matches": int((result.per_record["score_defender"] == 0).sum()),
                "seconds": seconds,
            }
            if with_loss:
                loss = ltu_game(
                    trainer, X, y, defender_idx=defenders, reserve_idx=reserves, strategy="loss",
                    scenario=scenario, n_rounds=n_rounds, random_state=seed,
                )  # fmt: skip
                row["loss_privacy"] = loss.privacy
            out.append(row)
            print(
                f"{name:22s} {scenario:9s} privacy {row['privacy']:.2f} +- {row['privacy_error']:.2f} "
                f"test acc {row['test_accuracy']:.3f} ({seconds:.0f} s)",
                flush=True,
            )
    return out


def markdown_table(rows: list[dict]) -> str:
    by_model: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_model.setdefault(row["model"], {})[row["scenario"]] = row
    scenarios = [s for s in SCENARIOS if any(s in v for v in by_model.values())]
    head = "| model | test accuracy (original) | " + " | ".join(f"privacy: {s}" for s in scenarios)
    head += " | loss-attack privacy (original) |"
    lines = [head, "|" + " --- |" * (3 + len(scenarios))]
    for model, cells in by_model.items():
        first = cells.get("original", next(iter(cells.values())))
        parts = [model, f"{first['test_accuracy']:.3f}"]
        for s in scenarios:
            c = cells.get(s)
            parts.append("" if c is None else f"{c['privacy']:.2f} +- {c['privacy_error']:.2f}")
        loss = first.get("loss_privacy")
        parts.append("" if loss is None else f"{loss:.2f}")
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-defender", type=int, default=400)
    parser.add_argument("--n-reserve", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "ltu_digits.json")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(
        n_defender=args.n_defender,
        n_reserve=args.n_reserve,
        n_rounds=args.rounds,
        seed=args.seed,
        n_jobs=args.n_jobs,
    )
    total = time.perf_counter() - start
    table = markdown_table(rows)
    print()
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": "ltu_digits",
        "config": {
            "n_defender": args.n_defender,
            "n_reserve": args.n_reserve,
            "n_rounds": args.rounds,
            "seed": args.seed,
            "n_jobs": args.n_jobs,
            "compare": "predictions (predict_proba, else decision_function) on D_D + D_R",
            "features": "digits pixels / 16",
        },
        "total_seconds": total,
        "rows": rows,
        "markdown": table,
    }
    args.out.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {args.out} ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
