"""`mipkit audit-synthetic --backend/--address/--block-rows` and the caps' `none`: flags to the config,
bad values exit 2 with one line, and results.json says which parts ran on a subsample."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import mipkit.workflows.audit_synthetic as verb
from mipkit.cli import main


@pytest.fixture()
def trio(tmp_path, make_small_mixed_table):
    rng = np.random.default_rng(0)
    orig = make_small_mixed_table(240, rng)
    syn = pd.concat([orig.sample(60, random_state=1), make_small_mixed_table(180, rng)], ignore_index=True)
    paths = {}
    for name, df in (("orig", orig), ("syn", syn), ("hold", make_small_mixed_table(200, rng))):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


def _argv(trio, tmp_path, *extra):
    return [
        "audit-synthetic", "--original", str(trio["orig"]), "--synthetic", str(trio["syn"]),
        "--holdout", str(trio["hold"]), "--checks", "nnaa,dcr", "--out", str(tmp_path / "run"), "--json",
        *extra,
    ]  # fmt: skip


def test_flags_become_the_config(trio, tmp_path, monkeypatch):
    from mipkit._validation import MipkitValueError

    seen = {}

    def fake(data, config, **kw):
        seen["config"] = config
        raise MipkitValueError("stopped before the audit")

    monkeypatch.setattr(verb, "audit_synthetic", fake)
    flags = ["--backend", "ray", "--address", "10.0.0.5:6379", "--block-rows", "500", "--max-nnaa-rows",
             "none", "--max-dcr-rows", "NONE", "--max-protection-rows", "300"]  # fmt: skip
    argv = _argv(trio, tmp_path, *flags)
    assert main(argv) == 2
    c = seen["config"]
    assert (c.backend, c.address, c.block_rows) == ("ray", "10.0.0.5:6379", 500)
    assert (c.max_nnaa_rows, c.max_dcr_rows, c.max_protection_rows) == (None, None, 300)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--backend", "spark"], "--backend must be one of"),
        (["--address", "10.0.0.5:6379"], "needs backend='ray'"),
        (["--block-rows", "0"], "--block-rows must be at least 1"),
        (["--max-nnaa-rows", "all"], "--max-nnaa-rows must be a whole number of rows or 'none'"),
        (["--max-dcr-rows", "0"], "--max-dcr-rows"),
    ],
)
def test_bad_backend_flags_exit_2_with_one_line(trio, tmp_path, capsys, extra, words):
    assert main(_argv(trio, tmp_path, *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_results_say_which_parts_ran_on_a_subsample(trio, tmp_path, capsys):
    argv = _argv(trio, tmp_path, "--max-dcr-rows", "100", "--max-nnaa-rows", "none", "--no-report")
    assert main(argv) == 0
    capsys.readouterr()
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    samples = res["samples"]
    assert samples["dcr"] == {
        "n": 100, "of": 240, "subsampled": True, "because": "max_dcr_rows",
        "text": "DCR on a random 100 of the 240 training records; max_dcr_rows",
    }  # fmt: skip
    # no cap on NNAA: the four sets are the size of the smallest, a synthetic half (120 rows)
    assert samples["nnaa"]["n"] == 120 and samples["nnaa"]["because"] == "equal set sizes"
    assert samples["protection"]["subsampled"] is False
    assert res["backend"] == {"name": "local", "threads": 2, "blocks": None, "peak_task_bytes": None}
    scores = pd.read_parquet(tmp_path / "run" / "scores.parquet")
    assert (scores["set"] == "original").sum() == 100
