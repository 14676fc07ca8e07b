"""DPSGDClassifier: the accounting describes the run that happened, calibration meets its target with the
least noise, the certificate's numbers equal an independent dp_accounting computation, and training equals
TorchMLPClassifier's DP-SGD (tested step for step against Opacus) and a hand-written Opacus loop."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from mipkit import MipkitValueError
from mipkit._random import noise_generator
from mipkit.trainers import DPSGDClassifier, TorchMLPClassifier, fit_many, one_hot

torch = pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

TARGET = {"name": "tpr-at-fpr", "fpr": 0.01, "value": 0.05}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(203, 4))  # 203 rows: batch 20 does not divide them
    y = (X[:, 0] + 0.5 * rng.normal(size=203) > 0).astype(int)
    return X, y


def _dp_accounting_epsilon(z: float, q: float, steps: int, delta: float, relation: str) -> float:
    """Independent: dp_accounting's own PLD accountant (pessimistic, grid 1e-4), no mipkit code."""
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    rel = privacy_accountant.NeighboringRelation
    pld = pld_lib.from_gaussian_mechanism(
        standard_deviation=z,
        sampling_prob=q,
        value_discretization_interval=1e-4,
        neighboring_relation=rel.REPLACE_ONE if relation == "replace_one" else rel.ADD_OR_REMOVE_ONE,
    ).self_compose(steps)
    return float(pld.get_epsilon_for_delta(delta))


def test_the_accounting_is_the_run(data):
    """q = batch/n and T = epochs * ceil(n / batch) are what the trainer ran and what the record says."""
    X, y = data
    clf = DPSGDClassifier((6,), epochs=3, batch_size=20, noise_multiplier=1.1, neighbours="add_remove",
                          learning_rate=0.2, random_state=0).fit(X, y)  # fmt: skip
    cert = clf.certificate_
    assert clf.steps_ == cert.steps == 3 * math.ceil(203 / 20) == 33
    assert clf.sample_rate_ == cert.sample_rate == pytest.approx(20 / 203, rel=1e-15)
    assert clf.noise_multiplier_ == cert.noise_multiplier == 1.1
    assert clf.expected_batch_size_ == pytest.approx(20.0)
    rec = cert.record()
    assert (rec.noise_multiplier, rec.sample_rate, rec.steps) == (1.1, cert.sample_rate, 33)
    assert clf.plan(203) == {
        "noise_multiplier": 1.1, "sample_rate": cert.sample_rate, "steps": 33, "dataset_size": 203,
        "calibration": None,
    }  # fmt: skip
    # a public dataset size fixes q, T and the divisor whatever the number of rows
    fixed = DPSGDClassifier((6,), epochs=3, batch_size=20, noise_multiplier=1.1, dataset_size=250,
                            neighbours="add_remove", random_state=0).fit(X, y)  # fmt: skip
    assert fixed.steps_ == 3 * math.ceil(250 / 20) and fixed.sample_rate_ == pytest.approx(20 / 250)
    assert fixed.expected_batch_size_ == pytest.approx(20.0)


def test_training_equals_the_torch_mlp_dp_sgd(data):
    """Same weights as TorchMLPClassifier at that noise multiplier (whose DP-SGD equals Opacus's)."""
    X, y = data
    kw = {"epochs": 2, "learning_rate": 0.3, "batch_size": 20, "max_grad_norm": 0.7, "random_state": 5,
          "noise_seed": 9}  # fmt: skip
    ours = DPSGDClassifier((5,), noise_multiplier=0.9, neighbours="add_remove", **kw).fit(X, y)
    ref = TorchMLPClassifier((5,), noise_multiplier=0.9, **kw).fit(X, y)
    for a, b in zip(ours.coefs_ + ours.intercepts_, ref.coefs_ + ref.intercepts_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X))


@pytest.mark.filterwarnings("ignore:Full backward hook")
def test_public_dataset_size_equals_an_opacus_loop_with_that_rate(data):
    """With ``dataset_size=N``: Poisson rate batch/N, T = epochs ceil(N / batch) steps, noisy sum divided by
    batch: Opacus's DPOptimizer with expected_batch_size = batch, on the same batches and noise draws."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    X, y = data
    X, y = X[:40], y[:40]
    N, bs, lr, clip, sigma = 64, 8, 0.3, 0.5, 0.7
    est = DPSGDClassifier((3,), epochs=1, learning_rate=lr, batch_size=bs, max_grad_norm=clip,
                          noise_multiplier=sigma, dataset_size=N, neighbours="add_remove",
                          random_state=4, noise_seed=11)  # fmt: skip
    est.fit(X, y)
    assert est.steps_ == 8 and est.sample_rate_ == pytest.approx(bs / N)
    gen = torch.Generator().manual_seed(4)
    layers = []
    for fan_in, fan_out in ((4, 3), (3, 2)):
        lin = torch.nn.Linear(fan_in, fan_out)
        b = math.sqrt(6.0 / (fan_in + fan_out))
        with torch.no_grad():
            lin.weight.copy_((torch.rand((fan_out, fan_in), generator=gen) * 2 - 1) * b)
            lin.bias.zero_()
        layers.append(lin)
    model = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1])
    gsm = GradSampleModule(model, loss_reduction="mean")
    opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=lr), noise_multiplier=0.0, max_grad_norm=clip,
                      expected_batch_size=bs, loss_reduction="mean")  # fmt: skip
    secret = noise_generator(11, stream=(4,))  # the documented protocol: batches, then each step's noise
    chosen = torch.from_numpy(secret.random((8, 40)) < bs / N)
    Xt, Yt = torch.tensor(X, dtype=torch.float32), torch.tensor(one_hot(y, 2), dtype=torch.float32)
    numels = [p.numel() for p in gsm.parameters()]
    for t in range(8):
        rows = torch.nonzero(chosen[t]).flatten()
        opt.zero_grad()
        if rows.numel():
            torch.nn.functional.cross_entropy(gsm(Xt[rows]), Yt[rows]).backward()
        else:  # an empty Poisson batch: only noise
            for p in gsm.parameters():
                p.grad_sample = torch.zeros((0, *p.shape))
        opt.pre_step()
        draw = (secret.standard_normal(sum(numels)) * (sigma * clip)).astype(np.float32)
        noise = torch.split(torch.from_numpy(draw), numels)
        with torch.no_grad():
            for p, z in zip(gsm.parameters(), noise, strict=True):
                p.grad = (p.grad if p.grad is not None else torch.zeros_like(p)) + z.reshape(p.shape) / bs
        opt.original_optimizer.step()
    ours = [w for W, b in zip(est.coefs_, est.intercepts_, strict=True) for w in (W.T, b)]
    for a, b in zip(ours, [p.detach().numpy() for p in model.parameters()], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_certified_epsilon_equals_dp_accounting(data, relation):
    X, y = data
    clf = DPSGDClassifier((), epochs=2, batch_size=20, noise_multiplier=1.3, neighbours=relation,
                          delta=1e-4, random_state=0).fit(X, y)  # fmt: skip
    cert = clf.certificate_
    ref = _dp_accounting_epsilon(1.3, 20 / 203, cert.steps, 1e-4, relation)
    # mipkit's pessimistic PLD on its own grid: an upper bound, within 1% of dp_accounting at grid 1e-4
    assert cert.epsilon >= ref * (1 - 1e-3)
    assert cert.epsilon == pytest.approx(ref, rel=1e-2)
    assert cert.certified["delta"] == 1e-4 and cert.neighbours == relation
    # MIP eta is half the advantage of the replace-one curve, whatever the certificate's relation
    assert cert.eta == pytest.approx(cert.risks("replace_one")["advantage"] / 2)
    curve = cert.curve(relation)
    assert curve.tpr_at_fpr(0.01) == pytest.approx(cert.certified["tpr_at_fpr"]["0.01"])


def test_replace_one_is_the_riskier_relation(data):
    """The audit's game (fixed-size halves) needs the replace-one curve; it is never below add/remove."""
    X, y = data
    cert = (
        DPSGDClassifier((), epochs=2, batch_size=20, noise_multiplier=1.3, random_state=0)
        .fit(X, y)
        .certificate_
    )
    assert cert.neighbours == "replace_one"
    add = cert.risks("add_remove")
    assert cert.certified["advantage"] > add["advantage"]
    assert cert.certified["tpr_at_fpr"]["0.01"] > add["tpr_at_fpr"]["0.01"]
    # the protocol's curve (an attribute, as the audit reads it) is the replace-one one
    assert cert.tradeoff_curve.tpr_at_fpr(0.01) == pytest.approx(cert.certified["tpr_at_fpr"]["0.01"])
    assert float(cert.tradeoff_curve.tpr(0.1)) == pytest.approx(cert.certified["tpr_at_fpr"]["0.1"])


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_calibration_meets_the_target_with_the_least_noise(data, relation):
    from mipkit.accounting import tradeoff_curve
    from mipkit.trainers.dpsgd import dpsgd_record

    X, y = data
    clf = DPSGDClassifier((), epochs=2, batch_size=20, risk_target=TARGET, neighbours=relation,
                          random_state=0).fit(X, y)  # fmt: skip
    cert = clf.certificate_
    z, q, T = cert.noise_multiplier, cert.sample_rate, cert.steps
    assert (q, T) == (20 / 203, 22) and clf.noise_multiplier_ == z
    assert cert.certified["tpr_at_fpr"]["0.01"] <= 0.05
    assert cert.calibration["target"] == "tpr-at-fpr" and cert.calibration["converged"]
    assert cert.calibration["details"]["sample_rate"] == q and cert.calibration["details"]["steps"] == T
    # 1% less noise misses the target (on a fine grid: the search's tolerance is 0.1%)
    less = tradeoff_curve(dpsgd_record(z / 1.01, q, T, relation), value_discretization_interval=2e-4)
    assert less.tpr_at_fpr(0.01) > 0.05


def test_epsilon_target_uses_the_certificate_delta(data):
    X, y = data
    clf = DPSGDClassifier((), epochs=2, batch_size=20, risk_target={"name": "epsilon", "value": 2.0},
                          delta=1e-3, neighbours="add_remove", random_state=0).fit(X, y)  # fmt: skip
    cert = clf.certificate_
    assert cert.calibration["details"]["delta"] == 1e-3
    assert cert.epsilon <= 2.0
    assert (
        _dp_accounting_epsilon(cert.noise_multiplier, cert.sample_rate, cert.steps, 1e-3, "add_remove") <= 2.0
    )


def test_fit_many_groups_by_size_and_each_certificate_is_its_own(data):
    X, y = data
    est = DPSGDClassifier((4,), epochs=1, batch_size=20, noise_multiplier=1.0, neighbours="add_remove",
                          noise_seed=3)  # fmt: skip
    subsets = [np.arange(0, 100), np.arange(50, 150), np.arange(0, 160)]
    models = fit_many(est, X, y, subsets, [1, 2, 3])
    assert [m.certificate_.n_train for m in models] == [100, 100, 160]
    assert [m.steps_ for m in models] == [5, 5, 8]
    assert models[0].certificate_ is models[1].certificate_  # one plan per size
    alone = DPSGDClassifier((4,), epochs=1, batch_size=20, noise_multiplier=1.0, neighbours="add_remove",
                            random_state=2, noise_seed=3).fit(X[subsets[1]], y[subsets[1]])  # fmt: skip
    np.testing.assert_allclose(models[1].predict_proba(X), alone.predict_proba(X), atol=1e-5)


def test_the_certificate_protocol_and_serialisation(data):
    from mipkit.accounting import mechanism_from_dict
    from mipkit.game.trainers import resolve_trainer

    X, y = data
    spec = resolve_trainer(
        "mipkit.trainers.DPSGDClassifier",
        {
            "hidden_layer_sizes": [],
            "epochs": 1,
            "batch_size": 20,
            "risk_target": TARGET,
            "neighbours": "add_remove",
        },
    )
    clf = spec.build(7).fit(X, y)
    cert = clf.certificate_
    d = json.loads(json.dumps(cert.to_dict()))
    assert d["exact"] is True and d["neighbours"] == "add_remove" and d["source"] == "DPSGDClassifier"
    assert set(d["certified"]) == {"eta", "advantage", "tpr_at_fpr", "epsilon", "delta"}
    assert set(d["certified"]["tpr_at_fpr"]) == {"0.001", "0.01", "0.1"}
    assert mechanism_from_dict(d["mechanism"]) == cert.record()
    assert d["eta"] == cert.eta and d["calibration"]["target_value"] == 0.05
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    assert back.certificate_ == cert


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"noise_multiplier": -1.0}, "noise_multiplier"),
        ({}, "exactly one of"),
        ({"noise_multiplier": 1.0, "risk_target": TARGET}, "exactly one of"),
        ({"noise_multiplier": 1.0, "batch_size": 500}, "at most the number of training rows"),
        ({"risk_target": {"name": "tpr-at-fpr", "fpr": 0.01, "value": 0.005}}, "unreachable"),
        ({"risk_target": {"name": "advantage", "value": 0.99}}, "met by any noise multiplier"),
        ({"risk_target": "tpr"}, "risk target"),
        ({"noise_multiplier": 1.0, "neighbours": "swap"}, "neighbours"),
        ({"noise_multiplier": 1.0, "certify_fprs": [0.0]}, "certify_fprs"),
        ({"noise_multiplier": 1.0, "max_grad_norm": 0}, "max_grad_norm"),
    ],
)
def test_bad_settings_are_refused_before_training(data, params, match):
    X, y = data
    base = {"epochs": 1, "batch_size": 20, "neighbours": "add_remove"}
    with pytest.raises(MipkitValueError, match=match):
        DPSGDClassifier((3,), **{**base, **params}).fit(X, y)
