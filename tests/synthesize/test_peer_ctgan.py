"""The non-private CTGAN adapter: a fit and sample on a tiny table, reproducible, certifying nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("ctgan", reason="the synth extra (ctgan) is not installed")
pytestmark = pytest.mark.torch


def test_ctgan_fits_samples_reproducibly_and_certifies_nothing():
    from mipkit.synthesizers.peers import CTGANSynthesizer

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, 200),
            "city": np.where(rng.random(200) < 0.1, None, rng.choice(["a", "b"], 200)),
            "income": rng.normal(50, 10, 200),
        }
    )
    synth = CTGANSynthesizer(epochs=2, batch_size=20, random_state=1).fit(df)
    out = synth.sample(100)
    assert list(out.columns) == ["age", "city", "income"] and len(out) == 100
    assert out["age"].dtype == df["age"].dtype
    assert set(out["city"].dropna()) <= {"a", "b"}  # the missing category comes back as missing
    pd.testing.assert_frame_equal(out, synth.sample(100))
    cert = synth.certificate_
    assert not cert.certified and cert.summary()["eta"] is None
