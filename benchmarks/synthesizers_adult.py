"""DP-WGAN-GP against the DP synthesizers a privacy engineer would pick, on real Adult.

For each method and epsilon in {1, 3, 10} (delta 1e-5): train on UCI ``adult.data`` (32,561 rows), sample as
many rows, and measure

* utility: AUC on the real held-out ``adult.test`` of a gradient-boosting classifier trained on the synthetic
  table to predict income > 50K (the thesis's "gold standard"); the same classifier trained on the real
  training table gives the ceiling;
* fidelity: mean TVD of the 1-way and 2-way marginals, mean absolute difference of pairwise associations;
* mode collapse: share of the real categories never generated;
* privacy measured by ``mipkit audit-synthetic`` (holdout = real test rows): NNAA privacy loss, DCR attack AUC
  and TPR at 1% FPR, attribute-inference precision improvement over the non-member baseline;
* the certified bounds of the synthesizer's certificate beside them, with violations flagged;
* wall time of fit + sample.

Methods: ``dpwgan-gp``, ``dpwgan-gp-scaled``, ``dpwgan-clip`` (mipkit; ``--device cuda`` trains
``dpwgan-clip``'s networks on a GPU), ``aim`` (as published: 16 d rounds, 1,000 refit
iterations), ``aim-target`` (AIM with the target workload: ``params={"target": <target column>}``), ``mst``
(private-pgm's ``mbi``), ``ctgan`` (non-private, once per seed), and DP-CTGAN / PATE-CTGAN from
``smartnoise-synth`` when its own environment exists
(``python3 -m venv benchmarks/envs/smartnoise && benchmarks/envs/smartnoise/bin/pip install
smartnoise-synth==1.0.8 packaging``; it pins its own torch and pandas, so it cannot share mipkit's).

Run: ``.venv/bin/python benchmarks/synthesizers_adult.py [--quick] [--methods ...] [--epsilons ...]``.
``--quick``: 4,000 training rows, epsilon 3, short runs (a smoke test of the whole pipeline, minutes).
``--jobs 2``: cells side by side in two processes, longest first (one run that times every method under one
load: ``--epsilons 3 --tag speed3 --jobs 2``, about 2 h; a ``_speed`` run is left out of the README tables).
``--seeds 0 1 2``: each (method, epsilon) cell once per seed (the synthesizer's noise and sampling seeds;
the utility classifier is the same, seed 0, for every method and seed); ``synthesizers_tables.py`` reports
the mean over seeds with a t-interval. smartnoise's process seeds Python's, NumPy's and torch's global
generators with the cell's seed (it takes no seed).
Results: ``benchmarks/results/synthesizers_adult[_small][_<tag>].{json,md}`` (``--quick``: ``_small``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"
SMARTNOISE_PY = ROOT / "benchmarks" / "envs" / "smartnoise" / "bin" / "python"
COLUMNS = [
    "age", "type_employer", "fnlwgt", "education", "education_num", "marital", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hr_per_week", "country", "income",
]  # fmt: skip
#: The utility classifier's seed: the same gradient-boosting classifier for every method, epsilon and seed.
CLASSIFIER_SEED = 0
METHODS = ["dpwgan-gp", "dpwgan-gp-scaled", "dpwgan-clip", "aim", "aim-target", "mst", "ctgan",
           "dpctgan", "patectgan"]  # fmt: skip


def load_adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train = adult.data, test = adult.test); ``?`` is missing."""
    kw = {"skipinitialspace": True, "na_values": ["?"], "keep_default_na": False}
    train = pd.read_csv(DATA / "adult" / "adult.data", header=None, names=COLUMNS, **kw)
    test = pd.read_csv(DATA / "adult" / "adult.test", header=None, names=COLUMNS, skiprows=1, **kw)
    test["income"] = test["income"].str.rstrip(".")
    return train.dropna(how="all"), test.dropna(how="all")


ADULT = {
    "name": "adult",
    "load": load_adult,
    "target": "income",
    "positive": ">50K",
    "secrets": ["income", "sex", "marital"],
    "files": ["adult/adult.data", "adult/adult.test"],
}

# options per method: full run / quick run
OPTIONS = {
    "dpwgan-gp": ({}, {"n_generator": 40}),
    "dpwgan-gp-scaled": ({}, {"n_generator": 40}),
    "dpwgan-clip": ({}, {"steps": 300}),
    "aim": ({}, {"rounds": 32, "round_iters": 50, "iters": 300}),  # full: as published
    "aim-target": ({}, {"rounds": 32, "round_iters": 50, "iters": 300}),  # AIM, the target workload
    "mst": ({}, {"iters": 300}),
    "ctgan": ({"epochs": 300}, {"epochs": 5}),  # 100 leave BankChurners' attrition independent of its
    # predictors (benchmarks/ctgan_bankchurners_epochs.py); 300 is ctgan's own default
    "dpctgan": ({"epochs": 100}, {"epochs": 5}),
    "patectgan": ({"epochs": 100}, {"epochs": 5}),
}

SMARTNOISE_SCRIPT = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import pandas as pd
from snsynth import Synthesizer
a = json.loads(sys.argv[1])
import random, numpy as np, torch  # smartnoise takes no seed: its generators are the global ones
random.seed(a["seed"]); np.random.seed(a["seed"]); torch.manual_seed(a["seed"])
df = pd.read_csv(a["train"], keep_default_na=False, na_values=[""])
cats = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
for c in cats:
    df[c] = df[c].astype(object).where(df[c].notna(), "__missing__").astype(str)
conts = [c for c in df.columns if c not in cats]
t = time.perf_counter()
s = Synthesizer.create(a["method"], epsilon=a["epsilon"], delta=a["delta"], epochs=a["epochs"], verbose=False)
if a["preprocessor_eps"] > 0:  # bounds of the numeric columns estimated privately (fails at small budgets)
    s.fit(df, categorical_columns=cats, continuous_columns=conts, preprocessor_eps=a["preprocessor_eps"])
else:  # public bounds, the domain assumption of every other method here
    from snsynth.transform import MinMaxTransformer, TableTransformer
    bounds = {c: MinMaxTransformer(lower=float(df[c].min()), upper=float(df[c].max()), negative=True)
              for c in conts}
    tt = TableTransformer.create(df, style="gan", categorical_columns=cats, constraints=bounds)
    s.fit(df, transformer=tt, preprocessor_eps=0.0)
out = s.sample(a["rows"])
out.to_csv(a["out"], index=False)
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def run_smartnoise(
    method, train, epsilon, delta, rows, epochs, tmp: Path, seed: int = 0
) -> tuple[pd.DataFrame, float, dict]:
    """Fit DP-CTGAN / PATE-CTGAN in smartnoise's own venv. The numeric columns' bounds are public (read from
    the training data, the domain assumption of mipkit's DP-WGAN-GP, MST and AIM here): smartnoise's private
    bound estimation with 10% of epsilon fails ("could not find bounds") on BankChurners at epsilon 1."""
    tmp.mkdir(parents=True, exist_ok=True)
    train.to_csv(tmp / "train.csv", index=False)  # smartnoise's venv has no parquet engine
    pre = 0.0
    arg = {
        "train": str(tmp / "train.csv"), "out": str(tmp / "synth.csv"), "method": method,
        "epsilon": epsilon - pre, "preprocessor_eps": pre, "delta": delta, "rows": rows, "epochs": epochs,
        "seed": seed,
    }  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.run(
        [str(SMARTNOISE_PY), "-c", SMARTNOISE_SCRIPT, json.dumps(arg)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-1500:])
    synth = pd.read_csv(tmp / "synth.csv", keep_default_na=False, na_values=[""])
    for c in synth.columns:
        if pd.api.types.is_numeric_dtype(train[c]):
            synth[c] = pd.to_numeric(synth[c], errors="coerce")
            if pd.api.types.is_integer_dtype(train[c]) and synth[c].notna().all():
                synth[c] = synth[c].round().astype(train[c].dtype)
        else:
            synth[c] = synth[c].astype(object).where(synth[c].astype(str) != "__missing__", None)
    domain = "public: numeric bounds from the training data"
    return synth, wall, {"preprocessor_epsilon": pre, "domain": domain}


def evaluate(
    ds: dict, method: str, epsilon: float | None, seed: int, args, train, test, real_auc: float
) -> dict:
    from mipkit.synthesizers.audit_bounds import certified_audit_bounds
    from mipkit.synthesizers.certificate import certificate_from_dp
    from mipkit.synthesizers.preprocess import infer_domain
    from mipkit.synthesizers.quality import fidelity, mode_collapse_share, utility_auc
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    full, quick = OPTIONS[method]
    opts = quick if args.quick else full
    if method == "dpwgan-clip":
        opts = {**opts, "device": args.device}
    row: dict = {
        "dataset": ds["name"],
        "method": method,
        "epsilon": epsilon,
        "seed": seed,
        "delta": args.delta,
    }
    if method in ("dpctgan", "patectgan"):
        if not SMARTNOISE_PY.exists():
            return {**row, "skipped": f"no smartnoise venv at {SMARTNOISE_PY}"}
        with tempfile.TemporaryDirectory() as tmp:
            synth, seconds, extra = run_smartnoise(
                method, train, epsilon, args.delta, len(train), opts["epochs"], Path(tmp), seed
            )
        cert = certificate_from_dp(method=method, epsilon=epsilon, delta=args.delta, details=extra)
        row["seconds"] = seconds
    else:
        # a killed AIM or DP-WGAN-GP fit continues from its checkpoint (git-ignored: model state of real data)
        tag = ("_small" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
        ckpt = RESULTS / "checkpoints" / f"{ds['name']}{tag}_{method}_{epsilon}_{seed}"
        # the domain read from the training data, passed as public: the assumption of every method here
        # (mipkit synthesize would otherwise estimate it with differential privacy from 10% of epsilon)
        domain = None if method == "ctgan" else infer_domain(train)
        if method == "aim-target":  # AIM whose workload is the 3-way marginals with the target column
            opts = {**opts, "target": ds["target"]}
        cpu = time.process_time()
        res = synthesize(
            PrivateTable(train, domain),
            SynthesizeConfig(
                method="aim" if method == "aim-target" else method,
                epsilon=None if method == "ctgan" else epsilon,
                delta=args.delta,
                rows=len(train),
                random_state=seed,
                noise_seed=seed,
                params=opts,
            ),
            checkpoint=ckpt,
            progress=_round_log if args.log_rounds else None,
        )  # fmt: skip (a benchmark measures: its noise is seeded, so a cell reruns to the same table)
        row["cpu_seconds"] = time.process_time() - cpu  # this process's: fit and sample (jobs 1)
        row["domain"] = "public: read from the training data"
        synth, cert = res.synthetic, res.certificate
        row["seconds"], row["fit_seconds"] = res.seconds, res.fit_seconds
        row["resumed_from"] = res.resumed_from  # > 0: resumed; the seconds include the killed run's
        if method.startswith("aim"):
            log = cert.details["round_log"]
            row["aim"] = {
                "rounds": cert.details["rounds"], "measured": len(cert.details["measured"]),
                "halvings": sum(r["halved"] for r in log),
                "largest_clique_cells": max(r["cells"] for r in log),
            }  # fmt: skip
        if method.startswith("dpwgan"):
            keys = (
                "sensitivity",
                "critic_range",
                "penalty_radius",
                "noise_std_rms",
                "steps_run",
                "expected_batch",
            )
            row["dpwgan"] = {k: cert.details.get(k) for k in keys}
            row["noise_multiplier"] = cert.calibration.get("noise")
    row["options"] = opts
    row["utility_auc"] = utility_auc(
        synth, test, target=ds["target"], positive=ds["positive"], seed=CLASSIFIER_SEED
    )
    row["real_auc"] = real_auc
    row.update(fidelity(train, synth, seed=seed))
    row["mode_collapse_share"] = mode_collapse_share(train, synth)
    row["positive_rate"] = float((synth[ds["target"]].astype(str) == ds["positive"]).mean())
    t = time.perf_counter()
    audit = audit_synthetic(
        SyntheticRelease(train, synth, holdout=test),
        AuditSyntheticConfig(
            secrets=ds["secrets"], n_attacks=args.n_attacks, max_nnaa_rows=args.max_audit_rows,
            max_dcr_rows=args.max_audit_rows, n_bootstrap=200, random_state=seed,
        ),
    )  # fmt: skip
    row["audit_seconds"] = time.perf_counter() - t
    summ = audit.json_summary()
    row["nnaa_privacy_loss"] = summ["nnaa"]["privacy_loss"]
    row["dcr_auc"] = summ["dcr"]["auc"]
    row["dcr_tpr_at_1pct"] = (summ["dcr"]["tpr_at_fpr"] or {}).get("0.01")
    row["inference"] = {
        s: {k: v for k, v in r.items() if k in ("precision", "baseline_precision", "precision_improvement")}
        for s, r in summ["inference"].items()
    }
    row["certificate"] = {
        "certified": cert.certified, "epsilon": cert.epsilon, "eta": cert.eta, "advantage": cert.advantage,
        "tpr_at_fpr": cert.tpr_at_fpr,
    }  # fmt: skip
    row["certified_vs_measured"] = certified_audit_bounds(cert, audit)
    return row


def _violations(bounds: dict) -> int:
    """Measured values above their certified bound beyond sampling error (``significant``; cells computed
    before 2026-11-26 listed point estimates above the bound as violations, and their per-point
    ``significant`` is weaker than today's simultaneous rule, so a 0 here is 0 under both)."""
    dcr = bounds.get("dcr") or {}
    rows = [*(dcr.get("tpr_at_fpr") or {}).values(), *(bounds.get("inference") or {}).values()]
    rows += [dcr["roc"]] if dcr.get("roc") else []
    return sum(bool(r.get("significant")) for r in rows)


def markdown(rows: list[dict]) -> str:
    head = (
        "| method | eps | AUC (real) | TVD 1-way | TVD 2-way | corr. diff | collapse | NNAA loss | DCR AUC | "
        "TPR@1% (cert.) | PI per secret | violations | time s |"
    )
    lines = [head, "|" + " --- |" * 13]

    from mipkit.synthesizers.quality import ONE_CLASS

    def f(x, nd=3):
        return "n/a" if x is None else f"{x:.{nd}f}"

    for r in rows:
        label = r["method"] + (f" s{r['seed']}" if "seed" in r else "")
        if "skipped" in r or "error" in r:
            lines.append(f"| {label} | {r['epsilon']} | {r.get('skipped') or r.get('error')} |" + " |" * 11)
            continue
        cert = r["certificate"]
        tpr_cert = cert["tpr_at_fpr"].get("0.01") if cert["certified"] else None
        pis = " / ".join(f(v.get("precision_improvement"), 2) for v in r["inference"].values())
        util = ONE_CLASS if r["utility_auc"] is None else f(r["utility_auc"])
        lines.append(
            f"| {label} | {r['epsilon'] if r['epsilon'] is not None else '-'} | "
            f"{util} ({f(r['real_auc'])}) | {f(r['tvd_1way'])} | {f(r['tvd_2way'])} | "
            f"{f(r['correlation_difference'])} | {f(r['mode_collapse_share'], 2)} | "
            f"{f(r['nnaa_privacy_loss'])} | "
            f"{f(r['dcr_auc'])} | {f(r['dcr_tpr_at_1pct'])} ({f(tpr_cert)}) | {pis} | "
            f"{_violations(r['certified_vs_measured'])} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(ds: dict = ADULT, argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--epsilons", nargs="+", type=float, default=None)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--n-attacks", type=int, default=None)
    ap.add_argument("--max-audit-rows", type=int, default=None)
    ap.add_argument("--rows", type=int, default=None, help="subsample the training table")
    ap.add_argument("--tag", default="")
    ap.add_argument("--log-rounds", action="store_true", help="print each progress report (AIM: rounds)")
    ap.add_argument("--device", default="cpu", help="torch device of dpwgan-clip's networks: cpu or cuda")
    ap.add_argument(
        "--jobs", type=int, default=1,
        help="cells run side by side in this many processes (one run times every method under one load)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    eps_list = args.epsilons or ([3.0] if args.quick else [1.0, 3.0, 10.0])
    args.n_attacks = args.n_attacks or (200 if args.quick else 1000)
    args.max_audit_rows = args.max_audit_rows or (3000 if args.quick else 10_000)
    train, test = ds["load"]()
    n = args.rows or (4000 if args.quick else None)
    if n is not None and n < len(train):
        train = train.sample(n, random_state=args.seeds[0]).reset_index(drop=True)
    from mipkit.synthesizers.quality import utility_auc

    real_auc = utility_auc(train, test, target=ds["target"], positive=ds["positive"], seed=CLASSIFIER_SEED)
    print(f"{ds['name']}: train {len(train)}, test {len(test)}, real AUC {real_auc:.3f}", flush=True)
    suffix = ("_small" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
    partial = RESULTS / f"synthesizers_{ds['name']}{suffix}.partial.json"
    done = _finished_rows(partial, args)  # a killed run resumes: finished (method, epsilon, seed) cells kept
    cells = [
        (m, eps, seed)
        for m in args.methods
        for eps in ([None] if m == "ctgan" else eps_list)
        for seed in args.seeds
    ]
    rows = []
    for method, eps, seed in cells:
        if (method, eps, seed) in done:
            rows.append(done[(method, eps, seed)])
            print(f"{method} eps={eps} seed={seed}: kept from {partial.name}", flush=True)
    todo = [c for c in cells if c not in done]
    if args.jobs > 1:  # one run, cells side by side: longest first, so the workers finish together
        todo.sort(key=lambda c: -EXPECTED_SECONDS.get(c[0], 0) * (1 if c[1] is None else c[1]) ** 0.3)
    ds_args = {k: v for k, v in ds.items() if k != "load"}
    for row in _run_cells(todo, args.jobs, ds_args, args, train, test, real_auc):
        rows.append(row)
        keys = (
            "method",
            "epsilon",
            "seed",
            "utility_auc",
            "tvd_1way",
            "dcr_auc",
            "mode_collapse_share",
            "seconds",
        )
        print(json.dumps({k: row.get(k) for k in (*keys, "error", "skipped")}), flush=True)
        _save_partial(partial, args, rows, done)
    order = {c: i for i, c in enumerate(cells)}
    rows.sort(key=lambda r: order.get((r["method"], r["epsilon"], r.get("seed", 0)), len(order)))
    RESULTS.mkdir(parents=True, exist_ok=True)
    from mipkit.report.results import write_json_atomic

    meta = {"dataset": ds["name"], "train_rows": len(train), "test_rows": len(test), "real_auc": real_auc,
            "quick": args.quick, "epsilons": eps_list, "delta": args.delta, "seeds": args.seeds,
            "load_average": os.getloadavg(), "cpus": os.cpu_count(), "jobs": args.jobs,
            "data_sha256_16": _data_sha(ds), "command": " ".join(sys.argv)}  # fmt: skip
    write_json_atomic(RESULTS / f"synthesizers_{ds['name']}{suffix}.json", {"meta": meta, "rows": rows})
    (RESULTS / f"synthesizers_{ds['name']}{suffix}.md").write_text(markdown(rows))
    partial.unlink(missing_ok=True)
    print(markdown(rows))


# rough fit + sample seconds of each method on Adult at epsilon 3 (only to order the cells of a --jobs run)
EXPECTED_SECONDS = {"dpctgan": 6300, "aim": 3600, "aim-target": 3600, "ctgan": 1000, "patectgan": 800,
                    "dpwgan-gp-scaled": 250, "dpwgan-gp": 200, "dpwgan-clip": 200, "mst": 25}  # fmt: skip


def _round_log(stage: str, done: int, total: int) -> None:
    """``--log-rounds``: the time and CPU time at each progress report (AIM: each round), on stderr."""
    now = f"{time.strftime('%H:%M:%S')} cpu {time.process_time():.1f} s"
    print(f"{now} {stage} {done}/{total}", file=sys.stderr, flush=True)


def _timed_cell(
    ds: dict, method: str, eps: float | None, seed: int, args, train, test, real_auc: float
) -> dict:
    """One (method, epsilon, seed) cell; a peer that breaks is reported as an error row and the grid goes
    on."""
    t = time.perf_counter()
    try:
        row = evaluate(ds, method, eps, seed, args, train, test, real_auc)
    except Exception as err:
        row = {
            "dataset": ds["name"],
            "method": method,
            "epsilon": eps,
            "seed": seed,
            "error": f"{type(err).__name__}: {str(err)[-500:]}",  # a traceback's last lines
        }
    row["total_seconds"] = time.perf_counter() - t
    row["jobs"] = args.jobs
    return row


def _run_cells(todo: list, jobs: int, ds: dict, args, train, test, real_auc: float):
    """Yield each cell's row as it finishes: one by one (``jobs`` 1), else in ``jobs`` spawned processes."""
    if jobs <= 1:
        for m, eps, seed in todo:
            yield _timed_cell(ds, m, eps, seed, args, train, test, real_auc)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            pool.submit(_timed_cell, ds, m, eps, seed, args, train, test, real_auc) for m, eps, seed in todo
        ]
        for fut in as_completed(futures):
            yield fut.result()


def _data_sha(ds: dict) -> dict:
    """The first 16 hex digits of each data file's SHA-256 (which copy of the shared data the run used)."""
    import hashlib

    return {f: hashlib.sha256((DATA / f).read_bytes()).hexdigest()[:16] for f in ds.get("files", [])}


def _run_key(args) -> dict:
    """What must match for a finished cell of an earlier run to be reused."""
    keys = ("quick", "delta", "n_attacks", "max_audit_rows", "rows", "jobs")
    return {k: getattr(args, k) for k in keys}


def _finished_rows(partial: Path, args) -> dict:
    """The cells (method, epsilon, seed) an earlier, killed run of the same configuration finished (not
    errors)."""
    if not partial.exists():
        return {}
    saved = json.loads(partial.read_text())
    if saved.get("key") != _run_key(args):
        return {}
    return {(r["method"], r["epsilon"], r.get("seed", 0)): r for r in saved["rows"] if "error" not in r}


def _save_partial(partial: Path, args, rows: list[dict], earlier: dict) -> None:
    """Finished cells so far, and those of the earlier run this one has not reached (other order)."""
    from mipkit.report.results import write_json_atomic

    have = {(r["method"], r["epsilon"], r.get("seed", 0)) for r in rows}
    kept = [r for key, r in earlier.items() if key not in have]
    partial.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(partial, {"key": _run_key(args), "rows": rows + kept})


if __name__ == "__main__":
    main()
