"""One source of random halves: the same seed gives the same halves through every path that draws them.

The paths: MIP noise (``fit_on_halves``, ``MIPNoise``'s sigma fits and released half, ``mip_release``; the
released half is secret, drawn by the noise generator, here seeded through ``noise_seed``), the
noise audit's MIP game (reference and game pools), and the model audit's design (``independent_halves``).
Each is compared with :func:`mipkit.game.splits.random_halves` called directly with the seed the path
documents.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from mipkit._random import noise_generator, spawn_seeds
from mipkit.game import independent_halves, random_half, random_halves
from mipkit.mechanisms import MIPNoise, fit_on_halves, mip_release
from mipkit.workflows.audit import run as audit_model
from mipkit.workflows.audit_noise import AuditNoiseConfig
from mipkit.workflows.audit_noise import run as audit_noise

SEEDS = [0, 7, 2**31 - 2]


def regression(n: int = 40, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + rng.normal(size=n)


def as_mask(rows: np.ndarray, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return mask


@pytest.mark.parametrize("seed", SEEDS)
def test_fit_on_halves_and_the_audit_design_draw_the_same_halves(seed):
    X, y = regression()
    _, halves = fit_on_halves(LinearRegression(), X, y, n_fits=9, random_state=seed)
    direct = random_halves(40, 9, random_state=seed)
    np.testing.assert_array_equal(halves, direct)
    np.testing.assert_array_equal(independent_halves(40, 9, random_state=seed), direct)
    np.testing.assert_array_equal(audit_model.independent_halves(40, 9, random_state=seed), direct)


@pytest.mark.parametrize("seed", SEEDS)
def test_mipnoise_draws_its_halves_from_random_halves(seed):
    X, y = regression(n=30)
    m = MIPNoise(
        LinearRegression(), eta=0.1, n_estimates=6, train_on="half", random_state=seed, noise_seed=seed
    ).fit(X, y)
    _, seed_fits, _, _ = spawn_seeds(seed, 4)
    np.testing.assert_array_equal(m.half_masks_, random_halves(30, 6, random_state=seed_fits))
    secret = noise_generator(seed)  # the released half is secret: the noise generator's first draw
    np.testing.assert_array_equal(m.train_indices_, np.flatnonzero(random_half(30, random_state=secret)))
    # each sigma fit is the fit on its half
    for b in (0, 5):
        ref = LinearRegression().fit(X[m.half_masks_[b]], y[m.half_masks_[b]])
        np.testing.assert_allclose(m.half_outputs_[b], np.r_[ref.coef_, ref.intercept_])


@pytest.mark.parametrize("seed", SEEDS)
def test_mip_release_evaluates_on_the_same_halves(seed):
    n = 24
    seen: list[np.ndarray] = []

    def record_rows(rows: np.ndarray) -> np.ndarray:
        seen.append(as_mask(rows[:, 0].astype(int), n))
        return rows.mean(axis=0)

    D = np.arange(n, dtype=float)[:, None]
    mip_release(record_rows, D, eta=0.1, n_estimates=5, train_on="half", random_state=seed, noise_seed=seed)
    _, seed_fits, _, _ = spawn_seeds(seed, 4)
    np.testing.assert_array_equal(seen[0], random_half(n, random_state=noise_generator(seed)))
    np.testing.assert_array_equal(np.stack(seen[1:]), random_halves(n, 5, random_state=seed_fits))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_noise_audit_game_pools_are_random_halves(seed, monkeypatch):
    X, y = regression(n=20)
    pools = {}
    real_game = audit_noise.mip_game

    def spy(outputs, halves, noise, **kwargs):
        pools["game"] = halves
        pools["reference"] = kwargs["reference"][1]
        return real_game(outputs, halves, noise, **kwargs)

    monkeypatch.setattr(audit_noise, "mip_game", spy)
    config = AuditNoiseConfig(
        model=LinearRegression(), eta=0.1, n_reference=8, n_releases=5, n_targets=2, seed=seed
    )
    result = audit_noise.audit_noise((X, y), config).game
    seed_ref, seed_game, _, _ = spawn_seeds(seed, 4)
    np.testing.assert_array_equal(pools["reference"], random_halves(20, 8, random_state=seed_ref))
    np.testing.assert_array_equal(pools["game"], random_halves(20, 5, random_state=seed_game))
    assert result.overall.trials == 10
