"""The id column through the whole synthetic-data task: ``domain`` marks it, ``synthesize --id-column``
leaves it out of the model and the release, ``audit-synthetic --id-column`` ignores it; no id value is in
any file written (the attack: grep every output file for every real id)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from mipkit.cli import main


def _tables(tmp_path):
    rng = np.random.default_rng(3)

    def tab(n, first):
        return pd.DataFrame(
            {
                "person": np.arange(first, first + n) * 7919 + 1_000_003,  # distinctive ids
                "age": rng.integers(18, 80, n),
                "sex": rng.choice(["F", "M"], n),
                "income": rng.choice(["<=50K", ">50K"], n, p=[0.7, 0.3]),
            }
        )

    train, hold = tab(120, 0), tab(120, 500)
    paths = {"train": tmp_path / "train.csv", "hold": tmp_path / "hold.csv"}
    train.to_csv(paths["train"], index=False)
    hold.to_csv(paths["hold"], index=False)
    return train, hold, paths


def test_id_column_from_domain_to_audit_never_leaks(tmp_path, capsys):
    train, hold, paths = _tables(tmp_path)
    dom = tmp_path / "domain.json"
    assert main(["domain", "--data", str(paths["train"]), "--out", str(dom)]) == 0
    assert "identifier" in capsys.readouterr().out
    template = json.loads(dom.read_text())
    assert template["person"] == {"type": "identifier"}  # marked, not an ordinary column
    template["age"].update(min=18, max=79, integer=True)
    template["sex"]["categories"] = ["F", "M"]
    template["income"]["categories"] = ["<=50K", ">50K"]
    dom.write_text(json.dumps(template))

    syn = tmp_path / "syn"
    argv = ["synthesize", "--data", str(paths["train"]), "--domain", str(dom), "--method", "mst"]
    argv += ["--epsilon", "1", "--params", '{"iters": 20}', "--quality-target", "income", "--out", str(syn)]
    assert main([*argv, "--id-column", "person"]) == 0
    capsys.readouterr()
    released = pd.read_csv(syn / "synthetic.csv")
    assert "person" not in released.columns and len(released) == len(train)

    audit = tmp_path / "audit"
    argv = ["audit-synthetic", "--original", str(paths["train"]), "--synthetic", str(syn / "synthetic.csv")]
    argv += ["--control", str(paths["hold"]), "--certificate", str(syn / "certificate.json")]
    argv += ["--secret", "income", "--n-attacks", "30", "--quality-target", "income", "--out", str(audit)]
    assert main([*argv, "--id-column", "person"]) == 0
    out = capsys.readouterr().out
    assert "certified" in out  # the certified bounds beside the measurements

    ids = [str(v) for v in pd.concat([train, hold])["person"]]
    written = [p for p in (*syn.rglob("*"), *audit.rglob("*")) if p.is_file()]
    assert written
    for path in written:
        text = path.read_bytes().decode("utf-8", errors="ignore")
        leaked = [v for v in ids if v in text]
        assert not leaked, f"{path.name} holds the id(s) {leaked[:3]}"
    assert not [v for v in ids if v in out]


def test_synthesize_without_id_column_still_refuses_the_id(tmp_path, capsys):
    _, _, paths = _tables(tmp_path)
    argv = ["synthesize", "--data", str(paths["train"]), "--method", "mst", "--epsilon", "1"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "person" in err and err.count("\n") == 1


def test_audit_id_column_must_be_a_column_of_the_original(tmp_path, capsys):
    _, _, paths = _tables(tmp_path)
    argv = ["audit-synthetic", "--original", str(paths["train"]), "--synthetic", str(paths["hold"])]
    argv += ["--id-column", "nobody", "--checks", "dcr", "--out", str(tmp_path / "a")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "nobody" in err and err.count("\n") == 1
