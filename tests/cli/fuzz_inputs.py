"""The inputs of the fuzz suite (tests/cli/test_fuzz*.py): the working folder's files and the case helpers.

:func:`write_inputs` writes every input a case points a command at: good tables and the same tables with a
non-finite number or a word in a numeric column (:data:`POISONS`), a fitted model file, a predictions file, a
synthesis certificate and lying variants of it, hostile JSON and YAML (100,000 levels deep, ``NaN``, numbers
out of range, not UTF-8), run folders with damaged ``results.json`` and symbolic links. :data:`HEAVY` names
the heavy entry point of every command, which the ``no_computation`` fixture replaces by
:class:`ReachedComputation`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PYTHON = sys.executable
FEATURES = ["a", "b", "c"]

# Every audit case runs sequentially and quietly, so that a refusal after the fits started stays one line.
AUDIT = [
    "audit",
    "--data",
    "good.csv",
    "--target",
    "label",
    "--model",
    "sklearn.linear_model.LogisticRegression",
]
AUDIT_RUN = ["--models", "4", "--attacks", "loss", "--n-jobs", "1", "--quiet", "--out", "prev"]


class ReachedComputation(Exception):
    """Raised by a patched heavy entry point: the command got past its checks."""


#: The heavy entry point of each command: what a refusal must come before.
HEAVY = (
    "mipkit.engine.runner.run_fits",  # audit (every fit), audit-fitted's reference models
    "mipkit.workflows.audit_fitted.outputs._model_input",  # audit-fitted: the released model's outputs
    "mipkit.workflows.audit_scores.attacks.run_score_attacks",  # audit-scores, audit-fitted: the attacks
    "mipkit.workflows.audit_synthetic.run.spawn_seeds",  # audit-synthetic: its first step after the checks
    "mipkit.mechanisms.mip_noise.MIPNoise.fit",  # protect
    "mipkit.workflows.audit_noise.run.fit_on_halves",  # audit-noise: its first fit, after the checks
    "mipkit.trainers.dpsgd.DPSGDClassifier._fit_stack",  # train-private, audit-one-run
    "mipkit.synthesizers.peers.make_synthesizer",  # synthesize
    "mipkit.workflows.demo.run_demo",
)


def hash_tree(root: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file (a symlink: its target), folders too: the folder's state."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                state[rel] = "dir"
            else:
                state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


HOLDER = textwrap.dedent(
    """
    import sys
    from mipkit._runfolder import lock_run_folder
    lock_run_folder(sys.argv[1], command="mipkit audit --seed 7").acquire()
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until the test closes this pipe or ends, however long it runs
    """
)


def _poisoned(df: pd.DataFrame, column: str, value: object, row: int = 3) -> pd.DataFrame:
    out = df.astype({column: object})
    out.loc[row, column] = value
    return out


#: The cells written into a numeric column of each input table by the value cases.
POISONS = {"nan": "nan", "inf": "inf", "-inf": "-inf", "word": "seven"}


def write_inputs(root: Path) -> None:
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LogisticRegression

    from mipkit.game.model_files import save_model_file
    from mipkit.synthesizers.certificate import certificate_from_dp

    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    good = pd.DataFrame(X, columns=FEATURES).assign(label=y)
    good.to_csv(root / "good.csv", index=False)
    public = {c: {"type": "numeric", "min": -10, "max": 10, "missing": True} for c in FEATURES}
    public["label"] = {"type": "numeric", "min": 0, "max": 1, "integer": True}
    (root / "public_domain.json").write_text(json.dumps(public))  # what a code book would give
    (root / "empty.csv").write_bytes(b"")
    (root / "header.csv").write_text("a,b,c,label\n")
    (root / "garbage.csv").write_bytes(bytes(range(256)) * 8)
    (root / "fake.parquet").write_text("this is not parquet")
    good.assign(a=good["a"].where(good.index != 5)).to_csv(root / "nan.csv", index=False)
    good.assign(label=good["label"].where(good.index != 7)).to_csv(root / "nan_label.csv", index=False)
    good.assign(b=good["b"].where(good.index != 3, np.inf)).to_csv(root / "inf.csv", index=False)
    good.assign(c=np.where(good.index % 2, "red", "blue")).to_csv(root / "strings.csv", index=False)
    mixed = good.astype({"a": object})
    mixed.loc[11, "a"] = "12,5 kg"
    mixed.to_csv(root / "mixed.csv", index=False)
    (root / "dup.csv").write_text("a,b,a,label\n" + "".join(f"{i},{i},{i},{i % 2}\n" for i in range(20)))
    (root / "dup_space.csv").write_text(
        "a, a ,b,label\n" + "".join(f"{i},{i},{i},{i % 2}\n" for i in range(20))
    )
    good.assign(label=0).to_csv(root / "one_class.csv", index=False)
    good.assign(label=np.where(good.index < 2, 1, 0)).to_csv(root / "rare_class.csv", index=False)
    good[["label"]].to_csv(root / "label_only.csv", index=False)
    orig = pd.DataFrame(
        {"a": rng.normal(size=50), "b": rng.integers(0, 3, 50), "colour": rng.choice(["r", "g"], 50)}
    )
    orig.to_csv(root / "original.csv", index=False)
    orig.sample(frac=1.0, random_state=1).to_csv(root / "synthetic.csv", index=False)
    holdout = pd.DataFrame(
        {"a": rng.normal(size=50), "b": rng.integers(0, 3, 50), "colour": rng.choice(["r", "g"], 50)}
    )
    holdout.to_csv(root / "holdout.csv", index=False)
    # audit-fitted: members, non-members and a population of one table, a model fitted on the members
    Xf = rng.normal(size=(120, 3))
    fitted = pd.DataFrame(Xf, columns=FEATURES).assign(label=(Xf[:, 0] > 0).astype(int))
    members, non_members, population = fitted.iloc[:40], fitted.iloc[40:80], fitted.iloc[80:]
    members.to_csv(root / "members.csv", index=False)
    non_members.to_csv(root / "non_members.csv", index=False)
    population.to_csv(root / "population.csv", index=False)
    save_model_file(LogisticRegression().fit(members[FEATURES], members["label"]), root / "model.skops")
    save_model_file(KMeans(2, n_init=1, random_state=0).fit(members[FEATURES]), root / "kmeans.skops")
    # audit-scores: a predictions file
    p1 = 1 / (1 + np.exp(-fitted["a"].to_numpy()[:80]))
    preds = pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(80)],
            "label": fitted["label"].to_numpy()[:80],
            "member": np.r_[np.ones(40, int), np.zeros(40, int)],
            "p_0": 1 - p1,
            "p_1": p1,
        }
    )
    preds.to_csv(root / "predictions.csv", index=False)
    # the value cases: a non-finite number or a word in a numeric column of every input table
    tables = {
        "good": (good, "b"),
        "members": (members.reset_index(drop=True), "b"),
        "non_members": (non_members.reset_index(drop=True), "b"),
        "population": (population.reset_index(drop=True), "b"),
        "predictions": (preds, "p_1"),
        "original": (orig, "a"),
        "synthetic": (orig.sample(frac=1.0, random_state=1).reset_index(drop=True), "a"),
        "holdout": (holdout, "a"),
    }
    for name, (table, column) in tables.items():
        for tag, cell in POISONS.items():
            _poisoned(table, column, cell).to_csv(root / f"{name}_{tag}.csv", index=False)
    # JSON inputs: a certificate, and hostile JSON of every kind
    certificate_from_dp(method="mst", epsilon=1.0, delta=1e-5).write(root / "cert.json")
    cert = json.loads((root / "cert.json").read_text())
    lies = {
        "cert_certified_no": {**cert, "certified": "no"},
        "cert_eta_text": {**cert, "eta": "0.1"},
        "cert_negative_epsilon": {**cert, "epsilon": {"add_remove": -1.0, "replace_one": -1.0}},
        "cert_negative_eta": {**cert, "eta": -0.2},
        "cert_tpr_text": {**cert, "tpr_at_fpr": {"0.01": "high"}},
        "cert_other_kind": {"kind": "dpsgd-certificate", "method": "dpsgd", "certified": True},
        "cert_no_mechanism": {**cert, "mechanism": {}},
        "cert_a_list": [cert],
    }
    for name, value in lies.items():
        (root / f"{name}.json").write_text(json.dumps(value))
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "deep_object.json").write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    (root / "nan.json").write_text('{"method": "mst", "certified": true, "eta": NaN}')
    (root / "huge_number.json").write_text('{"method": "mst", "certified": true, "eta": 1e999}')
    (root / "huge_int.json").write_text('{"method": "mst", "certified": true, "eta": ' + "9" * 5000 + "}")
    (root / "not_utf8.json").write_bytes(b'{"a": "\xff\xfe"}')
    configs = {
        "broken.yaml": "models: [4\n",
        "list.yaml": "- models\n- 4\n",
        "unknown_key.yaml": "model_count: 4\n",
        "dropna_no.yaml": 'dropna: "no"\n',
        "models_text.yaml": 'models: "8"\n',
        "models_bool.yaml": "models: true\n",
        "json_yes.yaml": 'json: "yes"\n',
        "confidence_text.yaml": "confidence: high\n",
        "popen.yaml": (
            "data: good.csv\ntarget: label\nmodel: subprocess.Popen\n"
            "params: {args: touch X, shell: true}\nmodels: 4\nn-jobs: 1\nout: prev\n"
        ),
        "allow_inside.yaml": (
            "data: good.csv\ntarget: label\nmodel: subprocess.Popen\nallow-model: [subprocess.Popen]\n"
            "params: {args: touch X, shell: true}\nmodels: 4\nn-jobs: 1\nout: prev\n"
        ),
        "deep.yaml": "[" * 100_000 + "]" * 100_000,
        "anchors.yaml": "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + "models: *i\n",
        "confidence_nan.yaml": "confidence: .nan\n",
        "models_huge.yaml": "models: " + "9" * 5000 + "\n",
    }
    for name, text in configs.items():
        (root / name).write_text(text)
    (root / "model.joblib").write_bytes(b"a previously saved model")
    for name in ("bare", "bad_json", "list_json", "schema9", "no_results", "odd_kind", "deep_results"):
        (root / name).mkdir()
    (root / "bad_json" / "results.json").write_text("{not json")
    (root / "list_json" / "results.json").write_text("[1, 2]")
    (root / "schema9" / "results.json").write_text(json.dumps({"schema_version": "9.0", "kind": "audit"}))
    (root / "no_results" / "results.json").write_text(json.dumps({"schema_version": "1.0", "kind": "audit"}))
    (root / "odd_kind" / "results.json").write_text(json.dumps({"schema_version": "1.0", "kind": "poem"}))
    (root / "deep_results" / "results.json").write_text(
        '{"schema_version": "1.0", "kind": "audit", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    # symlinks: to a good input (followed: the user named it), to a folder, to /dev/zero, and dangling
    (root / "link_good.csv").symlink_to(root / "good.csv")
    (root / "link_cert.json").symlink_to(root / "cert.json")
    (root / "link_folder.csv").symlink_to(root / "bare")
    (root / "link_zero.csv").symlink_to("/dev/zero")
    (root / "link_zero.json").symlink_to("/dev/zero")
    (root / "dangling.csv").symlink_to(root / "no_such_target.csv")
    (root / "dangling.json").symlink_to(root / "no_such_target.json")


def name_args(case) -> tuple[str, list[str]]:
    """``(name, args)`` of a case given as a tuple or a ``pytest.param``."""
    if hasattr(case, "marks"):
        return case.values[0], case.values[1]
    return case


def as_params(cases: list) -> list:
    """Cases ``(name, args)`` (or ``pytest.param(name, args, marks=...)``) as parameters ``args`` named."""
    out = []
    for case in cases:
        name, args = name_args(case)
        out.append(pytest.param(args, id=name, marks=getattr(case, "marks", ())))
    return out
