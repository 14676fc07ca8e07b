"""Singling out and linkability on anonymeter's Adult CTGAN trio: mipkit against anonymeter 1.1.0.

Data (``$MIPKIT_SHARED_DATA``, default ``../shared/data``): the trio of
``benchmarks/synthetic_adult_vs_anonymeter.py`` (original = UCI Adult minus the control rows, synthetic =
``adults_syn_ctgan.csv``, control = ``adults_control.csv``).

Same inputs for both tools, anonymeter's README settings: singling out with 500 attacks, univariate and
multivariate (4 columns); linkability with 2000 targets, 10 neighbours and anonymeter's two column subsets.
mipkit runs :func:`mipkit.workflows.audit_synthetic.anonymity.singling_out` / ``linkability`` (what
``mipkit audit-synthetic --singling-out 500 --singling-out-cols 4 --linkability ... --linkability-neighbors
10 --n-attacks 2000`` runs); anonymeter runs in its own venv (``benchmarks/envs/anonymeter``), timed in a
subprocess, its linkability twice (the first call compiles numba kernels).

Each tool draws its own random predicates and targets, so the risks are compared through their intervals:
"inside" = one tool's value lies in the other's interval, "overlap" = the intervals meet. anonymeter divides
every success count by the number of attacks *asked for*; mipkit by the number of predicates *found*; the
table also gives mipkit's risk with anonymeter's denominator.

Run: ``.venv/bin/python benchmarks/singling_linkability_vs_anonymeter.py`` (about 2 minutes on 2 cores).

Without anonymeter's venv (``benchmarks/envs/anonymeter``) the anonymeter columns are those of the last
run that had it, read from the results file (``anonymeter_source`` says so), and no time ratio is given.

``--null-check``: false alarms of the two singling-out comparisons when training, control and synthetic
records are independent draws of one population: simulated tables (2,000 / 500 / 2,000 distinct rows, 200
predicates of 3 columns, ``--null-repeats`` repeats, default 200) and disjoint random splits of UCI Adult
(``adult.data``: 8,000 training / 2,000 control / 8,000 synthetic rows, 500 predicates of 4 columns per mode,
``--adult-repeats``, default 20): the share of 95% intervals that exclude 0 (Clopper-Pearson interval), for
the comparison at one size (mipkit's headline, ``equal_size``) and at the training table's size
(``training_size``: the control's success there bounded,
:func:`mipkit.metrics.singling_out.training_size_bounds`).
Saved to ``benchmarks/results/singling_out_null_check.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_adult_vs_anonymeter import ANON_PY, DATA, RESULTS, load_adult_trio

AUX = (
    ["type_employer", "education", "hr_per_week", "capital_loss", "capital_gain"],
    ["race", "sex", "fnlwgt", "age", "country"],
)

ANON_SCRIPT = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
t0 = time.perf_counter()
import pandas as pd
from anonymeter.evaluators import LinkabilityEvaluator, SinglingOutEvaluator
import anonymeter.evaluators.singling_out_evaluator as soe
t_import = time.perf_counter() - t0
fits = []  # record anonymeter's size correction (the fitted model at the two sizes), nothing else changed
_fit = soe.fit_correction_term
def _recording_fit(df, queries):
    model = _fit(df=df, queries=queries)
    fits.append(model)
    return model
soe.fit_correction_term = _recording_fit
a = json.loads(sys.argv[1])
ori = pd.read_parquet(a["ori"]); syn = pd.read_parquet(a["syn"]); ctl = pd.read_parquet(a["ctl"])
out = {"import_s": t_import}
def rates(ev):
    r = ev.results()
    return {"attack_rate": r.attack_rate.value, "attack_err": r.attack_rate.error,
            "control_rate": r.control_rate.value, "control_err": r.control_rate.error,
            "n_success": r.n_success, "n_control": float(r.n_control)}
for mode in ("univariate", "multivariate"):
    t = time.perf_counter()
    ev = SinglingOutEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=a["n_so"], n_cols=a["n_cols"],
                              seed=a["seed"]).evaluate(mode=mode)
    dt = time.perf_counter() - t
    r = ev.risk(confidence_level=0.95)
    factor = None
    if fits:
        model = fits.pop()
        factor = float(model(len(ev._ori)) / model(len(ev._control)))
    out[mode] = {"time_s": dt, "risk": r.value, "risk_ci": list(r.ci), "n_success_queries": len(ev.queries()),
                 "size_correction_factor": factor, **rates(ev)}
    print(mode, dt, file=sys.stderr, flush=True)
for rep in ("first", "warm"):
    t = time.perf_counter()
    ev = LinkabilityEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=a["n_link"], aux_cols=a["aux"],
                              n_neighbors=a["k"]).evaluate(n_jobs=2)
    dt = time.perf_counter() - t
    r = ev.risk(confidence_level=0.95)
    out["linkability_" + rep] = {"time_s": dt, "risk": r.value, "risk_ci": list(r.ci), **rates(ev)}
    print("linkability", rep, dt, file=sys.stderr, flush=True)
print(json.dumps(out))
"""


def run_anonymeter(original, syn, ctl, args, tmp: Path) -> dict | None:
    if not ANON_PY.exists():
        print(f"anonymeter venv missing at {ANON_PY}; skipping the peer", file=sys.stderr)
        return None
    tmp.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, df in (("ori", original), ("syn", syn), ("ctl", ctl)):
        df = df.copy()  # "?" as a category, as in anonymeter's example data (mipkit: a missing level)
        for c in df.columns:
            if not pd.api.types.is_numeric_dtype(df[c]):
                df[c] = df[c].astype(object).where(df[c].notna(), "?")
        paths[name] = str(tmp / f"{name}.parquet")
        df.to_parquet(paths[name], index=False)
    arg = {**paths, "n_so": args.n_predicates, "n_cols": args.n_cols, "n_link": args.n_link,
           "k": args.neighbors, "aux": [list(AUX[0]), list(AUX[1])], "seed": args.seed}  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.run(
        [str(ANON_PY), "-c", ANON_SCRIPT, json.dumps(arg)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = time.perf_counter() - t
    return out


def _excludes_0(r) -> dict:
    """Whether each comparison's 95% interval excludes 0."""
    cis = {"equal_size": r.risk["ci"], "training_size": r.training_size["risk"]["ci"]}
    return {key: not ci[0] <= 0.0 <= ci[1] for key, ci in cis.items()}


def _adult_null(repeats: int, seed: int) -> dict:
    """Disjoint random Adult splits (training, control, synthetic): false alarms per mode and comparison."""
    import numpy as np

    from mipkit.data.tables import check_tables
    from mipkit.workflows.audit_synthetic.anonymity import singling_out

    cols = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
            "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "country",
            "income"]  # fmt: skip
    df = pd.read_csv(DATA / "adult" / "adult.data", header=None, names=cols, skipinitialspace=True,
                     na_values=["?"])  # fmt: skip
    counts = {f"{m}/{k}": 0 for m in ("univariate", "multivariate") for k in ("equal_size", "training_size")}
    for rep in range(repeats):
        perm = np.random.default_rng([seed, rep]).permutation(len(df))
        train, ctl, syn = (df.iloc[perm[a:b]].reset_index(drop=True)
                           for a, b in ((0, 8000), (8000, 10000), (10000, 18000)))  # fmt: skip
        schema = check_tables(train, {"synthetic": syn, "control": ctl})
        res = singling_out(train, syn, schema=schema, control=ctl, n_predicates=500, n_cols=4,
                           random_state=rep)  # fmt: skip
        for mode, r in res.items():
            for key, hit in _excludes_0(r).items():
                counts[f"{mode}/{key}"] += hit
        print(f"adult null {rep}: {counts}", flush=True)
    return counts


def null_check(repeats: int = 200, adult_repeats: int = 20, seed: int = 11) -> dict:
    """See the module docstring (``--null-check``)."""
    import numpy as np

    from mipkit.attacks.singling_out import PredicateIndex, SinglingOutCounts, singling_out_predicates
    from mipkit.metrics.singling_out import measure_singling_out
    from mipkit.stats import clopper_pearson

    rng = np.random.default_rng(seed)

    def table(n: int) -> np.ndarray:  # two numeric and two coded categorical columns, distinct rows
        v = np.column_stack([rng.integers(18, 40, n), rng.normal(0, 1, n).round(1), rng.integers(0, 8, n),
                             rng.integers(0, 2, n)]).astype(float)  # fmt: skip
        return pd.DataFrame(v).drop_duplicates().to_numpy()

    excluded = {"equal_size": 0, "training_size": 0}
    t = time.perf_counter()
    for rep in range(repeats):
        members, control, syn = table(2000), table(500), table(2000)
        preds, attempts = singling_out_predicates(syn, 2, n_predicates=200, n_cols=3, random_state=rep)
        m_counts, c_counts = PredicateIndex(members).count(preds), PredicateIndex(control).count(preds)
        counts = SinglingOutCounts("multivariate", 200, 3, preds, attempts, m_counts, c_counts, len(members),
                                   len(control), len(syn))  # fmt: skip
        for key, hit in _excludes_0(measure_singling_out(counts)).items():
            excluded[key] += hit
    out = {"repeats": repeats, "seconds": time.perf_counter() - t, "load_avg_end": os.getloadavg()[0]}
    for key, k in excluded.items():
        out[key] = {"excluding_0": k, "share": k / repeats, "share_ci": list(clopper_pearson(k, repeats))}
        print(f"{key}: {k}/{repeats} 95% intervals exclude 0 under the null", flush=True)
    t = time.perf_counter()
    adult = _adult_null(adult_repeats, seed)

    def cp(k: int) -> list:
        return list(clopper_pearson(k, adult_repeats))

    shares = {
        key: {"excluding_0": k, "share": k / adult_repeats, "share_ci": cp(k)} for key, k in adult.items()
    }
    out["adult"] = {"repeats": adult_repeats, "seconds": time.perf_counter() - t, "sizes": [8000, 2000, 8000],
                    **shares}  # fmt: skip
    return out


def _last_anonymeter() -> dict | None:
    """anonymeter's figures of the last run that had its venv, from the results file (None without one)."""
    path = RESULTS / "singling_linkability_vs_anonymeter.json"
    if not path.exists():
        return None
    d = json.loads(path.read_text())
    keys = {"univariate": "univariate", "multivariate": "multivariate", "linkability": "linkability_first"}
    anon = {keys[r["attack"]]: r["anonymeter"] for r in d["rows"] if r["attack"] in keys and r["anonymeter"]}
    for r in d["rows"]:  # the warm linkability call's time, from its ratio to mipkit's
        if r["attack"] == "linkability" and r.get("ratio_warm"):
            anon["linkability_warm"] = {"time_s": r["ratio_warm"] * r["mipkit"]["time_s"]}
    anon["import_s"] = d["summary"].get("anonymeter_import_s", float("nan"))
    return anon or None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-predicates", type=int, default=500)
    ap.add_argument("--n-cols", type=int, default=4)
    ap.add_argument("--n-link", type=int, default=2000)
    ap.add_argument("--neighbors", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-anonymeter", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="mipkit seeds (spread of its own estimates)")
    ap.add_argument("--null-check", action="store_true", help="false alarms of the two comparisons")
    ap.add_argument("--null-repeats", type=int, default=200)
    ap.add_argument("--adult-repeats", type=int, default=20)
    args = ap.parse_args()
    if args.null_check:
        from mipkit.report.results import write_json_atomic

        out = null_check(args.null_repeats, args.adult_repeats)
        write_json_atomic(RESULTS / "singling_out_null_check.json", out)
        return

    from mipkit.data.tables import check_tables
    from mipkit.report.results import write_json_atomic
    from mipkit.workflows.audit_synthetic.anonymity import linkability, singling_out

    original, syn, ctl = load_adult_trio()
    print(f"original {len(original)}, synthetic {len(syn)}, control {len(ctl)} rows", flush=True)
    load0 = os.getloadavg()[0]
    ours: dict = {}
    t_all = time.perf_counter()
    schema = check_tables(original, {"synthetic": syn, "control": ctl})
    t_schema = time.perf_counter() - t_all
    for i, mode in enumerate(("univariate", "multivariate")):
        t = time.perf_counter()
        r = singling_out(original, syn, schema=schema, control=ctl, n_predicates=args.n_predicates,
                         n_cols=args.n_cols, modes=(mode,), random_state=args.seed + i)[mode]  # fmt: skip
        dt = time.perf_counter() - t
        d = r.to_dict()
        ours[mode] = {"time_s": dt, **d}
        print(f"mipkit {mode}: {ours[mode]['time_s']:.2f} s, risk {d['risk']['value']:.3f}", flush=True)
    t = time.perf_counter()
    lk = linkability(original, syn, schema=schema, aux_cols=AUX, control=ctl, n_attacks=args.n_link,
                     n_neighbors=args.neighbors, random_state=args.seed)  # fmt: skip
    ours["linkability"] = {"time_s": time.perf_counter() - t, **lk.to_dict()}
    print(f"mipkit linkability: {ours['linkability']['time_s']:.2f} s", flush=True)
    t_ours = time.perf_counter() - t_all
    spread: dict = {"univariate": [], "multivariate": [], "linkability": []}
    for rep in range(1, args.repeats):  # untimed: how much mipkit's own estimate moves with its draw
        so = singling_out(original, syn, schema=schema, control=ctl, n_predicates=args.n_predicates,
                          n_cols=args.n_cols, random_state=1000 * rep)  # fmt: skip
        for mode, r in so.items():
            spread[mode].append([r.risk["value"], r.training_size["risk"]["bounds"]])
        lk_r = linkability(original, syn, schema=schema, aux_cols=AUX, control=ctl, n_attacks=args.n_link,
                           n_neighbors=args.neighbors, random_state=1000 * rep)  # fmt: skip
        spread["linkability"].append(lk_r.risk()["value"])
    for name in spread:
        ours[name]["risk_other_seeds"] = spread[name]

    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="mipkit_anon_so_"))  # copies of the trio for anonymeter, removed after
    anon = None if args.skip_anonymeter else run_anonymeter(original, syn, ctl, args, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    anon_source = "this run"
    if anon is None and not args.skip_anonymeter:
        anon, anon_source = _last_anonymeter(), "the last run with anonymeter's venv (same inputs, settings)"
    rows = []
    print("\n| attack | mipkit risk [95% CI] | anonymeter risk [95% CI] | mipkit inside | anonymeter inside "
          "| overlap | mipkit s | anonymeter s | ratio |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, key, which in (("univariate", "univariate", "headline"),
                             ("univariate", "univariate", "training_size"),
                             ("multivariate", "multivariate", "headline"),
                             ("multivariate", "multivariate", "training_size"),
                             ("linkability", "linkability_first", "headline")):  # fmt: skip
        m = ours[name]
        risk = m["risk"] if which == "headline" else m["training_size"]["risk"]
        lowest, highest = risk["bounds"] if which == "training_size" else (risk["value"], risk["value"])
        a = (anon or {}).get(key)
        label = name if which == "headline" else f"{name} (at the training size, control bounded)"
        row = {"attack": label, "mipkit_risk": risk, "mipkit": m, "anonymeter": a}
        if a:
            lo, hi = a["risk_ci"]
            clip = [min(max(v, 0.0), 1.0) for v in (lowest, highest)]  # anonymeter clips its risk at 0
            row.update(
                mipkit_inside=bool(clip[0] <= hi and lo <= clip[1]),  # the range meets its interval
                anonymeter_inside=bool(risk["ci"][0] <= a["risk"] <= risk["ci"][1]),
                overlap=bool(risk["ci"][0] <= hi and lo <= risk["ci"][1]),
            )
            if anon_source == "this run":  # times compare only when both ran back to back
                row["ratio"] = a["time_s"] / m["time_s"]
            if name == "linkability" and "ratio" in row:
                row["ratio_warm"] = anon["linkability_warm"]["time_s"] / m["time_s"]
        rows.append(row)
        a_txt = f"{a['risk']:.3f} [{a['risk_ci'][0]:.3f}, {a['risk_ci'][1]:.3f}]" if a else "n/a"
        value = f"{lowest:.3f}" if lowest == highest else f"{lowest:.3f} to {highest:.3f}"
        print(f"| {label} | {value} [{risk['ci'][0]:.3f}, {risk['ci'][1]:.3f}] | {a_txt} | "
              f"{row.get('mipkit_inside')} | {row.get('anonymeter_inside')} | {row.get('overlap')} | "
              f"{m['time_s']:.1f} | {a['time_s'] if a else float('nan'):.1f} | "
              f"{row.get('ratio', float('nan')):.1f}x |")  # fmt: skip
    summary = {"mipkit_total_s": t_ours, "mipkit_schema_s": t_schema, "load_avg_start": load0,
               "load_avg_end": os.getloadavg()[0], "settings": vars(args), "aux_cols": AUX,
               "anonymeter_source": anon_source if anon else None}  # fmt: skip
    if anon and anon_source == "this run":
        a_total = sum(anon[k]["time_s"] for k in ("univariate", "multivariate", "linkability_first"))
        summary.update(anonymeter_total_s=a_total, anonymeter_import_s=anon["import_s"],
                       ratio_total=a_total / t_ours)  # fmt: skip
        print(f"\ntotal: mipkit {t_ours:.1f} s (schema included), anonymeter {a_total:.1f} s "
              f"(+ import {anon['import_s']:.1f} s) -> {a_total / t_ours:.1f}x; anonymeter's warm "
              f"linkability {anon['linkability_warm']['time_s']:.1f} s")  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json_atomic(RESULTS / "singling_linkability_vs_anonymeter.json", {"summary": summary, "rows": rows})


if __name__ == "__main__":
    main()
