"""DP-WGAN-GP against AIM, MST, CTGAN and smartnoise's DP-CTGAN / PATE-CTGAN on real BankChurners.

The protocol of ``synthesizers_adult.py`` (utility AUC for attrition, fidelity, mode collapse, mipkit's
synthetic-data audit beside the certified bounds, wall time) on BankChurners: ``CLIENTNUM`` and the two
``Naive_Bayes_*`` columns dropped, a random 70% to train the synthesizers and 30% held out (test of the
utility classifier, holdout of the audit). Attribute inference attacks ``Attrition_Flag``, ``Gender`` and
``Income_Category``.

Run: ``.venv/bin/python benchmarks/synthesizers_bankchurners.py [--quick] [--methods ...] [--epsilons ...]``.
Results: ``benchmarks/results/synthesizers_bankchurners[_small][_<tag>].{json,md}``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthesizers_adult import DATA, main


def load_bankchurners() -> tuple[pd.DataFrame, pd.DataFrame]:
    from mipkit.data.io import read_table

    df = read_table(DATA / "bankchurners" / "BankChurners.csv")
    df = df.drop(columns=["CLIENTNUM", *[c for c in df.columns if c.startswith("Naive_Bayes")]])
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(df))
    cut = int(0.7 * len(df))
    return df.iloc[np.sort(perm[:cut])].reset_index(drop=True), df.iloc[np.sort(perm[cut:])].reset_index(
        drop=True
    )


BANKCHURNERS = {
    "name": "bankchurners",
    "load": load_bankchurners,
    "target": "Attrition_Flag",
    "positive": "Attrited Customer",
    "secrets": ["Attrition_Flag", "Gender", "Income_Category"],
    "files": ["bankchurners/BankChurners.csv"],
}


if __name__ == "__main__":
    main(BANKCHURNERS)
