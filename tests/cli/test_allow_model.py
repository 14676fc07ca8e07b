"""``--allow-model``: a class of your own, from the working folder, only when you name it (issue 10 / 11)."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import mipkit.cli as cli
import mipkit.game.trainers as trainers

MODULE = textwrap.dedent(
    """
    from pathlib import Path
    from sklearn.linear_model import LogisticRegression

    Path("imported.marker").write_text("the module's code ran")

    class MyModel(LogisticRegression):
        pass
    """
)
NAME = "mipkit_cli_local_model_xyz"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    pd.DataFrame(X, columns=["a", "b"]).assign(label=(X[:, 0] > 0).astype(int)).to_csv(
        tmp_path / "t.csv", index=False
    )
    (tmp_path / f"{NAME}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, NAME, raising=False)
    monkeypatch.setattr(trainers, "_ALLOWED", [])
    monkeypatch.delenv(trainers.ALLOWED_MODELS_ENV, raising=False)
    trainers._import_object.cache_clear()
    yield tmp_path
    sys.modules.pop(NAME, None)
    trainers._import_object.cache_clear()


def _audit(*extra: str) -> list[str]:
    return [
        "audit", "--data", "t.csv", "--target", "label", "--model", f"{NAME}.MyModel", "--models", "4",
        "--attacks", "loss", "--n-jobs", "1", "--quiet", "--json", "--out", "run", *extra,
    ]  # fmt: skip


def test_a_local_class_is_refused_with_the_way_to_allow_it(folder, capsys):
    assert cli.main(_audit()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was not imported" in err
    assert f"pass --allow-model {NAME}.MyModel" in err and f"MIPKIT_ALLOWED_MODELS={NAME}.MyModel" in err
    assert not (folder / "imported.marker").exists() and not (folder / "run").exists()


def test_allowed_on_the_command_line_it_is_found_in_the_working_folder(folder, capsys):
    assert cli.main(_audit("--allow-model", f"{NAME}.MyModel")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attacks"]["loss"]["auc"] is not None
    results = json.loads((folder / "run" / "results.json").read_text())
    assert results["trainer"]["import_path"] == f"{NAME}.MyModel"
    assert (folder / "imported.marker").exists()


def test_the_allow_list_cannot_come_from_a_config_file(folder, capsys):
    (folder / "c.yaml").write_text(f"allow-model: [{NAME}.MyModel]\n")
    assert cli.main([*_audit(), "--config", "c.yaml"]) == 2
    err = capsys.readouterr().err
    assert "cannot be set in a config file" in err and err.count("\n") == 1
    assert not (folder / "imported.marker").exists()
