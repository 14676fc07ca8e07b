"""Audit of a scikit-learn MLP on real Adult with 64 reference models: LOSS vs LiRA vs RMIA at low FPR.

Real UCI Adult (``../shared/data/adult/adult.data``, no header, columns from ``adult.names``, ``?`` = missing;
override the folder with ``MIPKIT_SHARED_DATA``). ``fnlwgt`` (a sampling weight) and ``education`` (a copy of
``education-num``) are dropped, categoricals are one-hot encoded, rows with missing values are dropped, a
seeded random subsample of ``--records`` records is the audit pool and the numeric columns are standardised
(the MLP needs it; the scaling is a fixed data preparation step, not part of what is audited).

The audit is :func:`mipkit.workflows.audit.run.audit`: ``--models`` MLPs on random halves (every record
IN for exactly half), ``--targets`` of them attacked in turn with the other ``K - 1`` as reference models.
The run folder is written to ``runs/audit_adult_work/`` (git-ignored: it holds the ledger, so
re-running resumes) and the small files (``results.json``, ``report.html``, ``config.json``, the 50 most
exposed records) are copied to ``benchmarks/results/audit_adult/``; the headline numbers go to
``benchmarks/results/audit_adult.json``.

Run (about 10-15 minutes on 2 busy cores)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/audit_adult.py

``--quick`` runs a reduced version (1,000 records, 8 models) in about a minute, written as
``audit_adult_small``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread per fit: the fits run in parallel processes

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mipkit.data.io import Dataset, features_target  # noqa: E402
from mipkit.report.audit_report import top_records  # noqa: E402
from mipkit.workflows.audit import AuditConfig, audit  # noqa: E402

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


def shared_data() -> Path:
    return Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))


def load_adult(n_records: int, seed: int) -> Dataset:
    path = shared_data() / "adult" / "adult.data"
    if not path.is_file():
        sys.exit(f"Adult not found at {path} (set MIPKIT_SHARED_DATA)")
    df = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True, na_values=["?"])
    df = df.drop(columns=["fnlwgt", "education"]).dropna().reset_index(drop=True)
    rng = np.random.default_rng(seed)
    df = df.iloc[np.sort(rng.choice(len(df), size=n_records, replace=False))].reset_index(drop=True)
    ds = features_target(df, "income", encode="onehot")
    mean, sd = ds.X.mean(axis=0), ds.X.std(axis=0)
    X = (ds.X - mean) / np.where(sd > 0, sd, 1.0)
    return Dataset(X=X, y=ds.y, feature_names=ds.feature_names, classes=ds.classes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=5000)
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--max-iter", type=int, default=200)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="1,000 records, 8 models, 4 targets")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    if args.quick:
        args.records, args.models, args.targets = 1000, 8, 4
    suffix = "_small" if args.quick else ""
    results_dir = Path(args.out)
    work = ROOT / "runs" / f"audit_adult{suffix}_work"  # git-ignored: ledger and scores.parquet
    keep = results_dir / f"audit_adult{suffix}"

    ds = load_adult(args.records, args.seed)
    params = {"hidden_layer_sizes": [args.hidden], "max_iter": args.max_iter}
    config = AuditConfig(
        model="sklearn.neural_network.MLPClassifier",
        params=params,
        attacks=("loss", "lira", "rmia"),
        n_models=args.models,
        n_targets=args.targets,
        seed=args.seed,
        n_jobs=args.n_jobs,
    )
    t0 = time.perf_counter()
    import warnings

    warnings.filterwarnings("ignore", message=".*Maximum iterations.*")
    results = audit(ds, config, run_dir=work).to_dict()
    seconds = time.perf_counter() - t0

    keep.mkdir(parents=True, exist_ok=True)
    for name in ("results.json", "config.json"):
        shutil.copy2(work / name, keep / name)
    scores = pd.read_parquet(work / "scores.parquet")
    top_records(scores, results["strongest_attack"], k=50).to_csv(
        keep / "top_exposed_records.csv", index=False
    )
    shutil.copy2(work / "report.html", keep / "report.html")  # rendered with the full scores.parquet

    rows = []
    for name, a in results["attacks"].items():
        d = a["tpr_at_fpr_detail"]
        rows.append(
            {
                "attack": name,
                "auc": a["auc"],
                "auc_ci": a["auc_ci"],
                "tpr_at_0.1%": d["0.001"]["tpr"],
                "tpr_at_0.1%_ci": d["0.001"]["tpr_ci"],
                "tpr_at_1%": d["0.01"]["tpr"],
                "tpr_at_1%_ci": d["0.01"]["tpr_ci"],
                "tpr_at_10%": d["0.1"]["tpr"],
                "eta": a["eta"],
                "eta_ci": a["eta_ci"],
                "precision_1:100_at_1%": a["precision_at_base_rate"]["1:100"]["0.01"]["precision"],
            }
        )
    loss = results["attacks"]["loss"]["tpr_at_fpr_detail"]["0.01"]
    checks = {}
    for name in ("lira-online", "lira-offline", "rmia-online", "rmia-offline"):
        d = results["attacks"][name]["tpr_at_fpr_detail"]["0.01"]
        checks[f"{name} > loss at TPR@1%FPR"] = d["tpr"] > loss["tpr"]
        checks[f"{name} CI above loss CI at TPR@1%FPR"] = d["tpr_ci"][0] > loss["tpr_ci"][1]
    summary = {
        "benchmark": "audit_adult",
        "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/audit_adult.py"
        + (" --quick" if args.quick else ""),
        "data": "UCI Adult adult.data (real), one-hot, standardised",
        "records": args.records,
        "models": args.models,
        "targets": args.targets,
        "trainer": {"import_path": config.model, "params": params},
        "seconds": seconds,
        "cpu_count": os.cpu_count(),
        "utility": results["utility"],
        "eta": results["eta"],
        "eta_ci": results["eta_ci"],
        "strongest_attack": results["strongest_attack"],
        "attacks": rows,
        "checks": checks,
        "report": str(keep.relative_to(ROOT) / "report.html") if keep.is_relative_to(ROOT) else str(keep),
    }
    (results_dir / f"audit_adult{suffix}.json").write_text(
        json.dumps(summary, indent=2, default=float) + "\n"
    )

    print(
        f"\nAdult audit: {args.records} records, {args.models} MLPs, {args.targets} targets, {seconds:.0f} s"
    )
    print(f"{'attack':<14}{'AUC':>8}{'TPR@0.1%':>10}{'TPR@1% [95% CI]':>26}{'eta [95% CI]':>26}")
    for r in rows:
        lo, hi = r["tpr_at_1%_ci"]
        elo, ehi = r["eta_ci"]
        print(
            f"{r['attack']:<14}{r['auc']:>8.3f}{r['tpr_at_0.1%']:>10.4f}"
            f"{r['tpr_at_1%']:>9.4f} [{lo:.4f}, {hi:.4f}]{r['eta']:>9.4f} [{elo:.4f}, {ehi:.4f}]"
        )
    for k, v in checks.items():
        print(f"  {k}: {v}")
    print(f"utility: {results['utility']['accuracy_nonmembers']:.3f} held-out accuracy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
