"""Signals: true-class probability, cross-entropy and LiRA's logit-scaled confidence, checked against
high-precision (mpmath / decimal) values at extreme probabilities."""

from __future__ import annotations

import decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipkit._validation import MipkitValueError
from mipkit.attacks import cross_entropy_loss, logit_confidence, true_class_probability
from mipkit.attacks.signals import TINY

try:  # mpmath comes with sympy / torch; the decimal-based tests below need only the standard library
    import mpmath

    mpmath.mp.dps = 60
except ImportError:  # pragma: no cover
    mpmath = None

needs_mpmath = pytest.mark.skipif(mpmath is None, reason="mpmath is not installed")
decimal.getcontext().prec = 60


def _rows_with_true_prob(p_true: float, n_classes: int) -> np.ndarray:
    """A probability row with ``p_true`` in column 0 and the rest spread unevenly over the others."""
    weights = np.arange(1, n_classes, dtype=float)
    rest = (1.0 - p_true) if p_true < 0.5 else None
    if rest is None:
        # 1 - p_true computed in high precision, so the row is a faithful probability vector
        rest = float(1 - decimal.Decimal(p_true))
    return np.concatenate([[p_true], rest * weights / weights.sum()])


EXTREME = [1 - 1e-12, 1 - 1e-15, 1 - 2**-52, 0.5, 0.3, 1e-12, 1e-100, 1e-300]


@needs_mpmath
@pytest.mark.parametrize("p_true", EXTREME)
@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_logit_confidence_matches_mpmath_at_extreme_probabilities(p_true, n_classes):
    row = _rows_with_true_prob(p_true, n_classes)
    got = logit_confidence(row[None, :], np.array([0]))[0]
    # the exact value of the definition for these float inputs, in 60 digits
    others = mpmath.fsum(mpmath.mpf(float(v)) for v in row[1:])
    exact = mpmath.log(mpmath.mpf(float(row[0]))) - mpmath.log(others)
    assert abs(got - float(exact)) <= 1e-13 * max(1.0, abs(float(exact)))


@needs_mpmath
def test_naive_logit_loses_precision_where_the_stable_one_does_not():
    """log(p/(1-p)) with 1-p formed from p is off by ~1e-3 at p = 1 - 1e-15; the stable form is exact."""
    row = np.array([1 - 1e-15, 6e-16, 4e-16])
    exact = float(mpmath.log(mpmath.mpf(row[0])) - mpmath.log(mpmath.mpf(row[1]) + mpmath.mpf(row[2])))
    naive = np.log(row[0]) - np.log1p(-row[0])
    stable = logit_confidence(row[None, :], np.array([0]))[0]
    assert abs(naive - exact) > 1e-4
    assert abs(stable - exact) < 1e-13 * abs(exact)


def test_logit_confidence_with_decimal_reference():
    """Same check with the standard library's decimal (60 digits), independent of mpmath."""
    for p_true in EXTREME:
        row = _rows_with_true_prob(p_true, 4)
        exact = decimal.Decimal(float(row[0])).ln() - sum(decimal.Decimal(float(v)) for v in row[1:]).ln()
        got = logit_confidence(row[None, :], np.array([0]))[0]
        assert abs(got - float(exact)) <= 1e-13 * max(1.0, abs(float(exact)))


@needs_mpmath
@pytest.mark.parametrize("logits", [[1000.0, 0.0, -5.0], [-800.0, 10.0, 3.0], [0.1, 0.2, 0.3], [40.0, -40.0]])
def test_logit_confidence_and_loss_from_logits_match_mpmath(logits):
    z = np.array(logits)
    zs = [mpmath.mpf(v) for v in logits]
    others = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in zs[1:]))
    exact_phi = zs[0] - others
    exact_loss = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in zs)) - zs[0]
    phi = logit_confidence(z[None, :], np.array([0]), from_logits=True)[0]
    loss = cross_entropy_loss(z[None, :], np.array([0]), from_logits=True)[0]
    assert abs(phi - float(exact_phi)) <= 1e-12 * max(1.0, abs(float(exact_phi)))
    assert abs(loss - float(exact_loss)) <= 1e-12 * max(1.0, abs(float(exact_loss)))
    p = true_class_probability(z[None, :], np.array([0]), from_logits=True)[0]
    assert p == pytest.approx(float(mpmath.exp(-exact_loss)), rel=1e-12, abs=1e-300)


def test_probabilities_and_logits_agree_for_moderate_values():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 5)) * 3
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = rng.integers(0, 5, size=50)
    np.testing.assert_allclose(
        logit_confidence(probs, y), logit_confidence(z, y, from_logits=True), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(
        cross_entropy_loss(probs, y), cross_entropy_loss(z, y, from_logits=True), rtol=1e-10, atol=1e-12
    )


def test_cross_entropy_is_clipped_to_a_finite_value():
    probs = np.array([[0.0, 1.0], [1.0, 0.0], [0.25, 0.75]])
    loss = cross_entropy_loss(probs, np.array([0, 0, 1]))
    np.testing.assert_allclose(loss, [-np.log(TINY), 0.0, np.log(4 / 3)])
    phi = logit_confidence(probs, np.array([0, 0, 1]))
    np.testing.assert_allclose(phi, [np.log(TINY), -np.log(TINY), np.log(3)])


def test_leading_axes_broadcast_over_models():
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(4), size=(3, 7))  # (K=3, n=7, C=4)
    y = rng.integers(0, 4, size=7)
    stacked = logit_confidence(probs, y)
    assert stacked.shape == (3, 7)
    for k in range(3):
        np.testing.assert_array_equal(stacked[k], logit_confidence(probs[k], y))
        np.testing.assert_array_equal(true_class_probability(probs, y)[k], probs[k, np.arange(7), y])


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.0, exclude_max=True))
def test_binary_logit_is_antisymmetric_in_the_label(p):
    """For two classes phi(p, y=1) = log p1 - log p0 = -phi(p, y=0), exactly."""
    row = np.array([[1.0 - p, p]])
    a = logit_confidence(row, np.array([1]))[0]
    b = logit_confidence(row, np.array([0]))[0]
    assert a == -b


@pytest.mark.parametrize(
    "probs, y",
    [
        (np.array([0.5, 0.5]), np.array([0])),  # 1-D
        (np.array([[0.5, 0.5]]), np.array([2])),  # label out of range
        (np.array([[0.5, 0.5]]), np.array([0, 1])),  # length mismatch
        (np.array([[1.5, -0.5]]), np.array([0])),  # not probabilities
        (np.array([[np.nan, 0.5]]), np.array([0])),
    ],
)
def test_bad_inputs_raise(probs, y):
    with pytest.raises(MipkitValueError):
        logit_confidence(probs, y)
