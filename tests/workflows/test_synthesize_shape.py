"""synthesize has the one shape: a config checked when built (one rule per case), the verb on a
PrivateTable, and a result whose DPIA paragraph, dict, frame and files agree; the paragraph names the
released table and the composed epsilon, and puts the data-dependent premise (the domain) first.

The synthesizer itself is not what these tests are about: a stand-in samples the training rows and carries
the certificate of an (epsilon, delta)-DP release, composed with the domain estimate as a real one is."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mipkit import MipkitValueError
from mipkit.accounting import EtaTarget
from mipkit.cli import main
from mipkit.synthesizers.certificate import certificate_from_dp
from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, SynthesizeResult, synthesize

PARTS = ("Released:", "Headline risk:", "What it means:", "Premise:")
DOMAIN = {
    "age": {"type": "numeric", "min": 18, "max": 79, "integer": True},
    "city": {"type": "categorical", "categories": ["a", "b", "c"]},
}


class _StandIn:
    """Samples the training rows; certifies (epsilon, delta)-DP for what it was given."""

    def __init__(self, method, *, epsilon, delta, noise_seed=None, **kwargs):
        from mipkit._random import noise_source

        self.method, self.epsilon, self.delta = method, epsilon, delta
        self.source = noise_source(noise_seed)

    def fit(self, table):
        self.table_ = table
        self.certificate_ = certificate_from_dp(
            method=self.method, epsilon=self.epsilon, delta=self.delta, noise_source=self.source
        )
        return self

    def sample(self, n):
        return self.table_.sample(n, replace=True, random_state=0).reset_index(drop=True)


@pytest.fixture()
def stand_in(monkeypatch):
    import mipkit.synthesizers.peers as peers

    def make(method, *, epsilon=None, **kwargs):
        if kwargs.pop("unknown_option", None) is not None:
            raise TypeError("__init__() got an unexpected keyword argument 'unknown_option'")
        return _StandIn(method, epsilon=3.0 if epsilon is None else epsilon, **kwargs)

    monkeypatch.setattr(peers, "make_synthesizer", make)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(18, 80, 3000), "city": rng.choice(["a", "b", "c"], 3000)})


BAD = [
    ({"method": "gan"}, "'method'"),
    ({"epsilon": 0.0}, "must be > 0 and at most 100"),
    ({"epsilon": 1000.0}, "must be > 0 and at most 100"),
    ({"epsilon": float("nan")}, "must be > 0"),
    ({"epsilon": 1.0, "target": EtaTarget(0.1)}, "not both"),
    ({"delta": 0.0}, "'delta'"),
    ({"delta": 1.0}, "'delta'"),
    ({"target": "eta=0.1"}, "risk target"),
    ({"rows": 0}, "'rows'"),
    ({"domain_share": 1.0}, "'domain_share'"),
    ({"drop": "id"}, "'drop'"),
    ({"random_state": -1}, "'random_state'"),
    ({"noise_seed": 1.5}, "'noise_seed'"),
    ({"params": [("iters", 5)]}, "'params'"),
    ({"quality": "yes"}, "'quality'"),
    ({"quality_target": 3}, "'quality_target'"),
]


@pytest.mark.parametrize(("bad", "needle"), BAD, ids=[f"{next(iter(b))}-{i}" for i, (b, _) in enumerate(BAD)])
def test_each_rule_of_the_config_refuses_a_bad_value(bad, needle):
    with pytest.raises(MipkitValueError, match=needle) as err:
        SynthesizeConfig(**bad)
    assert "\n" not in str(err.value)


def test_the_config_normalises_and_replace_checks_again():
    config = SynthesizeConfig(epsilon=2, drop=["id"], params={"iters": 5})
    assert config.epsilon == 2.0 and config.drop == ("id",) and config.method == "mst"
    assert json.dumps(config.to_dict())
    with pytest.raises(MipkitValueError, match="not both"):
        config.replace(target=EtaTarget(0.1))
    assert config.replace(epsilon=None, target=EtaTarget(0.1)).target.value == 0.1


def test_what_depends_on_the_table_is_refused_before_fitting(table, stand_in):
    with pytest.raises(MipkitValueError, match="'nope' is not a column"):
        synthesize(table, SynthesizeConfig(quality_target="nope"))
    with pytest.raises(MipkitValueError, match="not both"):
        synthesize(PrivateTable(table, DOMAIN), SynthesizeConfig(domain_share=0.2))
    with pytest.raises(MipkitValueError, match="'params'.*unknown_option"):
        synthesize(PrivateTable(table, DOMAIN), SynthesizeConfig(params={"unknown_option": 1}))
    with pytest.raises(MipkitValueError, match="DataFrame"):
        synthesize(table.to_numpy(), SynthesizeConfig())


def test_summary_dict_frame_and_files_agree(table, stand_in, tmp_path):
    res = synthesize(table, SynthesizeConfig(epsilon=1.0, rows=50, quality=True))
    assert isinstance(res, SynthesizeResult)
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["rows"] == 50 and d["columns"] == ["age", "city"] and "column_shapes" in d["quality"]
    frame = res.to_frame().set_index(["quantity", "relation"])["value"]
    assert frame["epsilon", "add_remove"] == pytest.approx(d["epsilon_by_relation"]["add_remove"])
    assert frame["eta", "replace_one"] == d["certified"]["eta"]
    assert frame["tpr_at_fpr_0.01", "add_remove"] == d["certified"]["tpr_at_fpr"]["0.01"]
    assert frame["domain_epsilon", "add_remove"] == pytest.approx(0.1)
    out = res.write(tmp_path / "o")
    assert len(pd.read_csv(out / "synthetic.csv")) == 50
    stored = json.loads((out / "certificate.json").read_text())
    assert stored["epsilon"]["add_remove"] == pytest.approx(d["epsilon"])


def test_the_paragraph_names_the_release_and_puts_the_domain_first(table, stand_in):
    """The domain estimated with 10% of epsilon 1: the paragraph states the composed epsilon 1 (not the
    synthesizer's 0.9), the table released, and the estimate as the first premise; a public domain is a
    premise on where it came from; a noise seed makes it a test run."""
    res = synthesize(table, SynthesizeConfig(epsilon=1.0, rows=50))
    text = res.summary()
    assert "\n" not in text
    positions = [text.index(p) for p in PARTS]
    assert positions == sorted(positions)
    assert text.startswith("Released: a synthetic table of 50 records and 2 columns made by MST")
    assert "(epsilon = 1, delta = 1e-05) differential privacy" in text
    cert = res.certificate
    assert f"right at most {100 * (0.5 + cert.advantage / 2):.3g}%" in text
    premise = text[text.index("Premise:") :]
    assert premise.index(
        "estimated from the private records with differential privacy, 10% of the budget"
    ) < (premise.index("upper bounds"))
    public = synthesize(PrivateTable(table, DOMAIN), SynthesizeConfig(epsilon=1.0, noise_seed=4)).summary()
    assert "given as public (--domain) at no privacy cost" in public and "a test run, not a release" in public
    assert "(epsilon = 1, delta = 1e-05)" in public


def test_the_command_prints_the_paragraph_first(table, stand_in, tmp_path, capsys):
    data = tmp_path / "data.csv"
    table.to_csv(data, index=False)
    argv = ["synthesize", "--data", str(data), "--method", "aim", "--epsilon", "2", "--rows", "40"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    block, rest = out.split("\n\n", 1)
    assert "\n" not in block.strip() and "Synthetic data: aim" in rest
    assert block.startswith("Released: a synthetic table of 40 records and 2 columns made by AIM")
    assert "(epsilon = 2, delta = 1e-05)" in block
    # a refusal of the verb's settings names the flag
    assert main([*argv, "--domain-share", "1", "--out", str(tmp_path / "o2")]) == 2
    assert "mipkit: error: --domain-share must be in (0, 1)" in capsys.readouterr().err
