"""Calibration of the synthetic-data verdicts: NNAA interval coverage, false alarms and power.

Same-distribution tables (the null): training, holdout and synthetic records are independent draws of one
mixed-type population (two integer columns, three categorical ones: ties everywhere), so the synthetic data
reveal nothing about the training records. Leaky tables (the alternative): 30% of the synthetic rows are
copies of training rows, the rest fresh draws.

1. ``coverage`` - NNAA interval coverage at ``--n`` records per set (default 2,000) over ``--reps`` (default
   200) independent tables: how often the 95% intervals of AA(train, syn1), AA(test, syn2) and the privacy
   loss contain their true values (1/2, 1/2, 0), for the record bootstrap of before 2026-11 (neighbour
   structure held fixed) and the delete-one jackknife (neighbours recomputed); Clopper-Pearson intervals on
   each coverage, and the mean interval half-width against the Monte Carlo spread of the estimates.
2. ``calibration`` - ``--audits`` (default 200) null audits and ``--power-audits`` (default 100) leaky audits
   through :func:`mipkit.workflows.audit_synthetic.audit_synthetic` at ``--n-audit`` records (NNAA,
   DCR, and
   attribute inference of one secret): the share of "finding" verdicts for each policy metric, with its
   Clopper-Pearson interval. Policies: privacy loss > 0, DCR AUC > 0.5, like-for-like inference PI > 0.
   "Before" decides the privacy-loss policy with the record bootstrap's interval (the only interval the
   earlier versions had); the other two metrics had no interval before.

3. ``headline`` - the default verdict (the family of :mod:`mipkit.workflows.audit_synthetic.headline`) on real
   UCI Adult (``adult.data`` + ``adult.test``, 48,842 rows; ``../shared/data`` or ``$MIPKIT_SHARED_DATA``):
   each split draws disjoint training, holdout and synthetic tables of ``--n-headline`` rows (default
   2,000). Null: the synthetic rows are fresh Adult rows (``--null-audits``, default 200; the first
   ``--null-without-holdout``, default 100, also audited without the holdout). Power (``--power-reps``
   each, default 40): a share of the synthetic rows (1, 5, 10, 30%) replaced by verbatim copies of
   distinct training rows, or by near copies (each numeric cell moved by up to 1% of its column's range,
   rounded; categories kept). Each audit attacks
   the secret ``income`` (500 targets, the command's defaults) and is judged at ``--fail-above`` 0 and
   0.05, by the family and by the NNAA privacy loss alone (the default before the family).
   ``--conditions null_without_holdout`` audits ``--null-without-holdout`` null splits without the holdout
   only. With ``--conditions``, the conditions already saved under the same ``--tag`` and not named are kept.
   ``--part twins``: the exact-copy test without unseen records on tables whose rows repeat (2 to 16 levels
   per column, ``--twin-reps`` null pairs each): its false alarms at 95% and 97.5%.
   ``--n-large`` (at most 16,000: three disjoint tables of 16,000 rows fit in Adult's 48,842) repeats every
   condition (null, 1/5/10/30% copies, 10/30% near copies) at ``--large-reps`` splits.

Run: ``.venv/bin/python benchmarks/verdict_calibration_synthetic.py`` (coverage and calibration;
``--part coverage``, ``--part calibration`` or ``--part headline`` for one). Results:
``benchmarks/results/verdict_calibration_synthetic.json``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A mixed-type population: integer age and income (income depends on age), sex, education, marital
    status (depends on age)."""
    age = rng.integers(18, 80, n)
    income = np.round(rng.gamma(2.0, 15.0, n) + 0.3 * age).astype(int)
    sex = rng.choice(["F", "M"], n)
    edu = rng.choice(["none", "school", "college", "graduate"], n, p=[0.1, 0.4, 0.3, 0.2])
    young = age < 30
    marital = np.where(
        young,
        rng.choice(["single", "married", "divorced"], n, p=[0.7, 0.28, 0.02]),
        rng.choice(["single", "married", "divorced"], n, p=[0.25, 0.6, 0.15]),
    )
    return pd.DataFrame({"age": age, "income": income, "sex": sex, "education": edu, "marital": marital})


def leaky_synthetic(train: pd.DataFrame, n_syn: int, share: float, rng: np.random.Generator) -> pd.DataFrame:
    """``n_syn`` synthetic rows of which ``share`` are copies of distinct training rows."""
    k = int(round(share * n_syn))
    copies = train.iloc[rng.choice(len(train), size=k, replace=False)]
    fresh = population(n_syn - k, rng)
    syn = pd.concat([copies, fresh], ignore_index=True)
    return syn.iloc[rng.permutation(len(syn))].reset_index(drop=True)


def clopper_pearson(k: int, n: int) -> list[float]:
    from mipkit.stats import clopper_pearson as cp

    return list(cp(int(k), int(n), 0.95))


def coverage(args) -> dict:
    from mipkit.data.tables import check_tables, encode_mixed
    from mipkit.metrics.nnaa import _record_bootstrap_intervals, privacy_loss

    n, reps = args.n, args.reps
    truth = {"train": 0.5, "test": 0.5, "privacy_loss": 0.0}
    hits = {m: dict.fromkeys(truth, 0) for m in ("record-bootstrap", "jackknife")}
    half = {m: {k: [] for k in truth} for m in hits}
    values = {k: [] for k in truth}
    t0 = time.perf_counter()
    for r in range(reps):
        rng = np.random.default_rng(10_000 + r)
        train, test, syn = population(n, rng), population(n, rng), population(2 * n, rng)
        schema = check_tables(train, {"holdout": test, "synthetic": syn})
        tr, te, sy = (encode_mixed(df, schema) for df in (train, test, syn))
        pl = privacy_loss(tr, te, sy, random_state=r, n_jobs=args.n_jobs)
        boot = _record_bootstrap_intervals(pl.train, pl.test, 0.95, 1000, np.random.default_rng(r))
        est = {"train": pl.train.value, "test": pl.test.value, "privacy_loss": pl.value}
        for method, iv in (("jackknife", pl.intervals), ("record-bootstrap", boot)):
            for k in truth:
                lo, hi = iv[f"{k}_ci"]
                hits[method][k] += lo <= truth[k] <= hi
                half[method][k].append((hi - lo) / 2)
        for k in truth:
            values[k].append(est[k])
        if (r + 1) % 20 == 0:
            print(f"  coverage: {r + 1}/{reps} tables, {time.perf_counter() - t0:.0f} s", flush=True)
    out = {"n": n, "reps": reps, "seconds": time.perf_counter() - t0, "methods": {}}
    for method in hits:
        out["methods"][method] = {
            k: {
                "coverage": hits[method][k] / reps,
                "coverage_ci": clopper_pearson(hits[method][k], reps),
                "mean_half_width": float(np.mean(half[method][k])),
            }
            for k in truth
        }
    out["monte_carlo"] = {
        k: {
            "mean": float(np.mean(v)),
            "sd": float(np.std(v, ddof=1)),
            "z95_half_width": 1.96 * float(np.std(v, ddof=1)),
        }
        for k, v in values.items()
    }
    return out


def calibration(args) -> dict:
    from mipkit.metrics.nnaa import _record_bootstrap_intervals
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic

    n = args.n_audit
    policies = {"privacy_loss": 0.0, "dcr_auc": 0.5, "inference_pi": 0.0}

    def run(leaky: bool, r: int) -> dict:
        rng = np.random.default_rng((20_000 if leaky else 30_000) + r)
        train, holdout = population(n, rng), population(n, rng)
        syn = leaky_synthetic(train, 2 * n, 0.3, rng) if leaky else population(2 * n, rng)
        res = audit_synthetic(
            SyntheticRelease(train, syn, holdout=holdout),
            AuditSyntheticConfig(
                secrets=["marital"], n_attacks=args.n_attacks, random_state=r, n_jobs=args.n_jobs
            ),
        )
        d = res.to_dict()
        verdicts = {}
        for metric, thr in policies.items():
            from mipkit.workflows.audit_synthetic.verdict import synthetic_verdict

            v = synthetic_verdict(d, metric=metric, fail_above=thr, inference_family=d["inference_family"])
            verdicts[metric] = v["status"]
        boot = _record_bootstrap_intervals(
            res.nnaa.train, res.nnaa.test, 0.95, 1000, np.random.default_rng(r)
        )
        verdicts["privacy_loss_before"] = "finding" if boot["privacy_loss_ci"][0] > 0 else "not"
        return verdicts

    out = {"n": n, "n_attacks": args.n_attacks, "policies": policies}
    for label, leaky, count in (("null", False, args.audits), ("copies_30pct", True, args.power_audits)):
        t0 = time.perf_counter()
        rows = []
        for r in range(count):
            rows.append(run(leaky, r))
            if (r + 1) % 25 == 0:
                print(f"  {label}: {r + 1}/{count} audits, {time.perf_counter() - t0:.0f} s", flush=True)
        summary = {}
        for metric in [*policies, "privacy_loss_before"]:
            k = sum(v[metric] == "finding" for v in rows)
            summary[metric] = {
                "findings": k,
                "audits": count,
                "rate": k / count,
                "rate_ci": clopper_pearson(k, count),
            }
        out[label] = {"seconds": time.perf_counter() - t0, "verdicts": summary}
    return out


THRESHOLDS = (0.0, 0.05)
MEMBERS = ("privacy_loss", "exact_copies", "near_copies", "inference_pi")


def load_adult() -> pd.DataFrame:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthesizers_adult import load_adult as load

    a, b = load()
    return pd.concat([a, b], ignore_index=True)


def adult_split(adult: pd.DataFrame, n: int, kind: str, share: float, seed: int):
    """Training, holdout and synthetic tables of ``n`` disjoint Adult rows; ``share`` of the synthetic rows
    replaced by verbatim (``kind="copies"``) or near (``"near"``) copies of distinct training rows."""
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(adult))
    train, holdout, syn = (adult.iloc[idx[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(3))
    k = int(round(share * n))
    if k:
        copies = train.iloc[rng.choice(n, size=k, replace=False)].copy()
        if kind == "near":
            for col in copies.select_dtypes("number").columns:
                span = float(adult[col].max() - adult[col].min())
                copies[col] = np.round(copies[col] + rng.uniform(-0.01, 0.01, k) * span).astype(int)
        syn = pd.concat([copies, syn.iloc[: n - k]], ignore_index=True)
        syn = syn.iloc[rng.permutation(n)].reset_index(drop=True)
    return train, holdout, syn


def _judge(d: dict) -> dict:
    from mipkit.workflows.audit_synthetic.verdict import synthetic_verdict

    out = {}
    for thr in THRESHOLDS:
        v = synthetic_verdict(d, metric="headline", fail_above=thr)
        out[f"headline@{thr:g}"] = v["status"]
        for m in v["members"]:
            out[f"{m['name']}@{thr:g}"] = m["status"]
        if d["nnaa"].get("privacy_loss") is not None:
            old = synthetic_verdict(d, metric="privacy_loss", fail_above=thr)
            out[f"privacy_loss_alone@{thr:g}"] = old["status"]
    return out


def _rates(rows: list[dict]) -> dict:
    keys = sorted({k for r in rows for k in r})
    out = {}
    for key in keys:
        k = sum(r.get(key) == "finding" for r in rows)
        p = sum(r.get(key) == "pass" for r in rows)
        out[key] = {"findings": k, "passes": p, "audits": len(rows), "rate": k / len(rows),
                    "rate_ci": clopper_pearson(k, len(rows))}  # fmt: skip
    return out


def headline(args, save=lambda out: None, previous: dict | None = None) -> dict:
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic

    previous = previous or {}
    adult = load_adult()
    for n in (args.n_headline, args.n_large):
        if 3 * n > len(adult):
            raise SystemExit(f"{n} rows per table: three disjoint ones need {3 * n}, Adult has {len(adult)}")
    conditions = [("null", "copies", 0.0, args.null_audits, args.n_headline)]
    conditions += [(f"copies_{round(100 * c)}pct", "copies", c, args.power_reps, args.n_headline)
                   for c in (0.01, 0.05, 0.10, 0.30)]  # fmt: skip
    conditions += [(f"near_{round(100 * c)}pct", "near", c, args.power_reps, args.n_headline)
                   for c in (0.10, 0.30)]  # fmt: skip
    if args.n_large:
        large = [("null", "copies", 0.0)] + [(f"copies_{round(100 * c)}pct", "copies", c)
                                             for c in (0.01, 0.05, 0.10, 0.30)]  # fmt: skip
        large += [(f"near_{round(100 * c)}pct", "near", c) for c in (0.10, 0.30)]
        conditions += [(f"{label}_n{args.n_large}", kind, c, args.large_reps, args.n_large)
                       for label, kind, c in large]  # fmt: skip
    if args.conditions:
        keep = set(args.conditions.split(","))
        if "null_without_holdout" in keep:  # on its own: the null splits audited without the holdout only
            conditions.append(
                ("null_without_holdout", "copies", 0.0, args.null_without_holdout, args.n_headline)
            )
        conditions = [c for c in conditions if c[0] in keep or (c[4] != args.n_headline and "large" in keep)]
    kept = {k: v for k, v in previous.get("conditions", {}).items() if args.conditions}
    out = {"n": args.n_headline, "thresholds": list(THRESHOLDS), "secret": "income", "conditions": kept}
    for label, kind, share, reps, n in conditions:
        t0 = time.perf_counter()
        rows, rows_noh = [], []
        for r in range(reps):
            seed = 40_000 + r + (0 if n == args.n_headline else 500)
            train, holdout, syn = adult_split(adult, n, kind, share, seed)
            config = AuditSyntheticConfig(secrets=["income"], random_state=r, n_jobs=args.n_jobs)
            given = {} if label == "null_without_holdout" else {"holdout": holdout}
            rows.append(_judge(audit_synthetic(SyntheticRelease(train, syn, **given), config).to_dict()))
            if label == "null" and r < args.null_without_holdout:
                rows_noh.append(_judge(audit_synthetic(SyntheticRelease(train, syn), config).to_dict()))
            if (r + 1) % 10 == 0 or r + 1 == reps or n != args.n_headline:  # large tables: every audit
                print(f"  {label}: {r + 1}/{reps} audits, {time.perf_counter() - t0:.0f} s", flush=True)
                seconds = time.perf_counter() - t0
                out["conditions"][label] = {"kind": kind, "share": share, "n": n, "planned": reps,
                                            "seconds": seconds, "verdicts": _rates(rows)}  # fmt: skip
                if rows_noh:
                    out["conditions"]["null_without_holdout"] = {"kind": kind, "share": 0.0, "n": n,
                                                                 "planned": args.null_without_holdout,
                                                                 "verdicts": _rates(rows_noh)}  # fmt: skip
                save(out)
    return out


def print_headline(h: dict) -> None:
    cols = [f"headline@{t:g}" for t in THRESHOLDS] + [f"privacy_loss_alone@{t:g}" for t in THRESHOLDS]
    print("\n| condition | rows | " + " | ".join(cols) + " |")
    print("| --- | --- |" + " --- |" * len(cols))
    for label, c in h["conditions"].items():
        cells = []
        for col in cols:
            v = c["verdicts"].get(col)
            cells.append(
                "n/a" if v is None else "{}/{} = {:.1f}%".format(v["findings"], v["audits"], 100 * v["rate"])
            )
        print(f"| {label} | {c['n']} | " + " | ".join(cells) + " |")


def twins(args) -> dict:
    """False alarms of the exact-copy test without unseen records where records repeat: training and
    synthetic tables of ``--n-headline`` independent draws of ``levels`` categorical columns (uniform
    levels; few distinct rows, many twins), the excess judged at 95% (one test) and 97.5% (two tests)."""
    from mipkit.metrics.copies import _excess, copy_rates, excess_interval

    out = {"n": args.n_headline, "reps": args.twin_reps, "designs": {}}
    # "independent": the same interval with Agresti and Caffo's standard error alone (records independent)
    for levels in ((2, 2, 2), (4, 4, 4), (8, 8, 8), (16, 16, 16)):
        rng = np.random.default_rng(50_000 + int(np.prod(levels)))
        fired = dict.fromkeys(("0.95", "0.975", "independent 0.95", "independent 0.975"), 0)
        shares = []
        for _ in range(args.twin_reps):
            train, syn = (np.column_stack([rng.integers(0, k, args.n_headline) for k in levels]).astype(float)
                          for _ in range(2))  # fmt: skip
            rate = copy_rates(np.zeros(len(train)), original=train, synthetic=syn, random_state=rng)["exact"]
            shares.append((rate["share"], rate["reference_share"]))
            n = rate["n"]
            alone = _excess(round(rate["share"] * n), n, round(rate["reference_share"] * n), n)
            for key in fired:
                level = float(key.split()[-1])
                fired[key] += excess_interval(alone if "independent" in key else rate, level)[0] > 0
        sh = np.array(shares)
        out["designs"]["x".join(map(str, levels))] = {
            "distinct_rows": int(np.prod(levels)),
            "mean_share": float(sh[:, 0].mean()),
            "mean_reference_share": float(sh[:, 1].mean()),
            "sd_excess": float((sh[:, 0] - sh[:, 1]).std(ddof=1)),
            "false_alarms": {lv: {"findings": k, "reps": args.twin_reps, "rate": k / args.twin_reps,
                                  "rate_ci": clopper_pearson(k, args.twin_reps)} for lv, k in fired.items()},
        }  # fmt: skip
        print(f"  twins {levels}: {out['designs']['x'.join(map(str, levels))]}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    parts = ["coverage", "calibration", "both", "headline", "twins"]
    ap.add_argument("--part", choices=parts, default="both")
    ap.add_argument("--twin-reps", type=int, default=1000)
    ap.add_argument("--n-headline", type=int, default=2000)
    ap.add_argument("--null-audits", type=int, default=200)
    ap.add_argument("--null-without-holdout", type=int, default=100)
    ap.add_argument("--power-reps", type=int, default=40)
    ap.add_argument("--n-large", type=int, default=0)
    ap.add_argument("--large-reps", type=int, default=5)
    ap.add_argument(
        "--conditions", default="", help="headline: comma-separated conditions, 'large' for --n-large"
    )
    ap.add_argument("--tag", default="", help="write verdict_calibration_synthetic_TAG.json")
    ap.add_argument("--n", type=int, default=2000, help="records per set, coverage part")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-audit", type=int, default=500, help="training records per audit, calibration part")
    ap.add_argument("--audits", type=int, default=200)
    ap.add_argument("--power-audits", type=int, default=100)
    ap.add_argument("--n-attacks", type=int, default=200)
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    from mipkit.report.results import write_json_atomic

    path = RESULTS / f"verdict_calibration_synthetic{'_' + args.tag if args.tag else ''}.json"
    previous = {}
    if path.exists():
        import json

        previous = json.loads(path.read_text())
    out = {**previous, "uptime_start": os.popen("uptime").read().strip(), "cores": os.cpu_count()}
    if args.part in ("coverage", "both"):
        out["coverage"] = cov = coverage(args)
        print(
            f"\nNNAA interval coverage, n = {cov['n']} per set, {cov['reps']} tables ({cov['seconds']:.0f} s)"
        )
        print("| interval | AA(train, syn1) | AA(test, syn2) | privacy loss | mean half-width (PL) |")
        print("| --- | --- | --- | --- | --- |")
        for method, m in cov["methods"].items():
            cells = [
                "{:.1f}% [{:.1f}, {:.1f}]".format(
                    100 * m[k]["coverage"], *(100 * x for x in m[k]["coverage_ci"])
                )
                for k in ("train", "test", "privacy_loss")
            ]
            print(f"| {method} | {' | '.join(cells)} | {m['privacy_loss']['mean_half_width']:.4f} |")
        mc = cov["monte_carlo"]["privacy_loss"]
        print(
            f"Monte Carlo: privacy loss mean {mc['mean']:.4f}, sd {mc['sd']:.4f} "
            f"(ideal half-width {mc['z95_half_width']:.4f})"
        )
    if args.part in ("calibration", "both"):
        out["calibration"] = cal = calibration(args)
        print(f"\nVerdict calibration, {cal['n']} training records per audit")
        print("| policy | false alarms (null) | power (30% copied rows) |")
        print("| --- | --- | --- |")
        for metric in [*cal["policies"], "privacy_loss_before"]:
            a, b = cal["null"]["verdicts"][metric], cal["copies_30pct"]["verdicts"][metric]
            cells = [
                "{}/{} = {:.1f}% [{:.1f}, {:.1f}]".format(
                    c["findings"], c["audits"], 100 * c["rate"], *(100 * x for x in c["rate_ci"])
                )
                for c in (a, b)
            ]
            print(f"| {metric} | {cells[0]} | {cells[1]} |")
    if args.part == "twins":
        out["twins"] = twins(args)
    if args.part == "headline":

        def save(h: dict) -> None:
            write_json_atomic(path, {**out, "headline": h})

        out["headline"] = h = headline(args, save, previous.get("headline"))
        print_headline(h)
    out["uptime_end"] = os.popen("uptime").read().strip()
    write_json_atomic(path, out)


if __name__ == "__main__":
    main()
