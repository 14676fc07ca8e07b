"""The defences through ``mipkit audit``: bad input exits 2, every shadow model replays the whole defence,
the ledger resumes, and Ray gives the local result."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from mipkit.cli import main
from mipkit.defences import OptimallySoftLabels
from mipkit.workflows.audit.run import independent_halves

PARAMS = {"alpha": 0.5, "base": "logistic", "base_params": {"C": 0.5}, "n_splits": 3}
N, K, SEED = 80, 4, 3


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    X, y = make_classification(N, 4, n_informative=3, n_redundant=0, random_state=0)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(4)])
    df["label"] = y
    path = tmp_path_factory.mktemp("data") / "table.csv"
    df.to_csv(path, index=False)
    return path, X, y


def _argv(data, out, params, *extra):
    return [
        "audit", "--data", str(data), "--target", "label", "--model", "mipkit.defences.OptimallySoftLabels",
        "--params", json.dumps(params), "--models", str(K), "--seed", str(SEED), "--n-jobs", "1",
        "--out", str(out), "--no-report", *extra,
    ]  # fmt: skip


def _ledger(run_dir) -> dict[int, tuple[np.ndarray, dict]]:
    path = run_dir / "ledger.sqlite"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT idx, meta, created FROM fits").fetchall()
    return {int(i): (json.loads(meta), created) for i, meta, created in rows}


@pytest.mark.parametrize(
    "params, message",
    [
        ({**PARAMS, "alpha": -1}, "'alpha' parameter of OptimallySoftLabels must be a number >= 0"),
        ({**PARAMS, "n_splits": 1}, "'n_splits' parameter of OptimallySoftLabels must be an integer >= 2"),
        ({**PARAMS, "base": "sklearn.linear_model.LogisticRegression"}, "cannot learn from soft targets"),
    ],
)
def test_bad_defence_parameters_exit_2_with_one_line(table, tmp_path, capsys, params, message):
    code = main(_argv(table[0], tmp_path / "bad", params))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and message in err and err.startswith("mipkit: error:")
    assert not (tmp_path / "bad" / "ledger.sqlite").exists()  # refused before any fit


def test_label_smoothing_out_of_range_exits_2(table, tmp_path, capsys):
    argv = _argv(table[0], tmp_path / "bad", {"a": 1.5})
    argv[argv.index("mipkit.defences.OptimallySoftLabels")] = "mipkit.defences.LabelSmoothing"
    assert main(argv) == 2
    assert "'a' parameter of LabelSmoothing must be in [0, 1]" in capsys.readouterr().err


def test_audit_replays_the_whole_defence_for_every_model_and_resumes(table, tmp_path, capsys):
    path, X, y = table
    run_dir = tmp_path / "run"
    argv = _argv(path, run_dir, PARAMS, "--attacks", "loss,lira,rmia,ltu", "--json")
    assert main(argv) == 0
    view = json.loads(capsys.readouterr().out)
    assert set(view["attacks"]) == {
        "loss",
        "lira-online",
        "lira-offline",
        "rmia-online",
        "rmia-offline",
        "ltu",
    }
    assert 0.0 <= view["attacks"]["ltu"]["privacy"] <= 1.0
    results = json.loads((run_dir / "results.json").read_text())
    assert results["trainer"]["import_path"] == "mipkit.defences.OptimallySoftLabels"
    assert results["trainer"]["params"] == PARAMS

    # each of the K shadow models is the full procedure (inner halves included) on its random half
    ss_members, ss_fits, _ = np.random.SeedSequence(SEED).spawn(3)
    in_mask = independent_halves(N, K, random_state=np.random.default_rng(ss_members))
    seeds = np.random.default_rng(ss_fits).integers(0, 2**31 - 1, size=K)
    from mipkit.engine.ledger import Ledger

    rows = _ledger(run_dir)
    assert set(rows) == set(range(K))
    conn = sqlite3.connect(run_dir / "ledger.sqlite")
    (run_key,) = conn.execute("SELECT run_key FROM runs").fetchone()
    conn.close()
    with Ledger(run_dir, run_key) as ledger:
        for k in range(K):
            train = np.flatnonzero(in_mask[k])
            direct = OptimallySoftLabels(**PARAMS, random_state=int(seeds[k])).fit(X[train], y[train])
            np.testing.assert_allclose(ledger.get(k), direct.predict_proba(X), atol=1e-12)

    # the same command again: every fit is read back from the ledger, nothing is refitted
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert _ledger(run_dir) == rows
    assert again["attacks"] == view["attacks"]


@pytest.mark.ray
def test_ray_backend_gives_the_local_result(table, tmp_path, capsys):
    pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(_argv(table[0], local, PARAMS, "--json")) == 0
    local_view = json.loads(capsys.readouterr().out)
    argv = _argv(table[0], on_ray, PARAMS, "--json", "--backend", "ray")
    argv[argv.index("--n-jobs") + 1] = "2"
    assert main(argv) == 0
    ray_view = json.loads(capsys.readouterr().out)
    assert {meta["backend"] for meta, _ in _ledger(on_ray).values()} == {"ray"}
    for view in (local_view, ray_view):
        view.pop("run_dir")
        (view.get("provenance") or {}).pop("date", None)  # the wall-clock date of each run
    assert ray_view == local_view
