"""``mipkit train-private --domain``: the released model's shape does not depend on who the members are.

The attack: one training row alone holds a level (Adult's ``Holand-Netherlands``). Levels read from the table
give the model an input for it exactly when that row is a member, a membership test no certificate covers.
With a public domain the run with the row and the run without it write the same files with the same shapes
and keys; without a domain a text feature is refused.
"""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest

from mipkit.cli import main
from mipkit.data.io import features_target
from mipkit.workflows.train_private.run import held_out_generator, split_held_out

pytest.importorskip("torch", reason="torch is not installed (pip install mipkit[torch])")

pytestmark = pytest.mark.torch

RARE = "Holand-Netherlands"
DOMAIN = {
    "a": {"type": "numeric", "min": -10, "max": 10},
    "b": {"type": "numeric", "min": -10, "max": 10},
    "country": {"type": "categorical", "categories": ["United-States", "Mexico", RARE], "missing": True},
    "label": {"type": "categorical", "categories": ["no", "yes"]},
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """The same table with and without the one row holding the rare level (a training row, not held out)."""
    d = tmp_path_factory.mktemp("domain")
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    df["country"] = rng.choice(["United-States", "Mexico"], size=120)
    df["label"] = np.where(df["a"] + 0.5 * df["b"] > 0, "yes", "no")
    codes = np.unique(df["label"], return_inverse=True)[1]
    train_idx, _ = split_held_out(codes, 0.2, held_out_generator(0))  # the runs pass --noise-seed 0
    row = int(train_idx[3])  # the held-out rows are never the members: this row trains the model
    df.loc[row, "country"] = RARE
    df.to_csv(d / "with.csv", index=False)
    df.drop(index=row).to_csv(d / "without.csv", index=False)
    (d / "domain.json").write_text(json.dumps(DOMAIN))
    return d


def _run(tables, name, out, *extra):
    return ["train-private", "--data", str(tables / f"{name}.csv"), "--target", "label", "--noise-multiplier",
            "1", "--epochs", "1", "--batch-size", "24", "--hidden", "0", "--noise-seed", "0",
            "--out", str(out), "--json", *extra]  # fmt: skip


def test_with_a_domain_the_release_has_the_same_shape_with_and_without_the_row(
    tables, tmp_path, capsys, skeleton
):
    # the attack: one-hot levels read from the table give one input more exactly when the row is a member
    widths = [
        features_target(pd.read_csv(tables / f"{name}.csv"), "label", encode="onehot").X.shape[1]
        for name in ("with", "without")
    ]
    assert widths[0] == widths[1] + 1
    payloads, folders = {}, {}
    for name in ("with", "without"):
        folders[name] = tmp_path / name
        args = _run(
            tables, name, folders[name], "--encode", "onehot", "--domain", str(tables / "domain.json")
        )
        assert main(args) == 0, capsys.readouterr().err
        payloads[name] = json.loads(capsys.readouterr().out)
    files = {name: sorted(p.name for p in folder.iterdir()) for name, folder in folders.items()}
    assert files["with"] == files["without"]
    for name in ("results.json", "certificate.json"):
        shapes = [skeleton(json.loads((folders[n] / name).read_text())) for n in ("with", "without")]
        assert shapes[0] == shapes[1], name
    assert skeleton(payloads["with"]) == skeleton(payloads["without"])
    dims = [joblib.load(folders[n] / "model.joblib")["dpsgd"].n_features_in_ for n in ("with", "without")]
    assert dims == [6, 6]  # a, b and the three levels of the domain and a missing indicator, in both runs
    for name in ("with", "without"):
        want = {"source": "public file", "path": str(tables / "domain.json"), "columns": 4}
        assert payloads[name]["domain"] == want
        assert json.loads((folders[name] / "certificate.json").read_text())["domain"] == want
        assert json.loads((folders[name] / "results.json").read_text())["domain"] == want
        assert "public domain" in (folders[name] / "report.md").read_text()


def test_without_a_domain_a_text_feature_is_refused(tables, tmp_path, capsys):
    for extra in (["--encode", "onehot"], []):
        assert main(_run(tables, "with", tmp_path / "run", *extra)) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "'country'" in err
        assert "would reveal them" in err and "--domain" in err and "mipkit domain" in err
    assert not (tmp_path / "run" / "model.joblib").exists()


def test_numeric_features_need_no_domain_and_the_run_says_so(tables, tmp_path, capsys):
    df = pd.read_csv(tables / "with.csv").drop(columns=["country"])
    df.to_csv(tmp_path / "numeric.csv", index=False)
    args = _run(tables, "with", tmp_path / "run")
    args[2] = str(tmp_path / "numeric.csv")
    assert main(args) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["domain"] == {
        "source": "none needed: every feature is numeric"
    }


def test_a_cell_outside_the_domain_is_refused_without_its_value(tables, tmp_path, capsys):
    dom = {**DOMAIN, "country": {"type": "categorical", "categories": ["United-States", "Mexico"]}}
    (tmp_path / "d.json").write_text(json.dumps(dom))
    assert main(_run(tables, "with", tmp_path / "run", "--domain", str(tmp_path / "d.json"))) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'country' has 1 cell(s) outside its domain" in err
    assert RARE not in err
