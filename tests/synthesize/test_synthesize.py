"""Preprocessing, the noise of a step, certificates, certified audit bounds and the quality measures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mipkit.accounting import ApproxDP, tradeoff_curve
from mipkit.synthesizers.audit_bounds import certified_audit_bounds, certified_roc_excess
from mipkit.synthesizers.certificate import (
    SynthesisCertificate,
    certificate_curve,
    certificate_from_dp,
    uncertified,
)
from mipkit.synthesizers.preprocess import TabularEncoder, infer_domain
from mipkit.synthesizers.quality import fidelity, mode_collapse_share, utility_auc


def _table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "score": rng.normal(size=n),
            "city": rng.choice(["a", "b", "c"], n),
            "flag": rng.choice(["y", "n"], n),
        }
    )
    df.loc[::17, "city"] = None
    return df


def test_encoder_round_trip_and_range():
    df = _table()
    enc = TabularEncoder().fit(df)
    x = enc.transform(df)
    assert x.dtype == np.float32 and x.min() >= 0.0 and x.max() <= 1.0
    assert enc.domain_source == "data"
    assert x.shape[1] == 1 + 1 + (3 + 1) + 2  # city has a missing category
    back = enc.inverse_transform(x)
    assert list(back.columns) == list(df.columns)
    pd.testing.assert_series_equal(back["age"], df["age"], check_names=False)
    np.testing.assert_allclose(back["score"], df["score"], rtol=1e-6, atol=1e-5)
    assert back["city"].isna().sum() == df["city"].isna().sum()
    assert (back["city"].dropna() == df["city"].dropna()).all()
    assert [(s.start, s.stop) for s in enc.simplices()] == [(2, 6), (6, 8)]


def test_encoder_uses_a_given_domain_and_clips():
    df = _table()
    dom = infer_domain(df)
    dom["age"] = {"type": "numeric", "min": 20, "max": 60, "integer": True}
    enc = TabularEncoder(domain=dom).fit(df)
    assert enc.domain_source == "given"
    back = enc.inverse_transform(enc.transform(df))
    assert back["age"].min() >= 20 and back["age"].max() <= 60


@pytest.mark.parametrize(
    "bad, match",
    [
        (pd.DataFrame({"a": [np.nan, np.nan]}), "all missing"),
        (pd.DataFrame({"a": []}), "empty"),
    ],
)
def test_domain_refuses_bad_tables(bad, match):
    with pytest.raises(ValueError, match=match):
        infer_domain(bad)


def test_step_noise_centres_and_scales():
    from mipkit.synthesizers.bounds import CriticBounds
    from mipkit.synthesizers.noise import MARGIN, step_noise

    b = CriticBounds(
        d_lo=[np.array([98.0, -50.0])],
        d_hi=[np.array([100.0, 50.0])],
        gp_lo=[np.zeros(2)],
        gp_hi=[np.zeros(2)],
        gp_norm=0.0,
        input_grad_lo=np.zeros(1),
        input_grad_hi=np.zeros(1),
    )
    # the thesis's example (ch. 3.1.3): centred release, sensitivity = half the range
    sph = step_noise(b, gp_weight=0.0, noise_multiplier=2.0)
    np.testing.assert_allclose(sph.centre, [-99.0, 0.0])
    assert sph.sensitivity == pytest.approx(math.hypot(1.0, 50.0) * (1 + MARGIN))
    np.testing.assert_allclose(sph.std, 2.0 * sph.sensitivity)
    raw = step_noise(b, gp_weight=0.0, noise_multiplier=2.0, centre=False)
    assert raw.sensitivity == pytest.approx(math.hypot(100.0, 50.0) * (1 + MARGIN))
    sc = step_noise(b, gp_weight=0.0, noise_multiplier=2.0, shape="scaled")
    # per component z sqrt(k) r_i: the same total variance as spherical, spread by range
    np.testing.assert_allclose(sc.std, 2.0 * math.sqrt(2) * np.array([1.0, 50.0]) * (1 + MARGIN))
    assert np.sum(sc.std**2) == pytest.approx(np.sum(sph.std**2))


def test_certificate_from_dp_and_round_trip(tmp_path):
    cert = certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5)
    assert cert.epsilon["add_remove"] == pytest.approx(1.0, abs=1e-6)
    assert cert.epsilon["replace_one"] == pytest.approx(2.0, rel=0.01)  # group privacy (numerical curve)
    assert cert.deltas["replace_one"] == pytest.approx((1 + math.e) * 1e-5)
    assert cert.advantage == pytest.approx(tradeoff_curve(ApproxDP(epsilon=1.0, delta=1e-5)).advantage())
    assert cert.tpr_at_fpr["0.01"] == pytest.approx(1e-5 + math.e * 0.01, rel=1e-6)
    p = cert.write(tmp_path / "certificate.json")
    back = SynthesisCertificate.read(p)
    assert back == cert
    assert float(certificate_curve(back).tpr(0.01)) == pytest.approx(cert.tpr_at_fpr["0.01"])
    assert cert.notes == []
    # a domain read from the data is said in the certificate, whichever way it was made
    from_data = certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5, details={"domain_source": "data"})
    assert len(from_data.notes) == 1 and "read from the training data" in from_data.notes[0]
    assert from_data.epsilon == cert.epsilon
    none = uncertified("ctgan")
    assert not none.certified and none.summary() == {"eta": None, "advantage": None, "tpr_at_fpr": {}}
    with pytest.raises(ValueError, match="no privacy guarantee"):
        certificate_curve(none)


def test_certified_audit_bounds_flags_violations():
    cert = certificate_from_dp(method="mst", epsilon=0.5, delta=1e-6)
    curve = certificate_curve(cert)
    audit = {
        "dcr": {"tpr_at_fpr": {"0.01": 0.5, "0.1": 0.11}, "n_members": 1000, "n_nonmembers": 1000},
        "inference": {
            "income": {"precision": 0.80, "baseline_precision": 0.76, "precision_ci": [0.78, 0.82]},
            "sex": {"precision": 0.99, "baseline_precision": 0.60, "precision_ci": [0.98, 1.0]},
        },
    }
    out = certified_audit_bounds(cert, audit)
    assert out["dcr"]["tpr_at_fpr"]["0.01"]["violation"] and out["dcr"]["tpr_at_fpr"]["0.01"]["significant"]
    assert not out["dcr"]["tpr_at_fpr"]["0.1"]["violation"]
    assert out["inference"]["income"]["certified_success"] == pytest.approx(float(curve.tpr(0.76)))
    assert not out["inference"]["income"]["violation"] and out["inference"]["sex"]["violation"]
    assert len(out["violations"]) == 2
    assert certified_audit_bounds(uncertified("ctgan"), audit)["certified"] is False


def test_roc_excess_against_brute_force():
    rng = np.random.default_rng(1)
    members, non = rng.exponential(1.0, 300), rng.exponential(1.3, 400)
    curve = tradeoff_curve(ApproxDP(epsilon=0.2, delta=0.0))
    out = certified_roc_excess(curve, members, non)
    best = -1.0
    for t in np.unique(np.concatenate([members, non])):
        tpr, fpr = np.mean(members <= t), np.mean(non <= t)
        if fpr >= 1 / non.size:  # unresolved FPRs are not compared
            best = max(best, tpr - float(curve.tpr(fpr)))
    assert out["max_excess"] == pytest.approx(best)
    assert out["above_bound"] == (best > 1 / members.size)  # more than one member above the bound
    # a copy of the training records (DCR 0 for every member) violates any tight guarantee, significantly
    leak = certified_roc_excess(curve, np.zeros(300), non)
    assert leak["violation"] and leak["significant"] and leak["above_bound"]


def test_roc_violation_is_simultaneous_clopper_pearson_brute_force():
    """The verdict equals a direct scan: some resolved point's TPR lower bound above the bound at its FPR
    upper bound, both one-sided Clopper-Pearson (scipy.stats.beta) at level 1 - 0.05 / (2 k)."""
    from scipy import stats

    rng = np.random.default_rng(3)
    curve = tradeoff_curve(ApproxDP(epsilon=0.3, delta=0.0))
    for shift in (1.0, 0.6, 0.3):
        members, non = rng.exponential(shift, 200), rng.exponential(1.0, 150)
        out = certified_roc_excess(curve, members, non)
        pts = []
        for t in np.unique(np.concatenate([members, non])):
            km, kh = int(np.sum(members <= t)), int(np.sum(non <= t))
            if kh >= 1 and kh < non.size:
                pts.append((km, kh))
        level = 1 - 0.05 / (2 * len(pts))
        hit = False
        for km, kh in pts:
            lo = 0.0 if km == 0 else stats.beta.ppf(1 - level, km, members.size - km + 1)
            hi = stats.beta.ppf(level, kh + 1, non.size - kh)
            hit |= lo > float(curve.tpr(hi))
        assert out["compared"] == len(pts) and out["violation"] == hit


def test_violation_false_alarms_on_null_and_power_on_a_leak():
    """Calibration of the headline: members and non-members exchangeable (a synthesizer whose output ignores
    its training data), with the certificate of a tight epsilon = 1 mechanism: violations in at most 5% of
    200 audits (Bonferroni keeps it far below), while point estimates above the bound are common. A leak
    (half the members copied: distance 0) is flagged in every audit."""
    rng = np.random.default_rng(7)
    curve = certificate_curve(certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5))
    runs, false_alarms, above = 200, 0, 0
    for _ in range(runs):
        members, non = rng.exponential(1.0, 2000), rng.exponential(1.0, 600)
        out = certified_roc_excess(curve, members, non)
        false_alarms += out["violation"]
        above += out["above_bound"]
    assert false_alarms / runs <= 0.05
    assert above > false_alarms  # the point rule alone would raise these alarms
    hits = 0
    for _ in range(20):
        members, non = rng.exponential(1.0, 2000), rng.exponential(1.0, 600)
        members[:1000] = 0.0
        hits += certified_roc_excess(curve, members, non)["violation"]
    assert hits == 20


def test_quality_measures():
    real = _table(400, 0)
    same = _table(400, 0)
    other = real.copy()
    other["city"] = "a"
    f0, f1 = fidelity(real, same), fidelity(real, other)
    assert (
        f0["tvd_1way"] == 0
        and f0["tvd_2way"] == 0
        and f0["correlation_difference"] == pytest.approx(0, abs=1e-12)
    )
    assert f1["tvd_1way"] > 0.1 and f1["tvd_2way"] > f0["tvd_2way"]
    assert mode_collapse_share(real, other) == pytest.approx(2 / 5)  # b, c of city never generated
    rng = np.random.default_rng(2)
    train = pd.DataFrame({"x": rng.normal(size=500), "c": rng.choice(["u", "v"], 500)})
    train["y"] = np.where(train["x"] + rng.normal(0, 0.3, 500) > 0, "pos", "neg")
    test = train.sample(200, random_state=0)
    assert utility_auc(train, test, target="y", positive="pos") > 0.9
    # one class: not measurable, never the 0.5 of a guessing classifier
    assert utility_auc(train.assign(y="neg"), test, target="y", positive="pos") is None
