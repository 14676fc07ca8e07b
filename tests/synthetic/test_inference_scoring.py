"""How numeric guesses are scored: Francis & Wagner's rule (``docs/theory.md`` section 4).

A numeric guess is right within a share of the targets' range; the most frequent value, one constant for every
target, only where it equals the truth. Each rule is tested with the case that breaks the other rule: a skewed
column where a constant within the tolerance hides a real inference, and an extreme record outside the targets
that widens an original-range tolerance until every guess is right.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.attacks.inference import InferenceGuesses
from mipkit.data.tables import check_tables
from mipkit.metrics.inference import analysis_correct, measure_inference
from mipkit.workflows.audit_synthetic.measure import attribute_inference

# a skewed secret (like BankChurners' Avg_Open_To_Buy): 20 targets, most just above the mode 1, a long tail
TRUTH = np.array([1.0] * 6 + [2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5] + [60, 70, 80, 90, 100, 101])
TOL = 0.05 * np.ptp(TRUTH)  # 5.0


def test_a_constant_counts_only_when_exact_on_a_skewed_column():
    mode = np.full(20, 1.0)
    # within 5.0 of the mode lie the six 1s and the eight values up to 5.5: 14 of 20; equal to it, 6
    assert analysis_correct("most_frequent", mode, TRUTH, numeric=True, tolerance=TOL).sum() == 6
    old = analysis_correct(
        "most_frequent", mode, TRUTH, numeric=True, tolerance=TOL, constant_guess="tolerance"
    )
    assert old.sum() == 14
    # every other analysis is scored within the tolerance, a constant model's guesses too
    assert analysis_correct("model", mode, TRUTH, numeric=True, tolerance=TOL).sum() == 14
    # categorical secrets: equal text, whatever the rule
    cat = np.array(["a", "b"], dtype=object)
    assert analysis_correct(
        "most_frequent", cat, np.array(["a", "a"]), numeric=False, tolerance=0
    ).tolist() == [
        True,
        False,
    ]


def test_a_constant_within_the_tolerance_would_hide_an_inference():
    # an attack that infers each target's value within the tolerance on 13 of 20 targets (off by 4, or by 30
    # on the last seven), against the most-frequent baseline: scored within the tolerance the constant gets
    # 14 of 20 for the crowd near the mode and the inference looks like a loss
    attack = TRUTH + np.where(np.arange(20) < 13, 4.0, 30.0)
    guesses = InferenceGuesses(
        secret="x",
        known=("z",),
        numeric=True,
        tolerance=TOL,
        rows=np.arange(20),
        truth=TRUTH,
        attacks={"nearest": (attack, np.zeros(20))},
        baselines={"most_frequent": np.full(20, 1.0)},
        tolerance_share=0.05,
    )
    res = measure_inference(guesses, n_bootstrap=200)
    assert res.precision == pytest.approx(13 / 20) and res.baseline_precision == pytest.approx(6 / 20)
    assert res.precision_improvement == pytest.approx((13 / 20 - 6 / 20) / (1 - 6 / 20))
    old = measure_inference(guesses, n_bootstrap=200, constant_guess="tolerance")
    assert old.baseline_precision == pytest.approx(14 / 20) and old.precision_improvement < 0
    with pytest.raises(MipkitValueError, match="constant_guess"):
        measure_inference(guesses, constant_guess="median")


def test_the_tolerance_is_a_share_of_the_targets_range():
    # secret x in 0..9 and one extreme record (1000) that is not a target; the release copies the original.
    # 5% of the original's range (50) would make every guess on 0..9 right, the baseline perfect and the copy
    # unmeasurable; 5% of the targets' range (0.45) asks for the exact integer.
    rng = np.random.default_rng(3)
    n = 200
    orig = pd.DataFrame({"z": rng.permutation(n).astype(float), "x": rng.integers(0, 10, n).astype(float)})
    orig.loc[7, "x"] = 1000.0
    schema = check_tables(orig, {"synthetic": orig})
    kw = {"secret": "x", "schema": schema, "n_attacks": 50, "attacks": ("nearest",), "n_jobs": 1}
    res = attribute_inference(orig, orig.copy(), random_state=1, match_reference_size=False, **kw)
    rows = res.per_target["row"].to_numpy()
    assert 7 not in rows
    assert res.tolerance == pytest.approx(0.05 * np.ptp(orig["x"].to_numpy()[rows])) and res.tolerance < 0.5
    assert res.precision == 1.0  # each target's nearest synthetic record is its copy
    assert res.baseline_precision < 0.3
    assert res.precision_improvement > 0.6
