"""Why non-private CTGAN scores a utility AUC near 0.5 on BankChurners: library, settings or evaluation?

On the split of ``synthesizers_bankchurners.py`` (7,088 training rows), for CTGAN at ``--epochs`` (default
100 and 300; ctgan's own default is 300) with batch 500, the script reports

* ``utility_auc``: the benchmark's evaluation (:func:`mipkit.synthesizers.quality.utility_auc`: gradient
  boosting trained on the synthetic table, AUC on the real test rows, positive class ``Attrited Customer``);
* ``utility_auc_flipped``: the same scores against the other class (an orientation error would show here as
  ``1 - utility_auc`` being the high one);
* ``feature_auc``: for the real test rows' three strongest single predictors of attrition, the AUC of the
  feature itself in the real training table and in the synthetic one (does the synthetic table keep the
  feature-target relation the classifier needs?);
* ``positive_rate`` and the columns' dtypes (a numeric column turned into text would drop out as a feature);
* the evaluation on the real training table (the ceiling) and on the real training table with the target
  column's rows shuffled (a floor: 0.5 if the evaluation reads nothing else).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/ctgan_bankchurners_epochs.py [--epochs 100 300]``.
Results: ``benchmarks/results/ctgan_bankchurners_epochs.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from synthesizers_adult import RESULTS
from synthesizers_bankchurners import BANKCHURNERS

TARGET, POSITIVE = BANKCHURNERS["target"], BANKCHURNERS["positive"]
FEATURES = ["Total_Trans_Ct", "Total_Revolving_Bal", "Total_Ct_Chng_Q4_Q1"]


def feature_aucs(table: pd.DataFrame) -> dict:
    """AUC of each of :data:`FEATURES` alone for the target in ``table`` (orientation-free: max(a, 1 - a))."""
    y = (table[TARGET].astype(str) == POSITIVE).to_numpy()
    out = {}
    for c in FEATURES:
        if y.all() or not y.any():
            out[c] = None
            continue
        a = roc_auc_score(y, pd.to_numeric(table[c], errors="coerce").fillna(0.0))
        out[c] = float(max(a, 1.0 - a))
    return out


def evaluate(name: str, table: pd.DataFrame, test: pd.DataFrame, seed: int) -> dict:
    from mipkit.synthesizers.quality import utility_auc

    auc = utility_auc(table, test, target=TARGET, positive=POSITIVE, seed=seed)
    other = str(next(v for v in test[TARGET].astype(str).unique() if v != POSITIVE))
    flipped = utility_auc(table, test, target=TARGET, positive=other, seed=seed)
    return {
        "name": name, "utility_auc": auc, "utility_auc_flipped": flipped,
        "positive_rate": float((table[TARGET].astype(str) == POSITIVE).mean()),
        "feature_auc": feature_aucs(table),
        "dtypes": {c: str(t) for c, t in table.dtypes.items()},
    }  # fmt: skip


def save(args, train, test, rows: list[dict]) -> None:
    meta = {"train_rows": len(train), "test_rows": len(test), "seed": args.seed, "load": os.getloadavg()}
    out = RESULTS / "ctgan_bankchurners_epochs.json"
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", nargs="+", type=int, default=[100, 300])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from mipkit.synthesizers.peers import CTGANSynthesizer

    train, test = BANKCHURNERS["load"]()
    rows = [evaluate("real train", train, test, args.seed)]
    shuffled = train.copy()
    shuffled[TARGET] = np.random.default_rng(args.seed).permutation(shuffled[TARGET].to_numpy())
    rows.append(evaluate("real train, target shuffled", shuffled, test, args.seed))
    rows[-1]["feature_auc_test"] = feature_aucs(test)
    save(args, train, test, rows)
    for epochs in args.epochs:
        t = time.perf_counter()
        synth = CTGANSynthesizer(epochs=epochs, random_state=args.seed).fit(train)
        table = synth.sample(len(train))
        row = evaluate(f"ctgan {epochs} epochs", table, test, args.seed)
        row.update(
            {"epochs": epochs, "steps": epochs * -(-len(train) // 500), "seconds": time.perf_counter() - t}
        )
        rows.append(row)
        save(args, train, test, rows)  # each setting as it finishes: a killed run keeps what it measured
        print(
            json.dumps({k: row[k] for k in ("name", "utility_auc", "positive_rate", "feature_auc")}),
            flush=True,
        )
    save(args, train, test, rows)
    for r in rows:
        print(r["name"], r["utility_auc"], r["utility_auc_flipped"], r["feature_auc"])


if __name__ == "__main__":
    main()
