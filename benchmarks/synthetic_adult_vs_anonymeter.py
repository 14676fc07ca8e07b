"""Audit anonymeter's Adult CTGAN example with mipkit, and compare attribute inference with anonymeter.

Data (``$MIPKIT_SHARED_DATA``, default ``../shared/data``):
  original = UCI Adult ``adult.data`` + ``adult.test`` minus the control rows (a multiset difference:
  each control row removes ONE identical Adult row, so duplicated people stay in the original as often as
  they were left in training); synthetic = ``adults_syn_ctgan.csv``; control = ``adults_control.csv``.

mipkit: NNAA privacy loss (train = original, test = control), DCR attack, attribute inference of income, sex
and marital status (all other columns known) against the non-member baseline and against the control set.

anonymeter (peer, its own venv; set up once with
``python3 -m venv benchmarks/envs/anonymeter && benchmarks/envs/anonymeter/bin/pip install anonymeter``):
``InferenceEvaluator(ori, syn, control, aux_cols=others, secret, n_attacks).evaluate(n_jobs=2)`` on the same
columns, timed in a subprocess (its numba JIT compilation included, as a user meets it, and a second
evaluation without it). The two tools draw different random targets, so risks are compared through
anonymeter's interval.

Run: ``.venv/bin/python benchmarks/synthetic_adult_vs_anonymeter.py [--n-attacks 2000]``

``--cli-compare``: the attribute-inference step through the command line against the library and anonymeter,
back to back on the same files (CSV written from the trio): ``mipkit audit-synthetic --checks inference`` in a
subprocess (start-up, reading, inference, writing the run folder and report included), the same call through
``audit_synthetic`` + ``write`` in a fresh Python process (start-up and reading included), and anonymeter;
once with anonymeter's amount of work (``--attacks nearest --no-non-member-baseline``) and once with the
default attacks (nearest neighbour and model, each against its non-member baseline). Two ratios against the
command with anonymeter's amount of work: anonymeter's ``evaluate()`` calls alone (its imports, reading and
start-up left out, a comparison that favours it), and anonymeter's whole process for one round of the three
secrets (start-up, imports, reading and attacks, as the command's own time counts them). Each command's
time is the median of ``--repeats`` runs (default 3; all runs are in the JSON); so is anonymeter's (each of
its processes evaluates every secret twice, first and warm; the ratios use the median of each figure over its
runs). ``--tag T`` writes ``synthetic_adult_cli_vs_api_T.json`` (a run on another machine or under load keeps
its own file).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"
ANON_PY = ROOT / "benchmarks" / "envs" / "anonymeter" / "bin" / "python"
COLUMNS = [
    "age", "type_employer", "fnlwgt", "education", "education_num", "marital", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hr_per_week", "country", "income",
]  # fmt: skip
SECRETS = ["income", "sex", "marital"]


def load_adult_trio(keep_question_marks: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(original, synthetic, control). ``?`` is missing (NaN) unless ``keep_question_marks``."""
    na = [] if keep_question_marks else ["?"]
    kw = {"skipinitialspace": True, "na_values": na, "keep_default_na": False}
    a = pd.read_csv(DATA / "adult" / "adult.data", header=None, names=COLUMNS, **kw)
    b = pd.read_csv(DATA / "adult" / "adult.test", header=None, names=COLUMNS, skiprows=1, **kw)
    b["income"] = b["income"].str.rstrip(".")
    adult = pd.concat([a, b], ignore_index=True).dropna(how="all")
    syn = pd.read_csv(DATA / "adult_synthetic" / "adults_syn_ctgan.csv", **kw)
    ctl = pd.read_csv(DATA / "adult_synthetic" / "adults_control.csv", **kw)
    # multiset difference adult - control on all columns (as text, missing included)
    key = lambda df: df[COLUMNS].astype(object).fillna("?").astype(str).agg("|".join, axis=1)  # noqa: E731
    ka, kc = key(adult), key(ctl)
    occ_a = ka.groupby(ka).cumcount()
    need = kc.value_counts()
    drop = occ_a < ka.map(need).fillna(0).astype(int)
    original = adult.loc[~drop].reset_index(drop=True)
    unmatched = int(need.sum() - drop.sum())
    if unmatched:
        print(f"warning: {unmatched} control rows not found in UCI Adult", file=sys.stderr)
    for df in (original, syn, ctl):
        for c in ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hr_per_week"):
            df[c] = pd.to_numeric(df[c])
    return original, syn, ctl


ANON_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator
t_import = time.perf_counter() - t0
args = json.loads(sys.argv[1])
ori = pd.read_parquet(args["ori"]); syn = pd.read_parquet(args["syn"]); ctl = pd.read_parquet(args["ctl"])
out = {"import_s": t_import, "secrets": {}}
for rep in range(2):
    for secret in args["secrets"]:
        aux = [c for c in ori.columns if c != secret]
        t = time.perf_counter()
        ev = InferenceEvaluator(
            ori=ori, syn=syn, control=ctl, aux_cols=aux, secret=secret, n_attacks=args["n"]
        )
        ev.evaluate(n_jobs=2)
        dt = time.perf_counter() - t
        r = ev.risk(confidence_level=0.95)
        res = ev.results()
        key = "first" if rep == 0 else "second"
        out["secrets"].setdefault(secret, {})[key + "_s"] = dt
        if rep == 0:
            out["secrets"][secret].update({
                "risk": float(r.value), "risk_ci": [float(x) for x in r.ci],
                "attack_rate": float(res.attack_rate.value), "control_rate": float(res.control_rate.value),
                "baseline_rate": float(res.baseline_rate.value),
            })
out["total_s"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def run_anonymeter(original, syn, ctl, n_attacks: int, tmp: Path) -> dict | None:
    if not ANON_PY.exists():
        print(f"anonymeter venv missing at {ANON_PY}; skipping the peer", file=sys.stderr)
        return None
    tmp.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, df in (("ori", original), ("syn", syn), ("ctl", ctl)):
        # anonymeter's own example data keeps "?" as a category: the same distance as mipkit's missing level
        df = df.copy()
        for c in df.columns:
            if not pd.api.types.is_numeric_dtype(df[c]):
                df[c] = df[c].astype(object).where(df[c].notna(), "?")
        paths[name] = str(tmp / f"{name}.parquet")
        df.to_parquet(paths[name], index=False)
    arg = json.dumps({**paths, "n": n_attacks, "secrets": SECRETS})
    t = time.perf_counter()
    proc = subprocess.run([str(ANON_PY), "-c", ANON_SCRIPT, arg], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = wall
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-attacks", type=int, default=2000)
    ap.add_argument("--max-nnaa-rows", type=int, default=9758)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-anonymeter", action="store_true")
    ap.add_argument("--inference-only", action="store_true", help="only the timed comparison with anonymeter")
    ap.add_argument("--cli-compare", action="store_true", help="CLI vs library vs anonymeter, inference step")
    ap.add_argument("--repeats", type=int, default=3, help="--cli-compare: runs of each command (median)")
    ap.add_argument("--tag", default="", help="--cli-compare: suffix of the result file")
    args = ap.parse_args()

    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
    from mipkit.workflows.audit_synthetic.measure import attribute_inference

    original, syn, ctl = load_adult_trio()
    print(f"original {len(original)}, synthetic {len(syn)}, control {len(ctl)} rows")

    # --- full mipkit audit (NNAA, DCR, inference with the non-member baseline) -----------------------
    if args.cli_compare:
        return cli_compare(args, original, syn, ctl)
    if args.inference_only:
        return compare_inference(args, original, syn, ctl)
    t = time.perf_counter()
    res = audit_synthetic(
        SyntheticRelease(original, syn, control=ctl),
        AuditSyntheticConfig(
            secrets=SECRETS,
            n_attacks=args.n_attacks,
            max_nnaa_rows=args.max_nnaa_rows,
            random_state=args.seed,
        ),
    )
    t_full = time.perf_counter() - t
    res = res.to_dict()

    # --- the anonymeter-equivalent attack alone (nearest neighbour, control risk), timed -----
    from mipkit.data.tables import check_tables

    t = time.perf_counter()
    schema = check_tables(original, {"synthetic": syn, "control": ctl})
    ours = {}
    for i, s in enumerate(SECRETS):
        t1 = time.perf_counter()
        r = attribute_inference(
            original,
            syn,
            secret=s,
            schema=schema,
            control=ctl,
            n_attacks=args.n_attacks,
            attacks=("nearest",),
            random_state=args.seed + 100 + i,
            non_member_baseline=False,  # the work anonymeter does: attack + control attack
        )
        ours[s] = {"risk": r.control["risk"], "time_s": time.perf_counter() - t1}
    t_ours = time.perf_counter() - t

    anon = (
        None
        if args.skip_anonymeter
        else run_anonymeter(original, syn, ctl, args.n_attacks, ROOT / "runs" / "_anon_tmp")
    )

    nn, dcr = res["nnaa"], res["dcr"]
    print("\nmipkit audit of the Adult CTGAN trio (mixed distance)")
    print(f"  NNAA train {nn['train']:.4f}  test {nn['test']:.4f}  privacy loss {nn['privacy_loss']:.4f} "
          f"CI {np.round(nn['intervals']['privacy_loss_ci'], 4).tolist()}  (n = {nn['n']})")  # fmt: skip
    print(f"  DCR attack AUC {dcr['auc']:.4f}  TPR@FPR {dcr['tpr_at_fpr']}  "
          f"baseline protection {dcr['baseline_protection']['score']:.3f}  "
          f"overfitting protection {dcr['overfitting_protection']['score']:.3f}")  # fmt: skip
    print(f"  exact copies: training {dcr['protection']['exact_match_share']:.4f}  "
          f"control {dcr['protection']['holdout_exact_match_share']:.4f}")  # fmt: skip
    print(f"  full audit time {t_full:.1f} s  ({res['timings_s']})")
    print(
        "\n| secret | precision | baseline (non-member) | PI | mipkit control risk [CI] "
        "| anonymeter risk [CI] |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for s in SECRETS:
        r = res["inference"][s]
        rk = ours[s]["risk"]
        a = (anon or {}).get("secrets", {}).get(s)
        a_txt = f"{a['risk']:.3f} [{a['risk_ci'][0]:.3f}, {a['risk_ci'][1]:.3f}]" if a else "n/a"
        inside = bool(a and a["risk_ci"][0] <= rk["value"] <= a["risk_ci"][1])
        print(f"| {s} | {r['precision']:.3f} | {r['baseline_precision']:.3f} ({r['baseline']}) | "
              f"{r['precision_improvement']:.3f} | {rk['value']:.3f} "
              f"[{rk['ci'][0]:.3f}, {rk['ci'][1]:.3f}] | {a_txt} |")  # fmt: skip
        rows.append({"secret": s, "mipkit": r | {"curve": None}, "mipkit_control_risk": rk,
                     "anonymeter": a, "mipkit_risk_inside_anonymeter_ci": inside,
                     "mipkit_time_s": ours[s]["time_s"]})  # fmt: skip
    summary = {"n_attacks": args.n_attacks, "mipkit_inference_s": t_ours, "mipkit_full_audit_s": t_full}
    if anon:
        first = sum(v["first_s"] for v in anon["secrets"].values())
        second = sum(v["second_s"] for v in anon["secrets"].values())
        summary.update(
            anonymeter_first_s=first,
            anonymeter_second_s=second,
            anonymeter_import_s=anon["import_s"],
            ratio_first=first / t_ours,
            ratio_second=second / t_ours,
        )
        print(f"\nattribute inference, 3 secrets x {args.n_attacks} attacks (+ control):")
        print(f"  mipkit {t_ours:.2f} s | anonymeter {first:.2f} s first call (JIT), {second:.2f} s warm "
              f"(+ import {anon['import_s']:.1f} s) -> {first / t_ours:.1f}x / "
              f"{second / t_ours:.1f}x")  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    from mipkit.report.results import write_json_atomic

    write_json_atomic(
        RESULTS / "synthetic_adult_vs_anonymeter.json",
        {"summary": summary, "nnaa": nn, "dcr": dcr, "inference": rows, "timings_s": res["timings_s"]},
    )


def compare_inference(args, original, syn, ctl) -> None:
    """Only the timed attribute-inference comparison (mipkit first, then anonymeter, back to back)."""
    from mipkit.data.tables import check_tables
    from mipkit.report.results import write_json_atomic
    from mipkit.workflows.audit_synthetic.measure import attribute_inference

    load0 = os.getloadavg()[0]

    def ours_run(non_member_baseline: bool) -> tuple[dict, float]:
        t = time.perf_counter()
        schema = check_tables(original, {"synthetic": syn, "control": ctl})
        risks = {}
        for i, s in enumerate(SECRETS):
            r = attribute_inference(
                original, syn, secret=s, schema=schema, control=ctl, n_attacks=args.n_attacks,
                attacks=("nearest",), random_state=args.seed + 100 + i,
                non_member_baseline=non_member_baseline,
            )  # fmt: skip
            risks[s] = r.control["risk"]
        return risks, time.perf_counter() - t

    # timed: the same work as anonymeter's InferenceEvaluator (NN attack on n_attacks targets + control)
    ours, t_ours = ours_run(False)
    anon = run_anonymeter(original, syn, ctl, args.n_attacks, ROOT / "runs" / "_anon_tmp")
    # extra, reported separately: the same call with mipkit's non-member baseline (one more NN search)
    _, t_ours_baseline = ours_run(True)
    print(f"mipkit with the non-member baseline as well (extra analysis): {t_ours_baseline:.2f} s")
    first = sum(v["first_s"] for v in anon["secrets"].values())
    second = sum(v["second_s"] for v in anon["secrets"].values())
    print(f"load average at start {load0:.1f}, at end {os.getloadavg()[0]:.1f}")
    print(f"3 secrets x {args.n_attacks} attacks + control: mipkit {t_ours:.2f} s; anonymeter {first:.2f} s "
          f"(first, with numba JIT), {second:.2f} s (warm), import {anon['import_s']:.1f} s; "
          f"ratio {first / t_ours:.1f}x / {second / t_ours:.1f}x")  # fmt: skip
    # anonymeter clips its risk and interval to [0, 1]; mipkit reports the unclipped value, so "inside"
    # is also given for mipkit's value clipped the same way
    print("| secret | mipkit risk [CI] | anonymeter risk [CI] | mipkit inside | inside (clipped at 0) "
          "| intervals overlap |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for s in SECRETS:
        m, a = ours[s], anon["secrets"][s]
        inside = a["risk_ci"][0] <= m["value"] <= a["risk_ci"][1]
        inside_clipped = a["risk_ci"][0] <= min(max(m["value"], 0.0), 1.0) <= a["risk_ci"][1]
        overlap = m["ci"][0] <= a["risk_ci"][1] and a["risk_ci"][0] <= m["ci"][1]
        print(f"| {s} | {m['value']:.3f} [{m['ci'][0]:.3f}, {m['ci'][1]:.3f}] | {a['risk']:.3f} "
              f"[{a['risk_ci'][0]:.3f}, {a['risk_ci'][1]:.3f}] | {inside} | {inside_clipped} "
              f"| {overlap} |")  # fmt: skip
        rows.append({"secret": s, "mipkit": m, "anonymeter": a, "inside": inside,
                     "inside_clipped_at_0": inside_clipped, "overlap": overlap})  # fmt: skip
    write_json_atomic(
        RESULTS / "synthetic_adult_vs_anonymeter_inference.json",
        {"n_attacks": args.n_attacks, "mipkit_s": t_ours,
         "mipkit_with_non_member_baseline_s": t_ours_baseline,
         "ratio_first": first / t_ours, "ratio_second": second / t_ours,
         "load_avg_end": os.getloadavg()[0], "anonymeter_first_s": first,
         "anonymeter_second_s": second, "anonymeter_import_s": anon["import_s"], "rows": rows,
         "load_avg_start": load0},
    )  # fmt: skip


LIB_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
from mipkit.data.io import read_table
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
a = json.loads(sys.argv[1])
t1 = time.perf_counter()
tables = {k: read_table(v) for k, v in a["files"].items()}
res = audit_synthetic(SyntheticRelease(tables["original"], tables["synthetic"], control=tables["control"]),
                      AuditSyntheticConfig(secrets=a["secrets"], n_attacks=a["n"], checks=("inference",),
                                           attacks=tuple(a["attacks"]), non_member_baseline=a["baseline"],
                                           random_state=a["seed"]))
res.write(a["out"], report=a["report"])
print(json.dumps({"inference_s": res.timings_s["inference"], "in_process_s": time.perf_counter() - t1,
                  "imports_s": t1 - t0}))
"""


def _cpu_name() -> str | None:
    """The processor's model name (Linux), to tell which machine a timing came from."""
    info = Path("/proc/cpuinfo")
    if not info.exists():
        return None
    lines = info.read_text().splitlines()
    names = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")]
    return f"{names[0]} x {len(names)}" if names else None


def cli_compare(args, original, syn, ctl) -> None:
    """The inference step through the CLI, the library and anonymeter (see the module docstring)."""
    import shutil
    import tempfile

    from mipkit.report.results import write_json_atomic

    tmp = Path(tempfile.mkdtemp(prefix="mipkit_adult_cli_"))
    # mipkit's byte code as an installed package has it (``make`` compiles it; an edit since would otherwise
    # be recompiled on every run where PYTHONDONTWRITEBYTECODE is set, as on this benchmark's machine)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "mipkit")], check=True)
    files = {}
    for name, df in (("original", original), ("synthetic", syn), ("control", ctl)):
        files[name] = tmp / f"{name}.csv"
        df.to_csv(files[name], index=False)
    mipkit_exe = Path(sys.executable).parent / "mipkit"
    out: dict = {"n_attacks": args.n_attacks, "repeats": args.repeats, "runs": {},
                 "uptime_start": os.popen("uptime").read().strip()}  # fmt: skip
    configs = {
        "anonymeter_work": (("nearest",), False, True),
        "anonymeter_work_no_report": (("nearest",), False, False),  # numbers only, as anonymeter gives
        "default_attacks": (("nearest", "model"), True, True),
    }
    for label, (attacks, baseline, report) in configs.items():
        flags = ["--attacks", ",".join(attacks)] + ([] if baseline else ["--no-non-member-baseline"])
        flags += [] if report else ["--no-report"]
        argv = [str(mipkit_exe), "audit-synthetic", "--original", str(files["original"]), "--synthetic",
                str(files["synthetic"]), "--control", str(files["control"]), "--checks", "inference",
                "--n-attacks", str(args.n_attacks), "--seed", str(args.seed),
                "--out", str(tmp / f"cli_{label}"), "--json", *flags,
                *[x for s in SECRETS for x in ("--secret", s)]]  # fmt: skip
        walls = []
        for _ in range(args.repeats):  # the median of a few runs: one run's time moves ~20% on this machine
            shutil.rmtree(tmp / f"cli_{label}", ignore_errors=True)
            t = time.perf_counter()
            p = subprocess.run(argv, capture_output=True, text=True, check=False)
            walls.append(time.perf_counter() - t)
            if p.returncode != 0:
                print(p.stderr[-2000:], file=sys.stderr)
                raise SystemExit(1)
        t_cli = float(np.median(walls))
        cli_res = json.loads((tmp / f"cli_{label}" / "results.json").read_text())
        # the library in a fresh process too: both sides pay Python's start-up and the imports
        lib_arg = json.dumps({"files": {k: str(v) for k, v in files.items()},
                              "out": str(tmp / f"api_{label}"), "secrets": SECRETS, "n": args.n_attacks,
                              "attacks": list(attacks), "baseline": baseline, "seed": args.seed,
                              "report": report})  # fmt: skip
        t = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-c", LIB_SCRIPT, lib_arg], capture_output=True, text=True, check=False
        )
        t_api = time.perf_counter() - t
        if p.returncode != 0:
            print(p.stderr[-2000:], file=sys.stderr)
            raise SystemExit(1)
        lib = json.loads(p.stdout.strip().splitlines()[-1])
        api_res = json.loads((tmp / f"api_{label}" / "results.json").read_text())
        same = api_res["inference"] == cli_res["inference"]
        out["runs"][label] = {
            "attacks": list(attacks), "non_member_baseline": baseline, "report": report, "cli_wall_s": t_cli,
            "cli_inference_step_s": cli_res["timings_s"]["inference"], "api_wall_s": t_api,
            "cli_wall_s_runs": walls,
            "api_inference_step_s": lib["inference_s"], "api_in_process_s": lib["in_process_s"],
            "same_results": same,
            "cli_over_api": t_cli / t_api,
        }  # fmt: skip
        r = out["runs"][label]
        print(f"{label}: CLI {t_cli:.1f} s (inference step {r['cli_inference_step_s']:.1f} s) | library "
              f"{t_api:.1f} s (step {r['api_inference_step_s']:.1f} s) | CLI/library {t_cli / t_api:.2f}x | "
              f"identical results: {same}", flush=True)  # fmt: skip
    anon_runs = []
    for _ in range(args.repeats):
        a = run_anonymeter(original, syn, ctl, args.n_attacks, tmp / "anon")
        if a is None:
            break
        a["first_s"] = sum(v["first_s"] for v in a["secrets"].values())
        a["second_s"] = sum(v["second_s"] for v in a["secrets"].values())
        # one round of the process: start-up, imports, reading, the attacks (the warm round taken off)
        a["process_once_s"] = a["process_wall_s"] - a["second_s"]
        anon_runs.append(a)
    if anon_runs:
        med = {k: float(np.median([a[k] for a in anon_runs]))
               for k in ("first_s", "second_s", "import_s", "process_wall_s", "process_once_s")}  # fmt: skip
        first, second, once = med["first_s"], med["second_s"], med["process_once_s"]
        cli = out["runs"]["anonymeter_work"]["cli_wall_s"]
        out["anonymeter"] = {
            **med, "secrets": anon_runs[0]["secrets"],
            "runs": [{k: a[k] for k in med} for a in anon_runs],
        }  # fmt: skip
        out["anonymeter_first_over_cli"] = first / cli
        out["anonymeter_second_over_cli"] = second / cli
        # like for like: each tool's whole process once (start-up, imports, reading, the attacks)
        bare = out["runs"]["anonymeter_work_no_report"]["cli_wall_s"]
        out["anonymeter_process_over_cli"] = once / cli
        out["anonymeter_process_over_cli_no_report"] = once / bare
        print(f"anonymeter (median of {len(anon_runs)} processes): {first:.1f} s first call, "
              f"{second:.1f} s warm (+ import {med['import_s']:.1f} s; "
              f"whole process, one round {once:.1f} s); "
              f"anonymeter / mipkit CLI (whole command, same attacks): evaluate() calls only "
              f"{first / cli:.1f}x / {second / cli:.1f}x, whole process {once / cli:.1f}x "
              f"({once / bare:.1f}x against the command with --no-report: numbers only, as anonymeter)"
              )  # fmt: skip
    out["uptime_end"] = os.popen("uptime").read().strip()
    out["cpu"] = _cpu_name()
    name = f"synthetic_adult_cli_vs_api_{args.tag}.json" if args.tag else "synthetic_adult_cli_vs_api.json"
    write_json_atomic(RESULTS / name, out)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
