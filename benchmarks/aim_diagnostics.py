"""Why AIM's synthetic BankChurners predicts attrition no better than chance: two checks.

1. Sampling: on a planted 5-column table (AIM at epsilon 50), the pairwise marginals of 200,000 sampled
   records against the fitted model's (L1): a sampling fault would show here.
2. The budget: AIM (at most 12 rounds) and MST at epsilon 3 on BankChurners' 7,088 training rows: the rounds
   AIM ran, the pairs it measured, whether any holds ``Attrition_Flag``, the correlation of attrition with the
   strongest real predictors in each synthetic table, and the utility AUC on the held-out rows.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/aim_diagnostics.py`` (about 15 minutes on 2 busy cores).
Results: ``benchmarks/results/aim_diagnostics.json``.
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pandas as pd

from synthesizers_adult import RESULTS, _data_sha
from synthesizers_bankchurners import BANKCHURNERS, load_bankchurners

PREDICTORS = ["Total_Trans_Ct", "Total_Trans_Amt", "Total_Revolving_Bal", "Total_Ct_Chng_Q4_Q1"]


def planted_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 3
    c = np.where(rng.random(n) < 0.85, (a + b) % 3, rng.integers(0, 3, n))
    d = np.where(rng.random(n) < 0.8, c, rng.integers(0, 3, n))
    e = np.where(rng.random(n) < 0.8, (b + d) % 3, rng.integers(0, 3, n))
    cols = {"a": a, "b": b, "c": c, "d": d, "e": e}
    return pd.DataFrame({k: np.array(list("xyz"))[v] for k, v in cols.items()})


def sampling_check() -> dict:
    from mipkit.synthesizers.aim import AIMSynthesizer

    df = planted_table()
    m = AIMSynthesizer(epsilon=50.0, rounds=12, iters=300, round_iters=50, random_state=0).fit(df)
    # mbi's attributes are column positions (mipkit.synthesizers.peers_mbi)
    sampled = m._mbi.Dataset(m.disc_.encode_positions(m.sample(200_000)), m.model_.domain)
    l1 = {}
    for cl in itertools.combinations(m.disc_.attributes, 2):
        p = np.asarray(m.model_.project(cl).datavector(), float)
        s = np.asarray(sampled.project(cl).datavector(), float)
        l1["".join(m.disc_.names(cl))] = float(np.abs(p / p.sum() - s / s.sum()).sum())
    return {"model_vs_sample_l1": l1, "max_l1": max(l1.values())}


def budget_check() -> dict:
    from mipkit.synthesizers.aim import AIMSynthesizer
    from mipkit.synthesizers.peers_mbi import MSTSynthesizer
    from mipkit.synthesizers.quality import utility_auc

    train, test = load_bankchurners()
    target, positive = BANKCHURNERS["target"], BANKCHURNERS["positive"]
    real = (train[target] == positive).to_numpy()
    out = {"real_corr": {c: float(np.corrcoef(real, train[c].astype(float))[0, 1]) for c in PREDICTORS}}
    for name, synth in (
        ("mst", MSTSynthesizer(epsilon=3.0, iters=300, random_state=0)),
        ("aim", AIMSynthesizer(epsilon=3.0, rounds=40, round_iters=50, iters=300, random_state=0)),
    ):
        clock = time.perf_counter()
        syn = synth.fit(train).sample(len(train))
        y = (syn[target] == positive).to_numpy()
        row = {
            "seconds": time.perf_counter() - clock,
            "utility_auc": utility_auc(syn, test, target=target, positive=positive),
            "corr": {c: float(np.corrcoef(y, syn[c].astype(float))[0, 1]) for c in PREDICTORS},
        }
        if name == "aim":
            pairs = [p for p in synth.certificate_.details["measured"] if len(p) == 2]
            row.update(rounds=synth.certificate_.details["rounds"], pairs=pairs,
                       pairs_with_target=[p for p in pairs if target in p])  # fmt: skip
        out[name] = row
        print(name, {k: v for k, v in row.items() if k != "corr"}, flush=True)
    return out


def main() -> None:
    from mipkit.report.results import write_json_atomic

    warnings.filterwarnings("ignore")  # mbi's notes on JAX settings
    res = {"sampling": sampling_check()}
    print("sampling: largest model-vs-sample L1", round(res["sampling"]["max_l1"], 4), flush=True)
    res["budget"] = budget_check()
    res["data_sha256_16"] = _data_sha(BANKCHURNERS)
    write_json_atomic(RESULTS / "aim_diagnostics.json", res)


if __name__ == "__main__":
    main()
