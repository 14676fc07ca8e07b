"""What the utility report costs and how it reads: its KS statistic is scipy's, its time is in
``synthesize``'s own, its two AUCs are named apart, it runs under its own progress stage; the audit's
plain words (NNAA, DCR baseline protection, the inference gain, Holm) and no ConvergenceWarning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mipkit.synthesizers.quality_report import _ks


def _table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    city = rng.choice(["a", "b", "c"], n)
    label = np.where(age + rng.normal(0, 10, n) > 50, "hi", "lo")
    return pd.DataFrame({"age": age, "city": city, "label": label})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ks_is_scipys_two_sample_statistic(seed):
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(seed)
    x = pd.Series(rng.integers(0, 20, 300).astype(float))  # ties on both sides
    y = pd.Series(np.append(rng.integers(3, 25, 170).astype(float), np.nan))
    assert _ks(x, y) == pytest.approx(ks_2samp(x.dropna(), y.dropna()).statistic, abs=1e-12)


def test_quality_time_is_in_synthesize_time(monkeypatch):
    import mipkit.synthesizers.quality_report as qr
    import mipkit.workflows.synthesize.run as run
    from mipkit.workflows.synthesize import SynthesizeConfig, synthesize

    now = [0.0]

    class Clock:  # a fake clock: only the utility report moves it
        @staticmethod
        def perf_counter():
            return now[0]

    def slow_report(*args, **kwargs):
        now[0] += 1000.0
        return {"column_shapes": 0.0, "pair_trends": 0.0, "note": "n"}

    monkeypatch.setattr(run, "time", Clock)
    monkeypatch.setattr(qr, "quality_report", slow_report)
    config = SynthesizeConfig(method="ctgan", params={"epochs": 1}, quality=True)
    result = synthesize(_table(60), config)
    assert result.seconds >= 1000.0


def test_the_two_aucs_are_named_apart():
    from mipkit.report.synthetic_quality import quality_rows, quality_sentences

    tstr = {"target": "label", "positive": "hi", "tstr_auc": 0.716, "trtr_auc": 0.870}
    tstr.update(test_rows=50, tested_on="holdout")
    q = {"column_shapes": 0.1, "pair_trends": 0.2, "note": "n", "train_synthetic_test_real": tstr}
    rows = dict(quality_rows(q))
    assert rows["AUC on real records, model trained on synthetic (label)"] == "0.716"
    assert rows["AUC on real records, model trained on real (label; reference)"] == "0.870"
    sentence = next(s for s in quality_sentences(q) if "0.716" in s)
    assert "trained on the synthetic table" in sentence and "reference, reaches 0.870" in sentence


def test_audit_quality_runs_under_its_own_stage():
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic

    stages = []

    def progress(stage, done, total):
        stages.append(stage)

    data = SyntheticRelease(_table(120, 0), _table(120, 1), control=_table(120, 2))
    config = AuditSyntheticConfig(checks=("dcr",), quality_target="label")
    result = audit_synthetic(data, config, progress=progress)
    assert result.quality is not None
    assert stages[-1] == "utility report" and not any("inference" in s for s in stages)


def test_the_audit_says_what_its_numbers_mean():
    from mipkit.report.synthetic_report import summary_rows, summary_sentences
    from mipkit.workflows.audit_synthetic import AuditSyntheticConfig, SyntheticRelease, audit_synthetic
    from mipkit.workflows.audit_synthetic.headline import HEADLINE_LABEL

    data = SyntheticRelease(_table(120, 0), _table(120, 1), control=_table(120, 2))
    config = AuditSyntheticConfig(secrets=("label",), n_attacks=30, n_bootstrap=50)
    result = audit_synthetic(data, config)
    text = " ".join(summary_sentences(result.to_dict()))
    assert "nearest neighbour lies in their own table" in text
    assert "privacy loss is the unseen value minus the training value" in text
    assert "0 = synthetic records sit on real ones" in text
    assert "<= 0 means nothing learnt beyond the population" in text
    labels = " ".join(label for label, _ in summary_rows(result.json_summary()))
    assert "DCR baseline protection (1 = random)" in labels and "PI" not in labels
    assert "corrected for testing several things at once (Holm)" in HEADLINE_LABEL


def test_model_attack_fit_prints_no_convergence_warning():
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    from mipkit.attacks.inference import model_guesses
    from mipkit.data.tables import check_tables

    ref = _table(300)
    schema = check_tables(ref)

    def unconverged(numeric):  # lbfgs stopped early, as on a synthetic table's ill-conditioned features
        return LogisticRegression(max_iter=2)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guesses, _ = model_guesses(ref.head(50), ref, secret="label", known=["age", "city"], schema=schema,
                                   numeric=False, model_factory=unconverged)  # fmt: skip
    assert len(guesses) == 50
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
