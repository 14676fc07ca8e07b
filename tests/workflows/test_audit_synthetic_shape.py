"""audit_synthetic has the one shape: a config checked when built (one rule per case), the verb on a
SyntheticRelease, and a result whose DPIA paragraph, dict, frame and run folder agree; the paragraph names
the verdict and the copy count, and says what a table of copies means."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from mipkit import MipkitValueError
from mipkit.cli import main
from mipkit.report.results import read_results
from mipkit.synthesizers.certificate import certificate_from_dp
from mipkit.workflows.audit_synthetic import (
    AuditSyntheticConfig,
    AuditSyntheticResult,
    SyntheticRelease,
    audit_synthetic,
)

PARTS = ("Audited:", "Headline verdict:", "Copies:", "What it means:", "Premise:")


def _population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    age = rng.integers(18, 80, n)
    return pd.DataFrame({"age": age, "income": rng.integers(0, 100_000, n), "sex": rng.choice(["F", "M"], n)})


@pytest.fixture(scope="module")
def tables():
    """Training, holdout, a synthetic table with 90 of its 300 rows copied, and a fresh one."""
    rng = np.random.default_rng(0)
    train, holdout = _population(300, rng), _population(300, rng)
    copied = pd.concat([train.iloc[:90], _population(210, rng)], ignore_index=True)
    return train, holdout, copied, _population(300, rng)


FAST = {"n_attacks": 60, "n_jobs": 1, "n_bootstrap": 50}


@pytest.fixture(scope="module")
def copied_result(tables):
    train, holdout, copied, _ = tables
    cert = certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5)
    data = SyntheticRelease(train, copied, holdout=holdout, certificate=cert)
    return audit_synthetic(data, AuditSyntheticConfig(secrets=["sex"], fail_above=0.05, **FAST))


BAD = [
    ({"secrets": ["sex", "sex"]}, "given twice"),
    ({"secrets": "sex"}, "'secrets'"),
    ({"secrets": ["sex"], "known": ["sex", "age"]}, "both a secret and a known"),
    ({"n_attacks": 0}, "'n_attacks'"),
    ({"tolerance": 2}, "'tolerance'"),
    ({"metric": "cosine"}, "'metric'"),
    ({"max_nnaa_rows": 0}, "'max_nnaa_rows'"),
    ({"max_dcr_rows": -1}, "'max_dcr_rows'"),
    ({"max_protection_rows": 1.5}, "'max_protection_rows'"),
    ({"n_bootstrap": 0}, "'n_bootstrap'"),
    ({"n_refits": -1}, "'n_refits'"),
    ({"n_refits": 2.5}, "'n_refits'"),
    ({"n_refits": True}, "'n_refits'"),
    ({"checks": ()}, "'checks'"),
    ({"checks": ("nnaa", "ltu")}, "'checks'"),
    ({"attacks": ("shadow",)}, "'attacks'"),
    ({"non_member_baseline": "yes"}, "'non_member_baseline'"),
    ({"nnaa_interval": "bootstrap"}, "'nnaa_interval'"),
    ({"fail_above": 2.0}, "'fail_above'"),
    ({"fail_above": float("nan")}, "'fail_above'"),
    ({"fail_metric": "auc"}, "'fail_metric'"),
    ({"confidence": 1.0}, "'confidence'"),
    ({"include_data_summary": 1}, "'include_data_summary'"),
    ({"random_state": -1}, "'random_state'"),
    ({"n_jobs": 0}, "'n_jobs'"),
    ({"backend": "spark"}, "'backend'"),
    ({"address": "127.0.0.1:6379"}, "needs backend='ray'"),
    ({"backend": "ray", "address": " "}, "non-empty address"),
    ({"block_rows": 0}, "'block_rows'"),
    ({"singling_out": 0}, "'singling_out'"),
    ({"singling_out_cols": 0}, "'singling_out_cols'"),
    ({"linkability": (["age"],)}, "exactly two"),
    ({"linkability": (["age"], [])}, "at least one column"),
    ({"linkability": (["age"], ["age", "sex"])}, "share 'age'"),
    ({"linkability_neighbors": 0}, "'linkability_neighbors'"),
    ({"quality_target": 3}, "'quality_target'"),
]


@pytest.mark.parametrize(("bad", "needle"), BAD, ids=[f"{next(iter(b))}-{i}" for i, (b, _) in enumerate(BAD)])
def test_each_rule_of_the_config_refuses_a_bad_value(bad, needle):
    with pytest.raises(MipkitValueError, match=needle.replace("(", r"\(")) as err:
        AuditSyntheticConfig(**bad)
    assert "\n" not in str(err.value)


def test_the_config_normalises_and_replace_checks_again():
    config = AuditSyntheticConfig(secrets=["sex"], checks=["dcr", "dcr"], linkability=[["age"], ["sex"]])
    assert config.secrets == ("sex",) and config.checks == ("dcr",)
    assert config.linkability == (("age",), ("sex",))
    assert json.dumps(config.to_dict())
    assert config.replace(n_attacks=10).n_attacks == 10
    with pytest.raises(MipkitValueError, match="'n_attacks'"):
        config.replace(n_attacks=0)


@pytest.mark.parametrize(
    ("release", "config", "needle"),
    [
        ("tables", {}, "SyntheticRelease"),
        ("release", {"quality_target": "nope"}, "'nope' is not a column"),
        ("release", {"singling_out": 5, "singling_out_cols": 9}, "at most 3"),
        ("release", {"linkability": (["age"], ["nope"])}, "'nope' not found"),
        ("release", {"secrets": ["nope"]}, "'nope'"),
    ],
)
def test_what_depends_on_the_tables_is_refused_before_any_computation(
    tables, monkeypatch, release, config, needle
):
    import mipkit.workflows.audit_synthetic.run as run

    def reached(*args, **kwargs):
        raise AssertionError("the audit got past its checks")

    monkeypatch.setattr(run, "spawn_seeds", reached)
    train, holdout, copied, _ = tables
    data = SyntheticRelease(train, copied, holdout=holdout) if release == "release" else (train, copied)
    with pytest.raises(MipkitValueError, match=needle):
        audit_synthetic(data, AuditSyntheticConfig(**config))
    with pytest.raises(MipkitValueError, match="SynthesisCertificate"):
        SyntheticRelease(train, copied, certificate={"eta": 0.1})


def test_summary_dict_frame_and_run_folder_agree(copied_result, tmp_path):
    res = copied_result
    assert isinstance(res, AuditSyntheticResult)
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    frame = res.to_frame()
    loss = frame[frame["measure"] == "privacy_loss"].iloc[0]
    assert loss["value"] == d["nnaa"]["privacy_loss"]
    assert [loss["ci_low"], loss["ci_high"]] == d["nnaa"]["intervals"]["privacy_loss_ci"]
    auc = frame[(frame["section"] == "dcr") & (frame["measure"] == "auc")].iloc[0]
    assert auc["value"] == d["dcr"]["auc"]
    run = res.write(tmp_path / "run")
    assert read_results(run)["verdict"] == d["verdict"]
    assert json.loads((run / "certified_bounds.json").read_text()) == res.certified
    page = (run / "report.html").read_text()
    first = page.index("Audited: a synthetic table of 300 records")  # the paragraph leads the report
    assert first < page.index("Verdict: FINDING") and first < page.index("Copies: 30.00%")
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.certified = None


def test_the_paragraph_names_the_verdict_and_the_copies_of_a_copying_table(copied_result):
    """The attack: 90 of 300 training rows released verbatim. The paragraph says FINDING, counts the
    copies, and agrees with the headline verdict and the summary's copy sentence."""
    text = copied_result.summary()
    assert "\n" not in text
    positions = [text.index(p) for p in PARTS]
    assert positions == sorted(positions)
    v = copied_result.verdict
    assert v["status"] == "finding" and "Headline verdict: FINDING" in text
    exact = next(m for m in v["members"] if m["name"] == "exact_copies")
    assert exact["status"] == "finding"
    assert "90 of 300 training records (30%) have an exact copy" in text
    assert "the synthetic data copies about 30.0% of its training records" in text
    assert any("the synthetic data copies about 30.0%" in s for s in copied_result.sentences())
    assert "measurably reveal their training records (exact copies" in text
    assert "300 records of the holdout table" in text and "certificate bounds every attacker" in text


def test_a_fresh_table_without_holdout_says_what_it_could_not_judge(tables):
    train, _, _, fresh = tables
    res = audit_synthetic(SyntheticRelease(train, fresh), AuditSyntheticConfig(fail_above=0.5, **FAST))
    text = res.summary()
    assert res.verdict["status"] == "inconclusive" and "INCONCLUSIVE" in text and "not every test" in text
    assert "0 of 300 training records (0%)" in text and "no more than chance gives" in text
    assert "found no sign" in text and "measurably reveal" not in text
    assert text.index("there were no records the generator was not trained on") < text.index("certificate")
    assert "no synthesizer certificate was given" in text


def test_the_command_prints_the_paragraph_first(tables, tmp_path, capsys):
    train, holdout, copied, _ = tables
    paths = {}
    for name, df in (("orig", train), ("syn", copied), ("hold", holdout)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    argv = ["audit-synthetic", "--original", str(paths["orig"]), "--synthetic", str(paths["syn"]),
            "--holdout", str(paths["hold"]), "--checks", "dcr", "--n-jobs", "1", "--fail-above", "0.05",
            "--no-report", "--out", str(tmp_path / "run")]  # fmt: skip
    assert main(argv) == 1  # a finding
    out = capsys.readouterr().out
    block, rest = out.split("\n\n", 1)
    assert "\n" not in block.strip() and "Synthetic data audit" in rest
    assert block.startswith("Audited: a synthetic table of 300 records") and "FINDING" in block
    assert "90 of 300 training records" in block
    # a refusal of the verb's settings names the flag
    assert main([*argv[:-1], str(tmp_path / "r2"), "--tolerance", "2"]) == 2
    assert "mipkit: error: --tolerance must be in [0, 1]" in capsys.readouterr().err
