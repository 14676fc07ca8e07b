"""A synthetic table whose target has one class: the DPIA paragraph says the utility is not measurable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit.synthesizers.certificate import certificate_from_dp
from mipkit.workflows.synthesize import SynthesizeConfig, synthesize


class _OneClass:
    """Samples the training rows with the target set to one class; certifies (epsilon, delta)-DP."""

    def __init__(self, method, *, epsilon, delta, **kwargs):
        self.method, self.epsilon, self.delta = method, epsilon, delta

    def fit(self, table):
        self.table_ = table
        self.certificate_ = certificate_from_dp(method=self.method, epsilon=self.epsilon, delta=self.delta)
        return self

    def sample(self, n):
        out = self.table_.sample(n, replace=True, random_state=0).reset_index(drop=True)
        return out.assign(income="low")


@pytest.fixture()
def one_class(monkeypatch):
    import mipkit.synthesizers.peers as peers

    monkeypatch.setattr(
        peers,
        "make_synthesizer",
        lambda method, *, epsilon=None, **kw: _OneClass(method, epsilon=epsilon, **kw),
    )


def test_the_paragraph_says_utility_is_not_measurable(one_class):
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(18, 80, 2000), "income": rng.choice(["low", "high"], 2000)})
    res = synthesize(table, SynthesizeConfig(epsilon=3.0, rows=300, quality_target="income"))
    assert res.quality["train_synthetic_test_real"]["tstr_auc"] is None
    text = res.summary()
    assert "Utility: not measurable: every synthetic record has the same income" in text
    assert text.index("Premise:") < text.index("Utility:")
