"""A killed DP-WGAN-GP fit resumes from its checkpoint and ends exactly where an uninterrupted fit ends."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from mipkit.synthesizers.dpwgan import DPWGANGP  # noqa: E402


class Killed(Exception):
    """Stands in for a kill: raised from the progress callback."""


def _table(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.choice(["x", "y", "z"], size=n), "c": rng.integers(0, 9, n)}
    )


def _model(**kw) -> DPWGANGP:
    base = {"epsilon": 2.0, "n_generator": 7, "n_critic": 2, "sample_rate": 0.25, "critic_hidden": (8, 8),
            "noise_decay": 0.5, "schedule_groups": 3, "random_state": 3, "noise_seed": 6}  # fmt: skip
    return DPWGANGP(**{**base, **kw})


def _kill_at(iteration: int):
    def progress(stage: str, done: int, total: int) -> None:
        if done == iteration:
            raise Killed

    return progress


def _same_networks(a: DPWGANGP, b: DPWGANGP) -> bool:
    pairs = [*zip(a.generator_.state_dict().values(), b.generator_.state_dict().values(), strict=True)]
    pairs += [*zip(a.critic_.state_dict().values(), b.critic_.state_dict().values(), strict=True)]
    return all(torch.equal(x, y) for x, y in pairs)


def test_resumed_fit_equals_uninterrupted_fit(tmp_path):
    df = _table()
    whole = _model().fit(df)
    ckpt = tmp_path / "checkpoint.pt"
    with pytest.raises(Killed):
        _model(checkpoint=ckpt, checkpoint_every=2, progress=_kill_at(5)).fit(df)
    assert ckpt.is_file()  # iterations 2 and 4 were saved; 5 was lost with the kill
    resumed = _model(checkpoint=ckpt, checkpoint_every=2).fit(df)
    assert resumed.resumed_from_ == 4 and resumed.resumed_seconds_ > 0
    # the certificate's fit time counts the killed run's time up to its checkpoint
    assert resumed.certificate_.details["fit_seconds"] > resumed.resumed_seconds_
    assert _same_networks(whole, resumed)
    for k in whole.history_:
        np.testing.assert_array_equal(whole.history_[k], resumed.history_[k])
    assert resumed.certificate_.epsilon == whole.certificate_.epsilon
    assert resumed.certificate_.details["steps_run"] == whole.certificate_.details["steps_run"] == 14
    pd.testing.assert_frame_equal(whole.sample(50), resumed.sample(50))
    assert not ckpt.exists()  # removed when the fit ends


def test_checkpoint_of_other_data_or_parameters_is_not_used(tmp_path):
    df = _table()
    ckpt = tmp_path / "checkpoint.pt"
    with pytest.raises(Killed):
        _model(checkpoint=ckpt, checkpoint_every=2, progress=_kill_at(3)).fit(df)
    other = _model(checkpoint=ckpt, checkpoint_every=2, random_state=4).fit(df)
    assert other.resumed_from_ == 0
    with pytest.raises(Killed):
        _model(checkpoint=ckpt, checkpoint_every=2, progress=_kill_at(3)).fit(df)
    shifted = df.assign(a=df["a"] + 1.0)
    assert _model(checkpoint=ckpt, checkpoint_every=2).fit(shifted).resumed_from_ == 0
    assert _same_networks(_model().fit(shifted), _model(checkpoint=tmp_path / "x.pt").fit(shifted))


def test_a_file_that_is_not_a_checkpoint_is_replaced(tmp_path):
    ckpt = tmp_path / "checkpoint.pt"
    ckpt.write_bytes(b"not a checkpoint")
    m = _model(checkpoint=ckpt, checkpoint_every=2).fit(_table())
    assert m.resumed_from_ == 0 and not ckpt.exists()


def test_checkpoint_every_is_validated():
    from mipkit._validation import MipkitValueError

    with pytest.raises(MipkitValueError, match="checkpoint_every"):
        _model(checkpoint_every=0)
