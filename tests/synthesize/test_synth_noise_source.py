"""Every DP synthesizer draws its noise, batches and private selections from OS entropy by default.

The attack: ``--seed`` is public (results, certificates, shell history). Were the protective draws made from
it, anyone could rerun the fit on the data with and without a target record and compare with the released
table; identical output would reveal membership. So two runs with the same seed must differ, and only an
explicit ``noise_seed`` makes a fit reproducible (the certificate then says so).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from mipkit._random import OS_ENTROPY, SEEDED
from mipkit.cli import main
from mipkit.synthesizers.certificate import SEEDED_NOTE
from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

FAST = {
    "dpwgan-gp": {"n_generator": 3, "n_critic": 2, "critic_hidden": (8,), "sample_rate": 0.3},
    "aim": {"iters": 30, "round_iters": 10, "rounds": 3},
    "mst": {"iters": 30},
}


def _table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": np.where(rng.random(n) < 0.8, a, "x"), "c": rng.normal(size=n)})


def _needs(method: str) -> None:
    if method.startswith("dpwgan"):
        pytest.importorskip("torch")
    else:
        pytest.importorskip("mbi", reason="the synth extra (mbi) is not installed")


#: The table's public domain (what a code book would list).
DOMAIN = {
    "a": {"type": "categorical", "categories": ["x", "y", "z"]},
    "b": {"type": "categorical", "categories": ["x", "y", "z"]},
    "c": {"type": "numeric", "min": -5.0, "max": 5.0},
}


def _run(method: str, **kw):
    return synthesize(
        PrivateTable(_table(), DOMAIN),
        SynthesizeConfig(method=method, epsilon=3.0, rows=60, random_state=0, params=FAST[method], **kw),
    )


@pytest.mark.parametrize("method", ["dpwgan-gp", "aim", "mst"])
def test_the_seed_does_not_replay_a_synthesizer_and_a_noise_seed_does(method):
    _needs(method)
    a, b = _run(method), _run(method)
    assert not a.synthetic.equals(b.synthetic)  # the same seed, different noise
    assert a.certificate.noise_source == OS_ENTROPY and a.to_dict()["noise_source"] == "os-entropy"
    assert SEEDED_NOTE not in a.certificate.notes
    c, d = _run(method, noise_seed=7), _run(method, noise_seed=7)
    pd.testing.assert_frame_equal(c.synthetic, d.synthetic)
    assert c.certificate.to_dict()["noise_source"] == SEEDED and SEEDED_NOTE in c.certificate.notes


def test_a_resumed_fit_continues_the_secret_noise_stream(tmp_path):
    """Without a noise seed, the checkpoint holds the noise generator's state: two resumptions of one
    checkpoint end with the same networks (the noise after the kill is the saved stream's)."""
    torch = pytest.importorskip("torch")
    from mipkit.synthesizers.dpwgan import DPWGANGP

    class Killed(Exception):
        pass

    def kill(stage, done, total):
        if done == 3:
            raise Killed

    kw = {"n_generator": 5, "n_critic": 2, "critic_hidden": (8,), "sample_rate": 0.3, "checkpoint_every": 2}
    ckpt = tmp_path / "checkpoint.pt"
    with pytest.raises(Killed):
        DPWGANGP(checkpoint=ckpt, progress=kill, **kw).fit(_table())
    assert "noise_rng" in torch.load(ckpt, weights_only=True)
    shutil.copy(ckpt, tmp_path / "copy.pt")
    first = DPWGANGP(checkpoint=ckpt, **kw).fit(_table())
    second = DPWGANGP(checkpoint=tmp_path / "copy.pt", **kw).fit(_table())
    assert first.resumed_from_ == second.resumed_from_ == 2
    for x, y in zip(first.critic_.state_dict().values(), second.critic_.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    fresh = DPWGANGP(**kw).fit(_table())
    assert not torch.equal(next(iter(first.critic_.parameters())), next(iter(fresh.critic_.parameters())))


def test_synthesize_cli_noise_seed(tmp_path, capsys):
    _needs("mst")
    _table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "domain.json").write_text(json.dumps(DOMAIN))

    def run(out, *extra):
        argv = ["synthesize", "--data", str(tmp_path / "t.csv"), "--method", "mst", "--epsilon", "3",
                "--rows", "60", "--seed", "0", "--params", json.dumps(FAST["mst"]), "--out", str(out),
                "--domain", str(tmp_path / "domain.json"), *extra]  # fmt: skip
        assert main(argv) == 0
        return capsys.readouterr().out, (out / "synthetic.csv").read_text()

    printed, first = run(tmp_path / "a", "--json")
    _, second = run(tmp_path / "b", "--json")
    assert first != second and json.loads(printed)["noise_source"] == "os-entropy"
    assert json.loads((tmp_path / "a" / "certificate.json").read_text())["noise_source"] == "os-entropy"
    printed, third = run(tmp_path / "c", "--noise-seed", "7")
    _, fourth = run(tmp_path / "d", "--noise-seed", "7", "--json")
    assert third == fourth and "noise seed" in printed
