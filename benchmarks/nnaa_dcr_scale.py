"""Scale of the exact neighbour search: NNAA + DCR on large tables, and SDMetrics' DCRBaselineProtection.

1. Numeric: train, test, synthetic (two halves' worth) of ``--n`` rows x 20 numeric columns (correlated
   Gaussian, rank-5 structure + noise), Euclidean distance: unbiased NNAA on (train, synthetic) and the DCR
   of ``n`` training and ``n`` holdout records (the training records' DCR is NNAA's nearest train ->
   synthetic distance, computed once); time and peak RSS.
2. Mixed: ``--n-mixed`` rows x (6 numeric + 8 categorical with 2-40 levels, 5% missing), mixed distance.
3. CLI vs API (``--cli-rows``, default 100,000): ``mipkit audit-synthetic`` with its defaults on original /
   synthetic / holdout CSV files of ``--cli-rows`` mixed rows, against ``audit_synthetic`` +
   ``AuditSyntheticResult.write`` on the same files read by ``pandas.read_csv``, each in its own process
   (wall time and the process's peak RSS), back to back.
4. Peer: SDMetrics ``DCRBaselineProtection.compute`` on a 10k-row mixed table (its own venv,
   ``python3 -m venv benchmarks/envs/sdmetrics && benchmarks/envs/sdmetrics/bin/pip install sdmetrics``),
   capped at ``--peer-timeout`` seconds, next to mipkit's :func:`dcr_baseline_protection` on the same table.

Run: ``.venv/bin/python benchmarks/nnaa_dcr_scale.py --n 100000 --n-mixed 50000``
(the machine is shared: timings include other users' load, reported as the 1-minute load average).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SDM_PY = ROOT / "benchmarks" / "envs" / "sdmetrics" / "bin" / "python"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def numeric_tables(n: int, rng: np.random.Generator) -> list[np.ndarray]:
    mix = rng.normal(size=(5, 20))

    def draw(m: int) -> np.ndarray:
        return rng.normal(size=(m, 5)) @ mix + 0.5 * rng.normal(size=(m, 20))

    return [draw(n) for _ in range(3)]


def mixed_table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    cols = {f"x{j}": rng.gamma(2.0, 10.0, n).round(1) for j in range(6)}
    probs = np.random.default_rng(123)  # the same category frequencies in every table
    for j, k in enumerate([2, 3, 5, 7, 9, 16, 25, 40]):
        cols[f"c{j}"] = rng.choice([f"v{i}" for i in range(k)], n, p=probs.dirichlet(np.ones(k)))
    df = pd.DataFrame(cols)
    for c in ("x1", "c3"):
        df.loc[rng.random(n) < 0.05, c] = np.nan
    return df


API_SCRIPT = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import pandas as pd
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
a = json.loads(sys.argv[1])
tables = {k: pd.read_csv(v) for k, v in a["files"].items()}
res = audit_synthetic(SyntheticRelease(tables["original"], tables["synthetic"], holdout=tables["holdout"]),
                      AuditSyntheticConfig(random_state=0))
res.write(a["out"])
print(json.dumps({"seconds": time.perf_counter() - t0, "stages": res.timings_s,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

CLI_SCRIPT = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from mipkit.cli import main
a = json.loads(sys.argv[1])
f = a["files"]
code = main(["audit-synthetic", "--original", f["original"], "--synthetic", f["synthetic"],
             "--holdout", f["holdout"], "--seed", "0", "--out", a["out"], "--json"])
res = json.load(open(a["out"] + "/results.json"))
print(json.dumps({"seconds": time.perf_counter() - t0, "exit": code, "stages": res["timings_s"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def cli_vs_api(n: int, rng: np.random.Generator) -> dict:
    """``mipkit audit-synthetic`` (defaults) against the library on the same CSV files, one process each."""
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="mipkit_cli_vs_api_"))
    files = {}
    for name in ("original", "synthetic", "holdout"):
        files[name] = str(tmp / f"{name}.csv")
        mixed_table(n, rng).to_csv(files[name], index=False)
    res = {"rows": n, "uptime_start": os.popen("uptime").read().strip()}
    for label, script in (("api", API_SCRIPT), ("cli", CLI_SCRIPT)):
        arg = json.dumps({"files": files, "out": str(tmp / f"run_{label}")})
        p = subprocess.run([sys.executable, "-c", script, arg], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            res[label] = {"error": p.stderr[-1500:]}
            continue
        res[label] = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"{label}: {res[label]['seconds']:.1f} s, peak RSS {res[label]['peak_rss_mb']:.0f} MB, "
              f"stages {res[label]['stages']}", flush=True)  # fmt: skip
    res["uptime_end"] = os.popen("uptime").read().strip()
    if "seconds" in res.get("api", {}) and "seconds" in res.get("cli", {}):
        res["time_ratio_cli_over_api"] = res["cli"]["seconds"] / res["api"]["seconds"]
        res["rss_ratio_cli_over_api"] = res["cli"]["peak_rss_mb"] / res["api"]["peak_rss_mb"]
        print(
            f"CLI / API: time {res['time_ratio_cli_over_api']:.2f}x, "
            f"memory {res['rss_ratio_cli_over_api']:.2f}x"
        )
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return res


SDM_SCRIPT = r"""
import json, sys, time
import pandas as pd
from sdmetrics.single_table import DCRBaselineProtection
a = json.loads(sys.argv[1])
real = pd.read_csv(a["real"]); syn = pd.read_csv(a["syn"])
cols = {c: {"sdtype": "numerical" if c.startswith("x") else "categorical"} for c in real.columns}
meta = {"tables": {"t": {"columns": cols}}}
t = time.perf_counter()
score = DCRBaselineProtection.compute(real_data=real, synthetic_data=syn, metadata=meta, table_name="t")
print(json.dumps({"score": float(score), "seconds": time.perf_counter() - t}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--n-mixed", type=int, default=50_000)
    ap.add_argument("--peer-rows", type=int, default=10_000)
    ap.add_argument("--peer-timeout", type=int, default=600)
    ap.add_argument("--cli-rows", type=int, default=100_000)
    ap.add_argument("--skip", default="", help="comma list of numeric,mixed,cli,peer to skip")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    from mipkit.attacks.distance import distance_to_closest_record
    from mipkit.data.tables import check_tables, encode_mixed
    from mipkit.metrics.dcr import dcr_attack, dcr_baseline_protection
    from mipkit.metrics.nnaa import adversarial_accuracy

    rng = np.random.default_rng(0)
    out: dict = {"load_avg_start": os.getloadavg()[0], "cores": os.cpu_count()}
    if "numeric" not in skip:
        train, holdout, syn = numeric_tables(args.n, rng)
        c0 = time.process_time()
        t = time.perf_counter()
        aa = adversarial_accuracy(train, syn, metric="euclidean")
        t_nnaa = time.perf_counter() - t
        t = time.perf_counter()
        # the training records' DCR is the nearest T -> S distance NNAA already computed (same tables)
        res = dcr_attack(
            aa.distances_t_to_s[:, 0], distance_to_closest_record(holdout, syn, metric="euclidean")
        )
        t_dcr = time.perf_counter() - t
        cpu = time.process_time() - c0
        out["numeric"] = {
            "n": args.n, "columns": 20, "nnaa_s": t_nnaa, "dcr_s": t_dcr, "total_s": t_nnaa + t_dcr,
            "aa": aa.to_dict(), "dcr_auc": res.auc, "peak_rss_mb": peak_rss_mb(),
            "load_avg": os.getloadavg()[0], "cpu_s": cpu,
        }  # fmt: skip
        print(
            f"numeric {args.n} x {args.n} x 20 (Euclidean): NNAA {t_nnaa:.1f} s (AA {aa.value:.4f}), "
            f"DCR {t_dcr:.1f} s (AUC {res.auc:.4f}); total {t_nnaa + t_dcr:.1f} s (CPU {cpu:.0f} s); "
            f"peak RSS {peak_rss_mb():.0f} MB; load {os.getloadavg()[0]:.1f}"
        )
    if "mixed" not in skip:
        tables = [mixed_table(args.n_mixed, rng) for _ in range(3)]
        schema = check_tables(tables[0], {"holdout": tables[1], "synthetic": tables[2]})
        tr, ho, sy = (encode_mixed(df, schema) for df in tables)
        c0 = time.process_time()
        t = time.perf_counter()
        aa = adversarial_accuracy(tr, sy)
        t_nnaa = time.perf_counter() - t
        t = time.perf_counter()
        res = dcr_attack(aa.distances_t_to_s[:, 0], distance_to_closest_record(ho, sy))
        t_dcr = time.perf_counter() - t
        cpu = time.process_time() - c0
        out["mixed"] = {
            "n": args.n_mixed, "columns": "6 numeric + 8 categorical", "nnaa_s": t_nnaa, "dcr_s": t_dcr,
            "cpu_s": cpu,
            "aa": aa.to_dict(), "dcr_auc": res.auc, "peak_rss_mb": peak_rss_mb(),
            "load_avg": os.getloadavg()[0],
        }  # fmt: skip
        print(
            f"mixed {args.n_mixed} x {args.n_mixed} (6 num + 8 cat): NNAA {t_nnaa:.1f} s "
            f"(AA {aa.value:.4f}), "
            f"DCR {t_dcr:.1f} s (AUC {res.auc:.4f}, CPU {cpu:.0f} s); peak RSS {peak_rss_mb():.0f} MB; "
            f"load {os.getloadavg()[0]:.1f}"
        )
    if "cli" not in skip:
        out["cli_vs_api"] = cli_vs_api(args.cli_rows, rng)
    if "peer" not in skip:
        real, syn = mixed_table(args.peer_rows, rng), mixed_table(args.peer_rows, rng)
        schema = check_tables(real, {"synthetic": syn})
        t = time.perf_counter()
        ours = dcr_baseline_protection(encode_mixed(real, schema), encode_mixed(syn, schema), random_state=0)
        t_ours = time.perf_counter() - t
        peer = None
        if SDM_PY.exists():
            tmp = ROOT / "runs" / "_sdm_tmp"
            tmp.mkdir(parents=True, exist_ok=True)
            real.to_csv(tmp / "real.csv", index=False)
            syn.to_csv(tmp / "syn.csv", index=False)
            arg = json.dumps({"real": str(tmp / "real.csv"), "syn": str(tmp / "syn.csv")})
            try:
                p = subprocess.run(
                    [str(SDM_PY), "-c", SDM_SCRIPT, arg],
                    capture_output=True,
                    text=True,
                    timeout=args.peer_timeout,
                )
                peer = (
                    json.loads(p.stdout.strip().splitlines()[-1])
                    if p.returncode == 0
                    else {"error": p.stderr[-500:]}
                )
            except subprocess.TimeoutExpired:
                peer = {"timeout_s": args.peer_timeout}
        out["peer"] = {"rows": args.peer_rows, "mipkit": ours | {"seconds": t_ours}, "sdmetrics": peer}
        print(f"DCRBaselineProtection on {args.peer_rows} rows: mipkit {t_ours:.1f} s "
              f"(score {ours['score']:.3f}); SDMetrics {peer}")  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    from mipkit.report.results import write_json_atomic

    path = RESULTS / "nnaa_dcr_scale.json"
    previous = json.loads(path.read_text()) if path.is_file() else {}  # keep parts skipped in this run
    write_json_atomic(path, {**previous, **out})
    print(json.dumps(out, default=str)[:2000], file=sys.stderr)


if __name__ == "__main__":
    main()
