"""dpwgan-clip's post-processing: the generator's moving average against a hand computation, the marginal
matching against the released counts (and only them), and its sampling design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from mipkit.synthesizers import clip_train  # noqa: E402
from mipkit.synthesizers.clip_sample import (  # noqa: E402
    inclusion_probabilities,
    rake,
    systematic_sample,
)
from mipkit.synthesizers.dpwgan_clip import DPWGANClip  # noqa: E402

pytestmark = pytest.mark.torch

TINY = {"steps": 6, "batch_size": 20, "critic_hidden": (8, 8), "generator_hidden": (8,), "latent_dim": 4}
DOMAIN = {
    "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
    "city": {"type": "categorical", "categories": ["a", "b", "c", "rare"]},
    "flag": {"type": "categorical", "categories": ["n", "y"]},
}


def _table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    city = rng.choice(["a", "b", "c"], n, p=[0.6, 0.38, 0.02])
    return pd.DataFrame({"age": rng.integers(18, 80, n), "city": city, "flag": rng.choice(["y", "n"], n)})


def test_sampling_generator_is_the_moving_average_of_the_weights(monkeypatch):
    """The weights after every generator step, averaged by hand, are the sampled generator's."""
    seen: list[list[np.ndarray]] = []
    init, step = clip_train.ClipTraining.__init__, clip_train.ClipTraining.generator_step

    def snapshot(run):
        seen.append([p.detach().numpy().copy() for p in run.generator.parameters()])

    def patched_init(self, *a, **k):
        init(self, *a, **k)
        snapshot(self)

    def patched_step(self):
        step(self)
        snapshot(self)

    monkeypatch.setattr(clip_train.ClipTraining, "__init__", patched_init)
    monkeypatch.setattr(clip_train.ClipTraining, "generator_step", patched_step)
    decay = 0.6
    m = DPWGANClip(epsilon=2.0, domain=DOMAIN, ema=decay, **TINY).fit(_table())
    assert len(seen) == 1 + TINY["steps"]
    want = [w.astype(np.float64) for w in seen[0]]
    for weights in seen[1:]:
        want = [decay * a + (1 - decay) * w for a, w in zip(want, weights, strict=True)]
    got = [p.detach().numpy() for p in m.generator_.parameters()]
    assert not np.allclose(got[0], seen[-1][0])  # not the last weights
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    last = DPWGANClip(epsilon=2.0, domain=DOMAIN, ema=0.0, **TINY).fit(_table())
    seen_last = seen[-1]
    for g, w in zip(last.generator_.parameters(), seen_last, strict=True):
        np.testing.assert_array_equal(g.detach().numpy(), w)


def _freq(values: pd.Series, categories: list[str]) -> np.ndarray:
    return values.astype(str).value_counts(normalize=True).reindex(categories, fill_value=0.0).to_numpy()


def test_matched_output_follows_the_released_counts_not_the_rows():
    """The attack: the rows say city "a" is 60%; the released counts (here set by hand) say "b" is. The
    matched sample follows the released frequencies, which is all the sampler reads of the data."""
    m = DPWGANClip(epsilon=2.0, domain=DOMAIN, noise_seed=1, **TINY).fit(_table())
    m.category_counts_ = [np.array([20.0, 150.0, 20.0, 10.0]), np.array([160.0, 40.0])]
    want = m.category_frequencies()
    out = m.sample(4000, random_state=3)
    np.testing.assert_allclose(_freq(out["city"], ["a", "b", "c", "rare"]), want[0], atol=0.03)
    np.testing.assert_allclose(_freq(out["flag"], ["n", "y"]), want[1], atol=0.03)
    assert len(out) == 4000


def test_one_changed_row_with_the_same_counts_leaves_the_sampling_frequencies():
    """Changing a record's numeric value keeps the released counts (same noise seed), so the frequencies
    that sampling matches are the same."""
    a = _table()
    b = a.copy()
    b.loc[0, "age"] = 79 if a.loc[0, "age"] != 79 else 18
    fit = {"epsilon": 2.0, "domain": DOMAIN, "noise_seed": 4, "random_state": 0, **TINY}
    ma, mb = DPWGANClip(**fit).fit(a), DPWGANClip(**fit).fit(b)
    for fa, fb in zip(ma.category_frequencies(), mb.category_frequencies(), strict=True):
        np.testing.assert_array_equal(fa, fb)


def test_rake_matches_every_marginal():
    rng = np.random.default_rng(0)
    codes = [rng.choice(3, 5000, p=[0.7, 0.2, 0.1]), rng.choice(2, 5000, p=[0.9, 0.1])]
    targets = [np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.5])]
    w = rake(codes, targets)
    assert w.mean() == pytest.approx(1.0)
    for idx, t in zip(codes, targets, strict=True):
        np.testing.assert_allclose(np.bincount(idx, weights=w) / w.sum(), t, atol=1e-6)


def test_rake_leaves_an_ungenerated_category_unmet():
    codes = [np.array([0, 0, 1, 1])]
    w = rake(codes, [np.array([0.25, 0.25, 0.5])])
    np.testing.assert_allclose(np.bincount(codes[0], weights=w) / w.sum(), [0.5, 0.5])


def test_inclusion_probabilities_cap_at_one_and_sum_to_n():
    pi = inclusion_probabilities(np.array([100.0, 1.0, 1.0, 1.0, 1.0, 0.0]), 3)
    assert pi[0] == 1.0 and pi[-1] == 0.0
    assert pi.sum() == pytest.approx(3.0) and (pi <= 1.0).all()
    np.testing.assert_allclose(pi[1:5], 0.5)


def test_systematic_sample_is_distinct_and_has_the_inclusion_probabilities():
    pi = inclusion_probabilities(np.array([5.0, 1.0, 1.0, 2.0, 3.0, 0.5, 0.5]), 3)
    rng = np.random.default_rng(1)
    hits = np.zeros(pi.size)
    for _ in range(4000):
        idx = systematic_sample(pi, rng)
        assert idx.size == 3 and np.unique(idx).size == 3
        hits[idx] += 1
    np.testing.assert_allclose(hits / 4000, pi, atol=0.03)


@pytest.mark.parametrize("ema", [1.0, -0.1])
def test_a_bad_ema_is_one_line(ema):
    from mipkit import MipkitValueError

    with pytest.raises(MipkitValueError, match="'ema' parameter of DPWGANClip"):
        DPWGANClip(ema=ema)


def test_matching_returns_the_rows_asked_for_when_few_pooled_rows_have_weight(monkeypatch):
    """Released counts that put all mass on one category, a pool no larger than the sample: still ``n``
    rows, all of that category."""
    from mipkit.synthesizers import dpwgan_clip

    monkeypatch.setattr(dpwgan_clip, "POOL", 1)
    m = DPWGANClip(epsilon=2.0, domain=DOMAIN, uniform_share=0.0, noise_seed=1, **TINY).fit(_table())
    m.category_counts_ = [np.array([0.0, 0.0, 0.0, 100.0]), np.array([50.0, 50.0])]
    out = m.sample(300, random_state=0)
    assert len(out) == 300
    assert (out["city"] == "rare").all()
