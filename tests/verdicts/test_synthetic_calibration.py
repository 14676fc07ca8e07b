"""The synthetic verdict's calibration at reduced size (the full-size run is
``benchmarks/verdict_calibration_synthetic.py``): on same-distribution tables the verdict rarely fires and
the NNAA interval covers; on a synthetic table with 30% copied training rows it fires."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mipkit.metrics.nnaa import _record_bootstrap_intervals
from mipkit.stats import clopper_pearson
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic


def _population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    age = rng.integers(18, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "income": np.round(rng.gamma(2.0, 15.0, n) + 0.3 * age).astype(int),
            "sex": rng.choice(["F", "M"], n),
            "marital": np.where(
                age < 30, rng.choice(["s", "m"], n, p=[0.7, 0.3]), rng.choice(["s", "m", "d"], n)
            ),
        }
    )


def _audit(n: int, seed: int, copies: float) -> dict:
    rng = np.random.default_rng(seed)
    train, holdout = _population(n, rng), _population(n, rng)
    k = int(copies * 2 * n)
    syn = pd.concat(
        [train.iloc[rng.choice(n, k, replace=False)], _population(2 * n - k, rng)], ignore_index=True
    )
    res = audit_synthetic(
        SyntheticRelease(train, syn, holdout=holdout),
        AuditSyntheticConfig(fail_above=0.0, random_state=seed, n_jobs=1),
    )
    boot = _record_bootstrap_intervals(res.nnaa.train, res.nnaa.test, 0.95, 300, np.random.default_rng(seed))
    return {
        "verdict": res.verdict["status"],
        "covered": res.nnaa.intervals["privacy_loss_ci"][0] <= 0 <= res.nnaa.intervals["privacy_loss_ci"][1],
        "before_covered": boot["privacy_loss_ci"][0] <= 0 <= boot["privacy_loss_ci"][1],
        "auc_finding": res.dcr_attack.auc_ci[0] > 0.5,
    }


def test_false_alarms_and_coverage_on_same_distribution_tables():
    runs = [_audit(150, seed, copies=0.0) for seed in range(40)]
    alarms = sum(r["verdict"] == "finding" for r in runs)
    covered = sum(r["covered"] for r in runs)
    # at most 5% expected; 4 or more of 40 would reject that (P <= 0.14 at exactly 5%, far less for the
    # conservative jackknife)
    assert alarms <= 3
    assert sum(r["auc_finding"] for r in runs) <= 3
    lo, _ = clopper_pearson(covered, len(runs), 0.95)
    assert covered >= 37 and lo > 0.8  # >= 92.5% of 40 covered
    # the record bootstrap of before covers less often than the jackknife
    assert sum(r["before_covered"] for r in runs) <= covered


def test_power_on_thirty_percent_copied_rows():
    # 300 training records: the DCR attack's interval always clears 0.5; the NNAA privacy loss (a weaker
    # signal, with a conservative interval) clears 0 in most runs (the benchmark: power at 500 records)
    runs = [_audit(300, 100 + seed, copies=0.3) for seed in range(6)]
    assert all(r["auc_finding"] for r in runs)
    assert sum(r["verdict"] == "finding" for r in runs) >= 4
