"""``n_refits``: a setting of the synthetic-data audit and a flag of ``mipkit audit-synthetic``, passed to the
inference measurement and recorded in the result (0: the interval over the targets alone)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from mipkit.cli import main
from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic


def _table(seed: int, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = rng.choice(5, size=n, p=[0.1, 0.15, 0.35, 0.25, 0.15]).astype(float)
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": y})


def _audit(n_refits: int):
    config = AuditSyntheticConfig(
        secrets=["y"], checks=["inference"], attacks=["model"], n_attacks=100, n_refits=n_refits, n_jobs=1
    )
    return audit_synthetic(SyntheticRelease(_table(0), _table(1)), config)


def test_n_refits_reaches_the_inference_interval_and_the_result():
    fixed, refitted = _audit(0), _audit(20)
    assert fixed.to_dict()["inputs"]["n_refits"] == 0
    assert refitted.to_dict()["inputs"]["n_refits"] == 20
    assert AuditSyntheticConfig().n_refits == 20
    # the same guesses (the refits draw after them), a wider interval with the fits' variability
    assert fixed.inference["y"].pi_of("model") == refitted.inference["y"].pi_of("model")
    lo0, hi0 = fixed.inference["y"].pi_interval("model")
    lo, hi = refitted.inference["y"].pi_interval("model")
    assert hi - lo > 1.5 * (hi0 - lo0)


def test_the_n_refits_flag(tmp_path, capsys):
    paths = {}
    for name, seed in (("orig", 0), ("syn", 1)):
        paths[name] = tmp_path / f"{name}.csv"
        _table(seed).to_csv(paths[name], index=False)
    argv = ["audit-synthetic", "--original", str(paths["orig"]), "--synthetic", str(paths["syn"]),
            "--secret", "y", "--checks", "inference", "--attacks", "model", "--n-attacks", "50",
            "--n-jobs", "1", "--no-report", "--json"]  # fmt: skip
    assert main([*argv, "--n-refits", "0", "--out", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "results.json").read_text())["inputs"]["n_refits"] == 0
    capsys.readouterr()
    assert main([*argv, "--n-refits=-1", "--out", str(tmp_path / "r2")]) == 2
    assert "mipkit: error: --n-refits must be an integer >= 0" in capsys.readouterr().err
    assert main([*argv, "--n-refits", "2000000", "--out", str(tmp_path / "r3")]) == 2  # before any fit
    assert "mipkit: error: --n-refits must be at most 1,000,000" in capsys.readouterr().err
