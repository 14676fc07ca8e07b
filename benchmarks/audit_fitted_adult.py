"""Audit the model you release vs audit the training procedure, on real Adult.

A scaled MLP (``Pipeline(StandardScaler, MLPClassifier)``) is fitted once on ``--members`` records of UCI
Adult (``../shared/data/adult/adult.data``; ``fnlwgt`` and ``education`` dropped, categoricals one-hot
encoded, rows with missing values and repeated rows dropped, a seeded random subsample). Two questions are
then answered:

* **this fitted model** (:func:`mipkit.audit_fitted`): the released object's outputs on its own training
  rows (members) against as many held-out rows (non-members); LOSS needs nothing more, LiRA / RMIA use
  ``--references`` reference models trained by the same Pipeline (cloned) on random subsets of
  ``--population`` other Adult rows plus the audited rows;
* **this training procedure** (:func:`mipkit.workflows.audit.run.audit`, ``mipkit audit --scale``):
  ``--models`` MLPs of the same settings, each on a random half of the members + non-members pool (so each
  trains on as many rows as the released model), every one attacked in turn with the others as references.

Both use the same attacks, FPRs and bootstrap size. Writes ``benchmarks/results/audit_fitted_adult.json``
(run folders under ``runs/audit_fitted_adult_work/``, git-ignored). Skips cleanly when Adult is absent.

Run (about 3-5 minutes on one core)::

    .venv/bin/python benchmarks/audit_fitted_adult.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from audit_adult import COLUMNS, shared_data  # noqa: E402  (the same Adult files and columns)
from mipkit.data.io import features_target  # noqa: E402
from mipkit.workflows.audit import AuditConfig, LabelledTable, audit  # noqa: E402
from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted  # noqa: E402


def load_adult(n_rows: int, seed: int) -> pd.DataFrame | None:
    """A seeded subsample of Adult, one-hot encoded; the label column ``income`` holds class codes 0/1."""
    path = shared_data() / "adult" / "adult.data"
    if not path.is_file():
        return None
    df = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True, na_values=["?"])
    df = df.drop(columns=["fnlwgt", "education"]).dropna()
    df = df.drop_duplicates().reset_index(drop=True)  # a repeated row cannot be both member and non-member
    rng = np.random.default_rng(seed)
    df = df.iloc[rng.permutation(len(df))[:n_rows]].reset_index(drop=True)
    ds = features_target(df, "income", encode="onehot")
    out = pd.DataFrame(ds.X, columns=[str(c) for c in ds.feature_names])
    out["income"] = ds.y
    return out


def headline(d: dict) -> dict:
    best = d["strongest_attack"]
    a = d["attacks"][best]
    loss = d["attacks"]["loss"]
    return {
        "strongest_attack": best,
        "eta": d["eta"],
        "eta_ci": d["eta_ci"],
        "auc_best": d["auc"],
        "tpr_at_1%_best": d["tpr_at_fpr"]["0.01"],
        "strongest_auc": a["auc"],
        "loss_auc": loss["auc"],
        "loss_tpr_at_1%": loss["tpr_at_fpr"]["0.01"],
        "attacks": {
            name: {"auc": r["auc"], "tpr_at_1%": r["tpr_at_fpr"]["0.01"], "eta": r["eta"]}
            for name, r in d["attacks"].items()
            if r.get("auc") is not None
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=1000)
    ap.add_argument("--population", type=int, default=2000)
    ap.add_argument("--references", type=int, default=8)
    ap.add_argument("--models", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--max-iter", type=int, default=150)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    m = args.members
    df = load_adult(2 * m + args.population, args.seed)
    if df is None:
        print(f"SKIP: Adult not found under {shared_data()} (set MIPKIT_SHARED_DATA)")
        return 0
    members, non_members, population = df.iloc[:m], df.iloc[m : 2 * m], df.iloc[2 * m :]
    params = {"hidden_layer_sizes": [args.hidden], "max_iter": args.max_iter, "random_state": args.seed}
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    warnings.filterwarnings("ignore", message=".*Maximum iterations.*")
    warnings.filterwarnings("ignore", message=".*fits warned.*")
    work = ROOT / "runs" / "audit_fitted_adult_work"
    t0 = time.perf_counter()
    model = make_pipeline(StandardScaler(), MLPClassifier(**params))
    model.fit(members.drop(columns="income"), members["income"])
    held_out_acc = float(model.score(non_members.drop(columns="income"), non_members["income"]))
    fitted = audit_fitted(
        FittedRelease(model, members, non_members, population=population),
        AuditFittedConfig(target="income", n_reference=args.references, seed=args.seed, n_jobs=args.n_jobs,
                          n_boot=args.n_boot),
        run_dir=work / "fitted",
    )  # fmt: skip
    fitted.write(work / "fitted")
    t_fitted = time.perf_counter() - t0

    t0 = time.perf_counter()
    pool = pd.concat([members, non_members], ignore_index=True)
    config = AuditConfig(
        model="sklearn.neural_network.MLPClassifier",
        params={k: v for k, v in params.items() if k != "random_state"}, scale=True,
        attacks=("loss", "lira", "rmia"), n_models=args.models, n_targets=args.models, seed=args.seed,
        n_jobs=args.n_jobs, n_boot=args.n_boot,
    )  # fmt: skip
    procedure = audit(LabelledTable(pool, target="income"), config, run_dir=work / "procedure")
    t_procedure = time.perf_counter() - t0

    f, p = fitted.to_dict(), procedure.to_dict()
    summary = {
        "benchmark": "audit_fitted_adult",
        "command": ".venv/bin/python benchmarks/audit_fitted_adult.py",
        "data": "UCI Adult adult.data (real), one-hot; a seeded subsample",
        "model": f"Pipeline(StandardScaler, MLPClassifier({params}))",
        "fitted_model": {
            "question": f["question"],
            "members": m,
            "non_members": m,
            "population": args.population,
            "reference_models": args.references,
            "held_out_accuracy": held_out_acc,
            "utility": f["utility"],
            "interval": f["headline"]["method"],
            "seconds": t_fitted,
            **headline(f),
        },
        "training_procedure": {
            "question": {"answered": "this training procedure"},
            "pool": 2 * m,
            "models": args.models,
            "trials": p["game"]["trials"],
            "utility": p["utility"],
            "interval": p["headline"]["method"],
            "seconds": t_procedure,
            **headline(p),
        },
        "cpu_count": os.cpu_count(),
        "n_jobs": args.n_jobs,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit_fitted_adult.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
    print(f"{'question':<26}{'strongest':>14}{'eta [95% CI]':>28}{'best AUC':>10}{'TPR@1%':>8}{'s':>6}")
    for name, r in (
        ("this fitted model", summary["fitted_model"]),
        ("this training procedure", summary["training_procedure"]),
    ):
        lo, hi = r["eta_ci"]
        print(
            f"{name:<26}{r['strongest_attack']:>14}{r['eta']:>10.4f} [{lo:.4f}, {hi:.4f}]"
            f"{r['auc_best']:>10.3f}{r['tpr_at_1%_best']:>8.3f}{r['seconds']:>6.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
