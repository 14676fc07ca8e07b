"""Francis & Wagner's non-member baseline on BankChurners (their Sec. 4.4, Figure 4).

Protocol (as in the paper, with the tolerance of the mipkit brief):
* drop ``CLIENTNUM`` and the two ``Naive_Bayes_*`` columns (20 attributes remain: 6 categorical, 14 numeric);
* remove 3039 random non-members (the targets); fit on the other 7088 rows;
* features: the known attributes, numerics standardised, categoricals one-hot (scaled like the numerics);
* categorical secret: ``LogisticRegression(penalty="l1", C=0.01, solver="saga")`` (written ``l1_ratio=1`` in
  scikit-learn >= 1.8), and the most-frequent value; the better of the two precisions is the baseline;
* numeric secret: ``Lasso(alpha=0.1)`` (and the median, for the "better of" rule); a prediction is correct
  within 5% of the column's value range (the paper used 5% of the true value);
* known attributes: all other columns, or only the five PII columns (Customer_Age, Dependent_count,
  Education_Level, Gender, Marital_Status; Figure 3). Coverage (prediction rate) is 1 throughout.

Run: ``.venv/bin/python benchmarks/bankchurners_baseline.py`` (about a minute on 2 loaded cores).
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"
PII = ["Customer_Age", "Dependent_count", "Education_Level", "Gender", "Marital_Status"]
N_TARGETS = 3039


def fw_model(numeric: bool):
    from sklearn.linear_model import Lasso, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    est = (
        Lasso(alpha=0.1) if numeric else LogisticRegression(l1_ratio=1.0, C=0.01, solver="saga", max_iter=200)
    )
    return make_pipeline(StandardScaler(), est)


def main() -> None:
    from mipkit.attacks.inference import model_guesses, most_frequent_guesses
    from mipkit.data.io import read_table
    from mipkit.data.tables import check_tables
    from mipkit.metrics.inference import is_correct

    df = read_table(DATA / "bankchurners" / "BankChurners.csv")
    df = df.drop(columns=["CLIENTNUM", *[c for c in df.columns if c.startswith("Naive_Bayes")]])
    schema = check_tables(df)
    rng = np.random.default_rng(0)
    tgt = np.sort(rng.choice(len(df), size=N_TARGETS, replace=False))
    mask = np.ones(len(df), bool)
    mask[tgt] = False
    targets, rest = df.iloc[tgt], df.iloc[mask]
    rows = []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # saga convergence warnings at max_iter=200
        for secret in df.columns:
            numeric = secret in schema.numeric
            tol = 0.05 * float(schema.num_range[schema.numeric.index(secret)]) if numeric else 0.0
            truth = targets[secret].to_numpy()
            row = {"secret": secret, "type": "numeric" if numeric else "categorical"}
            for label, known in (
                ("all", [c for c in df.columns if c != secret]),
                ("pii", [c for c in PII if c != secret]),
            ):
                g, _ = model_guesses(
                    targets,
                    rest,
                    secret=secret,
                    known=known,
                    schema=schema,
                    numeric=numeric,
                    model_factory=fw_model,
                )
                p_model = float(is_correct(g, truth, numeric=numeric, tolerance=tol).mean())
                g = most_frequent_guesses(rest, secret=secret, n=len(targets), numeric=numeric)
                p_mode = float(is_correct(g, truth, numeric=numeric, tolerance=tol).mean())
                row[f"{label}_model"] = p_model
                row[f"{label}_mode"] = p_mode
                row[f"{label}_baseline"] = max(p_model, p_mode)
            rows.append(row)
    elapsed = time.perf_counter() - t0
    tbl = pd.DataFrame(rows)
    print(f"BankChurners non-member baseline precision ({N_TARGETS} targets, coverage 1), {elapsed:.1f} s\n")
    print("| secret | type | all known: model / mode -> baseline | PII known: model / mode -> baseline |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['secret']} | {r['type']} | {r['all_model']:.3f} / {r['all_mode']:.3f} "
            f"-> **{r['all_baseline']:.3f}** "
            f"| {r['pii_model']:.3f} / {r['pii_mode']:.3f} -> **{r['pii_baseline']:.3f}** |"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    from mipkit.report.results import write_json_atomic

    write_json_atomic(
        RESULTS / "bankchurners_baseline.json",
        {"n_targets": N_TARGETS, "pii": PII, "seconds": elapsed, "rows": tbl.to_dict(orient="records")},
    )


if __name__ == "__main__":
    main()
