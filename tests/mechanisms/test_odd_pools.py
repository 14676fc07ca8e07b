"""An exact certificate on an odd pool: its bound covers always guessing "out" and the optimal attack.

With ``n = 7`` and ``train_on="half"`` the released half holds 3 records, so a record is in with probability
``p = 3/7`` and always guessing "out" is right ``4/7 = 0.571`` of the time, above ``1/2 + eta = 0.55``. The
certificate's bound is ``max(p, 1 - p) + eta`` (docs/theory.md sections 1 and 2b). Both attacks are
evaluated exactly, over all ``C(7, 3) = 35`` halves, the optimal one by numerical integration of
``max(p f_in, (1 - p) f_out)``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from mipkit.attacks.bayes import membership_posterior, optimal_accuracy_1d
from mipkit.game.splits import all_halves
from mipkit.mechanisms import MIPNoise, mip_release

VALUES = np.array([-1.2, -0.4, 0.1, 0.3, 0.9, 1.5, 4.0])  # 7 records, an outlier last
ETA = 0.05


def _exact_optimal_accuracy(outputs, member, noise, p):
    """``int max(p f_in, (1 - p) f_out)`` on a fine grid (independent of mipkit.attacks.bayes)."""
    std = float(noise.coordinate_std()[0])
    grid = np.linspace(outputs.min() - 12 * std, outputs.max() + 12 * std, 40_001)
    dens = np.exp(noise.log_density((grid[:, None] - outputs[None, :])[..., None]))
    f_in, f_out = dens[:, member].mean(axis=1), dens[:, ~member].mean(axis=1)
    return float(np.trapezoid(np.maximum(p * f_in, (1 - p) * f_out), grid))


@pytest.mark.parametrize("calibration", ["mipkit-gaussian", "mipkit-laplace"])
def test_exact_certificate_on_an_odd_pool_bounds_always_out_and_the_optimal_attack(calibration):
    halves = all_halves(VALUES.size)  # every size-3 subset: the game exactly
    outputs = np.array([VALUES[h].mean() for h in halves])
    sigma = 1.0
    assert outputs.std() <= sigma  # the a-priori sigma is a true bound: the theorem applies
    rel = mip_release(
        np.mean, VALUES, eta=ETA, sigma=sigma, train_on="half", calibration=calibration, noise_seed=1
    )
    cert = rel.certificate
    assert cert.exact
    assert np.allclose(halves.mean(axis=0), 3 / 7)  # each record is in 15 of the 35 halves
    always_out = 1.0 - 3 / 7  # exact: always guessing "out" is right for the 20 halves without the record
    assert always_out > 0.5 + ETA  # a balanced bound is broken by a guess that ignores the release
    stated = float(re.search(r"accuracy <= ([0-9]*\.?[0-9]+)", cert.guarantee).group(1))
    assert always_out <= stated  # what the certificate says covers the trivial attack
    assert stated == pytest.approx(4 / 7 + ETA, abs=1e-4) and "always guessing 'out'" in cert.guarantee
    assert cert.membership_probability == pytest.approx(3 / 7)
    assert cert.accuracy_bound == pytest.approx(4 / 7 + ETA)
    for target in range(VALUES.size):
        member = halves[:, target]
        exact = _exact_optimal_accuracy(outputs, member, rel.noise, 3 / 7)
        assert always_out - 1e-6 <= exact <= cert.accuracy_bound
        # mipkit's own optimal attack uses the game's prior, so it agrees with the independent integral
        assert optimal_accuracy_1d(outputs[:, None], halves, rel.noise, target=target) == pytest.approx(
            exact, abs=1e-4
        )


def test_the_posterior_uses_the_prior_of_an_odd_pool():
    halves = all_halves(VALUES.size)
    outputs = np.array([VALUES[h].mean() for h in halves])[:, None]
    noise = mip_release(np.mean, VALUES, eta=ETA, sigma=1.0, train_on="half", noise_seed=0).noise
    released = np.array([[0.0], [3.0]])
    post = membership_posterior(released, outputs, halves, noise, targets=[6])
    k = np.exp(noise.log_density(released[:, None, :] - outputs[None, :, :]))  # (2, 35)
    truth = k[:, halves[:, 6]].sum(axis=1) / k.sum(axis=1)  # P(in | release), all halves weighted equally
    assert np.allclose(post[:, 0], truth)


def test_mipnoise_and_even_pools():
    from mipkit.game.splits import membership_probability

    X = np.random.default_rng(0).normal(size=(9, 2))
    y = np.r_[np.zeros(5), np.ones(4)]
    from sklearn.linear_model import LogisticRegression

    odd = MIPNoise(LogisticRegression(), sigma=1.0, train_on="half", noise_seed=0).fit(X, y)
    assert odd.certificate_.membership_probability == pytest.approx(4 / 9)
    assert odd.certificate_.accuracy_bound == pytest.approx(5 / 9 + 0.05)
    even = mip_release(np.mean, VALUES[:6], sigma=1.0, train_on="half", noise_seed=0).certificate
    assert even.membership_probability == 0.5 and even.accuracy_bound == pytest.approx(0.55)
    assert membership_probability(7) == pytest.approx(3 / 7)
    # "all": the data is a random half of a pool of twice the rows, a balanced game
    assert mip_release(np.mean, VALUES, sigma=1.0, noise_seed=0).certificate.accuracy_bound == 0.55
