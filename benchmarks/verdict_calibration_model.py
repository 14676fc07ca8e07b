"""Calibration of the model audit's verdict: false alarms on a null trainer, power on known leaks.

Null: ``--n-null`` audits (default 200) of :class:`mipkit.workflows.audit.calibration.NullTrainer`
(``predict_proba`` = seeded uniform noise, independent of the training data) on scikit-learn's breast-cancer
set, 8 models, attacks loss/lira/rmia, seeds 0.. - exactly the audit's code after the fits
(:func:`mipkit.workflows.audit.calibration.null_audit`). A false alarm is a headline that says the model
"measurably reveals" membership (interval above 0). BEFORE: the old rule (strongest attack's Clopper-Pearson
interval on pooled trials), recomputed from the same runs; AFTER: the two-way cluster bootstrap, simultaneous
over the attacks. Rates come with exact (Clopper-Pearson) 95% intervals. The empirical design effect is the
variance of each attack's eta over the null seeds divided by the binomial variance ``1 / (4 * trials)``.

Power: ``--n-power`` audits each (default 10, seeds 0..; the committed results use 50) of two known leaks
through :func:`mipkit.workflows.audit.run.audit`: an unregularised random forest and an MLP that
memorises (256-256 units, no weight decay, standardised features inside the trainer).

Usage (the commands of the committed results: the null part at load average 12 took about 40 minutes; that
run was stopped during its power part, which was then run on its own, ``--power-only`` keeping the saved null
part; 50 audits per leak took under 3 minutes on two idle cores)::

    python benchmarks/verdict_calibration_model.py --n-null 200 --n-power 5 --jobs 2
    python benchmarks/verdict_calibration_model.py --n-power 50 --power-only

Writes ``benchmarks/results/verdict_calibration_model.json`` (``--quick``: ``..._small.json``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import stats as sst
from sklearn.datasets import load_breast_cancer

from mipkit.data.io import Dataset
from mipkit.stats import clopper_pearson
from mipkit.workflows.audit.calibration import null_audit
from mipkit.workflows.audit.config import AuditConfig
from mipkit.workflows.audit.run import audit
from mipkit.workflows.audit.verdict import old_headline_reveals

ATTACKS = ("loss", "lira", "rmia")
LEAKS = {
    "random forest, unregularised": ("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 50}, False),
    "MLP that memorises (256-256, alpha 0, scaled)": (
        "sklearn.neural_network.MLPClassifier",
        {"hidden_layer_sizes": [256, 256], "alpha": 0.0, "max_iter": 500},
        True,
    ),
}


def rate(k: int, n: int) -> dict:
    lo, hi = clopper_pearson(k, n)
    return {"count": int(k), "runs": int(n), "rate": k / n, "ci95": [lo, hi]}


def _null(seed: int, n_boot: int) -> dict:
    from threadpoolctl import threadpool_limits

    X, y = load_breast_cancer(return_X_y=True)
    cfg = AuditConfig(model="x.y", n_models=8, attacks=ATTACKS, seed=seed, n_boot=n_boot)
    with threadpool_limits(1):
        return null_audit(X, y, cfg)


def _leak(name: str, seed: int, n_boot: int) -> dict:
    from threadpoolctl import threadpool_limits

    model, params, scale = LEAKS[name]
    d = load_breast_cancer()
    ds = Dataset(X=d.data, y=d.target, feature_names=tuple(d.feature_names), classes=np.array([0, 1]))
    cfg = AuditConfig(
        model=model,
        params=params,
        n_models=8,
        attacks=ATTACKS,
        seed=seed,
        n_jobs=1,
        scale=scale,
        n_boot=n_boot,
    )
    with tempfile.TemporaryDirectory() as out, threadpool_limits(1):
        res = audit(ds, cfg, run_dir=out, report=False)
    return {
        "old_reveals": old_headline_reveals(res.summaries, cfg.confidence),
        "new_reveals": bool(res.reveals),
        "eta": res.eta,
        "eta_ci": res.eta_ci,
        "accuracy_nonmembers": res.utility["accuracy_nonmembers"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-null", type=int, default=200)
    ap.add_argument("--n-power", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="20 null and 3 power audits")
    ap.add_argument(
        "--power-only", action="store_true",
        help="keep the saved null part (a run killed during the power part); run the power part",
    )  # fmt: skip
    args = ap.parse_args()
    if args.quick:
        args.n_null, args.n_power = 20, 3
    start = time.time()
    par = Parallel(n_jobs=args.jobs)
    path = (
        Path(__file__).parent
        / "results"
        / ("verdict_calibration_model_small.json" if args.quick else "verdict_calibration_model.json")
    )
    if args.power_only:
        saved = json.loads(path.read_text())
        null, n = saved["null"], saved["n_null"]
    else:
        null, n = _null_part(par, args)
    partial = {
        "benchmark": "verdict_calibration_model",
        "partial": "null part only",
        "n_null": n,
        "null": null,
    }
    path.write_text(json.dumps(partial, indent=2) + "\n")  # kept if the power part is interrupted
    _power_part(par, args, path, null, n, start)


def _null_part(par, args) -> tuple[dict, int]:
    """The null audits: false alarms of the old and the new headline, per attack too."""
    t0 = time.time()
    nulls = par(delayed(_null)(s, args.n_boot) for s in range(args.n_null))
    t_null = time.time() - t0
    n = len(nulls)
    attacks = list(nulls[0]["old_per_attack"])
    trials = nulls[0]["trials"]
    etas = {a: np.array([r["eta_per_attack"][a] for r in nulls]) for a in attacks}
    null = {
        "headline_before": rate(sum(r["old_reveals"] for r in nulls), n),
        "headline_after": rate(sum(r["new_reveals"] for r in nulls), n),
        "per_attack_before": {a: rate(sum(r["old_per_attack"][a] for r in nulls), n) for a in attacks},
        "per_attack_after": {a: rate(sum(r["new_per_attack"][a] for r in nulls), n) for a in attacks},
        "design_effect_empirical": {a: float(np.var(etas[a], ddof=1) * 4 * trials) for a in attacks},
        "design_effect_bootstrap_mean": {
            a: float(np.mean([r["design_effect"][a] for r in nulls])) for a in attacks
        },
        "mean_eta": {a: float(etas[a].mean()) for a in attacks},
        "headline_eta_mean": float(np.mean([r["eta"] for r in nulls])),
        "seconds": t_null,
    }
    return null, n


def _power_part(par, args, path: Path, null: dict, n: int, start: float) -> None:
    """The known leaks (power), then the whole results file and the printed table."""
    power = {}
    for name in LEAKS:
        t0 = time.time()
        runs = par(delayed(_leak)(name, s, args.n_boot) for s in range(args.n_power))
        power[name] = {
            "before": rate(sum(r["old_reveals"] for r in runs), len(runs)),
            "after": rate(sum(r["new_reveals"] for r in runs), len(runs)),
            "mean_eta": float(np.mean([r["eta"] for r in runs])),
            "mean_eta_ci": np.mean([r["eta_ci"] for r in runs], axis=0).tolist(),
            "held_out_accuracy": float(np.mean([r["accuracy_nonmembers"] for r in runs])),
            "seconds": time.time() - t0,
        }
    out = {
        "benchmark": "verdict_calibration_model",
        "data": "sklearn breast cancer (569 records), 8 models, 8 targets, attacks loss/lira/rmia",
        "null_trainer": "mipkit.workflows.audit.calibration.NullTrainer (seeded uniform noise)",
        "n_null": n,
        "n_power": args.n_power,
        "n_boot": args.n_boot,
        "binomial_check": {"p_3_or_more_of_16_at_5pct": float(sst.binom.sf(2, 16, 0.05))},
        "null": null,
        "power": power,
        "seconds": time.time() - start,
        "command": f"python benchmarks/verdict_calibration_model.py --n-null {args.n_null} "
        f"--n-power {args.n_power} --jobs {args.jobs} --n-boot {args.n_boot}"
        + (" --power-only" if args.power_only else ""),
    }
    path.write_text(json.dumps(out, indent=2) + "\n")

    def fmt(r: dict) -> str:
        lo, hi = (100 * v for v in r["ci95"])
        return f"{r['count']:>3}/{r['runs']:<3} = {100 * r['rate']:5.1f}% [{lo:4.1f}, {hi:4.1f}]"

    print(
        f"Model audit verdict calibration ({n} null audits, {args.n_power} per leak; {out['seconds']:.0f} s)"
    )
    print(f"{'case':<48} {'BEFORE (old rule)':<30} AFTER (cluster, simultaneous)")
    head = "null trainer: false alarms (headline)"
    print(f"{head:<48} {fmt(null['headline_before']):<30} {fmt(null['headline_after'])}")
    for a in null["per_attack_before"]:
        before, after = fmt(null["per_attack_before"][a]), fmt(null["per_attack_after"][a])
        deff = null["design_effect_empirical"][a]
        print(f"{'  ' + a + ' alone':<48} {before:<30} {after}  design effect {deff:.2f}")
    for name, p in power.items():
        print(f"{'power: ' + name:<48} {fmt(p['before']):<30} {fmt(p['after'])}  eta {p['mean_eta']:.3f}")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
