"""The plain output of an audit of one fitted model says what it is: one model, one attack when only one ran,
and a verdict without a policy that does not repeat itself."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

import mipkit.cli as cli


def test_one_model_one_attack_no_policy(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 300
    member, label = rng.integers(0, 2, n), rng.integers(0, 2, n)
    p = 1 / (1 + np.exp(-((2 * label - 1) * (1 + member) + rng.normal(0, 1, n))))
    frame = pd.DataFrame({"id": np.arange(n), "label": label, "member": member, "p_0": 1 - p, "p_1": p})
    frame.to_csv(tmp_path / "p.csv", index=False)
    code = cli.main(["audit-scores", "--predictions", str(tmp_path / "p.csv"), "--n-boot", "100",
                     "--no-report", "--out", str(tmp_path / "run")])  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    assert code in (0, 1)
    assert "The model is right on" in out and "The models are" not in out
    assert "the only attack (loss)" in out and "strongest of 1 attacks" not in out
    verdict = re.search(r"Verdict: NO POLICY STATED\. (.*?)\.", out).group(1)
    assert "policy" not in verdict.lower()
