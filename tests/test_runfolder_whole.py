"""A run folder changes all together or not at all, and no symlink in it is followed.

The attacks: a malformed certificate after a good run (the audit used to commit its new files, then fail);
a SIGKILL between the results and report.html, or between two renames of the commit; a planted symlink at
``ledger.sqlite``, at a synthesizer's checkpoint or at ``results.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mipkit._runfolder import JOURNAL_FILE, atomic_write, lock_run_folder, read_run_file, staged_writes
from mipkit._validation import MipkitValueError
from mipkit.cli import main
from mipkit.engine.ledger import Ledger
from mipkit.report import read_results
from mipkit.synthesizers.certificate import certificate_from_dp
from mipkit.synthesizers.checkpoint import load_checkpoint, save_checkpoint


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    """Tables, a good certificate and the argv of a small ``audit-synthetic`` run."""
    tmp = tmp_path_factory.mktemp("synthetic")
    rng = np.random.default_rng(0)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({"age": rng.integers(18, 80, n), "sex": rng.choice(["F", "M"], n)})

    orig = table(120)
    paths = {name: tmp / f"{name}.csv" for name in ("orig", "syn", "ctl")}
    orig.to_csv(paths["orig"], index=False)
    pd.concat([orig.sample(60, random_state=1), table(60)]).to_csv(paths["syn"], index=False)
    table(60).to_csv(paths["ctl"], index=False)
    cert = tmp / "certificate.json"
    cert.write_text(json.dumps(certificate_from_dp(method="aim", epsilon=1.0, delta=1e-5).to_dict()))
    argv = [
        "audit-synthetic", "--original", str(paths["orig"]), "--synthetic", str(paths["syn"]),
        "--control", str(paths["ctl"]), "--secret", "sex", "--n-attacks", "30", "--json",
    ]  # fmt: skip
    return tmp, argv, cert


def _bad_certificates(good: dict) -> dict[str, str]:
    missing = {k: v for k, v in good.items() if k != "mechanism"}
    wrong = {**good, "mechanism": "approx_dp", "eta": "small"}
    negative = json.loads(json.dumps(good))
    negative["mechanism"]["epsilon"] = -1.0
    return {
        "invalid JSON": "{not json",
        "array": json.dumps([good]),
        "missing fields": json.dumps(missing),
        "wrong types": json.dumps(wrong),
        "negative epsilon": json.dumps(negative),
        "certified no": json.dumps({**good, "certified": "no"}),
    }


def test_a_bad_certificate_leaves_the_previous_run_byte_identical(synthetic_run, tmp_path, capsys):
    tmp, argv, cert = synthetic_run
    out = tmp_path / "run"
    assert main([*argv, "--certificate", str(cert), "--out", str(out)]) == 0
    before = _digest(out)
    assert {"results.json", "certified_bounds.json", "report.html"} <= set(before)
    for name, text in _bad_certificates(json.loads(cert.read_text())).items():
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        assert main([*argv, "--certificate", str(bad), "--out", str(out)]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mipkit: error:"), (name, err)
        assert _digest(out) == before, name


_KILL_AT_REPORT = """
import os, signal, sys
import mipkit.report.html as html
real = html.render_html
def render_then_die(**kw):
    text = real(**kw)
    os.kill(os.getpid(), signal.SIGKILL)  # the results are written; report.html is not
    return text
html.render_html = render_then_die
from mipkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigkill_between_the_results_and_the_report_leaves_the_previous_run_whole(synthetic_run, tmp_path):
    tmp, argv, _ = synthetic_run
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out)]) == 0
    before = _digest(out)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    changed = [*argv, "--n-attacks", "40", "--seed", "5", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-c", _KILL_AT_REPORT, *changed], env=env, capture_output=True)
    assert proc.returncode == -9
    assert main(["report", str(out), "--json"]) == 0  # takes the lock: leftovers removed
    after = _digest(out)
    after.pop("report.html"), before.pop("report.html")  # (re-rendered: same content, new file)
    assert after == before  # the previous run whole: results.json, scores.parquet, inference.parquet


_KILL_MID_COMMIT = """
import os, signal, sys
from pathlib import Path
import mipkit._runcommit as rc
from mipkit._runfolder import atomic_write, staged_writes
real, done = os.replace, []
def replace_then_die(src, dst):
    real(src, dst)
    if not str(dst).endswith(rc.JOURNAL_FILE):
        done.append(dst)
        if len(done) == 1:
            os.kill(os.getpid(), signal.SIGKILL)  # one file of the new run renamed, the others not
rc.os.replace = replace_then_die
folder = Path(sys.argv[1])
with staged_writes(folder, replaces=("a.txt", "b.txt", "old.txt")):
    atomic_write(folder / "a.txt", "new a")
    atomic_write(folder / "b.txt", "new b")
"""


def test_a_kill_between_the_renames_is_completed_by_the_next_run(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "old.txt"):
        (folder / name).write_text(f"old {name[0]}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", _KILL_MID_COMMIT, str(folder)], env=env)
    assert proc.returncode == -9
    assert (folder / JOURNAL_FILE).is_file()
    with lock_run_folder(folder):  # the next run takes the lock and finishes the commit
        pass
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]
    assert (folder / "a.txt").read_text() == "new a" and (folder / "b.txt").read_text() == "new b"


def test_staged_reads_see_the_new_files_and_replaced_files_go(tmp_path):
    (tmp_path / "report.html").write_text("old report")
    (tmp_path / "results.json").write_text("old")
    with staged_writes(tmp_path, replaces=("results.json", "report.html")):
        atomic_write(tmp_path / "results.json", "new")
        assert read_run_file(tmp_path / "results.json") == b"new"
        assert read_run_file(tmp_path / "report.html") is None  # not written by this run: removed with it
        assert (tmp_path / "report.html").read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


# -- symlinks ------------------------------------------------------------------------------------------
def test_a_symlinked_ledger_is_refused_and_its_target_unchanged(tmp_path):
    victim = tmp_path / "elsewhere.sqlite"
    with Ledger(victim, "other-run") as ledger:
        ledger.put(0, np.ones(3), {})
    before = victim.read_bytes()
    run = tmp_path / "run"
    run.mkdir()
    (run / "ledger.sqlite").symlink_to(victim)
    with pytest.raises(MipkitValueError, match="symbolic link"):
        Ledger(run, "this-run")
    dangling = tmp_path / "run2"
    dangling.mkdir()
    (dangling / "ledger.sqlite").symlink_to(tmp_path / "not-yet.sqlite")
    with pytest.raises(MipkitValueError, match="symbolic link"):  # a dangling link: not created through
        Ledger(dangling, "this-run").put(0, np.ones(3), {})
    assert victim.read_bytes() == before and not (tmp_path / "not-yet.sqlite").exists()


def test_audit_fitted_refuses_a_planted_ledger_symlink(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=(X[:, 0] > 0).astype(int))
    for name, part in (("mem", df[:40]), ("non", df[40:]), ("pop", df)):
        part.to_csv(tmp_path / f"{name}.csv", index=False)
    import joblib
    from sklearn.linear_model import LogisticRegression

    joblib.dump(LogisticRegression().fit(X[:40], df["label"][:40]), tmp_path / "m.joblib")
    victim = tmp_path / "victim.sqlite"
    victim.write_bytes(b"another run's ledger")
    out = tmp_path / "run"
    out.mkdir()
    (out / "ledger.sqlite").symlink_to(victim)
    code = main([
        "audit-fitted", "--model-file", str(tmp_path / "m.joblib"), "--trust-pickle", "--members",
        str(tmp_path / "mem.csv"), "--non-members", str(tmp_path / "non.csv"), "--target", "label",
        "--reference-models", "4", "--population", str(tmp_path / "pop.csv"), "--out", str(out), "--quiet",
    ])  # fmt: skip
    assert code == 2 and "symbolic link" in capsys.readouterr().err
    assert victim.read_bytes() == b"another run's ledger"
    assert sorted(p.name for p in out.iterdir()) == ["ledger.sqlite"]


def test_a_symlinked_checkpoint_is_not_read_and_is_replaced_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere.npz"
    save_checkpoint(elsewhere, "key", {"round": 7}, {"x": np.arange(3)})
    before = elsewhere.read_bytes()
    link = tmp_path / "run" / "checkpoint"
    link.parent.mkdir()
    link.symlink_to(elsewhere)
    assert load_checkpoint(link, "key") is None  # never resumed from another file
    save_checkpoint(link, "key", {"round": 1}, {"x": np.zeros(2)})
    assert elsewhere.read_bytes() == before and not link.is_symlink()
    assert load_checkpoint(link, "key")[0] == {"round": 1}


def test_a_symlinked_results_file_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "results.json").write_text(json.dumps({"schema_version": "1.2", "kind": "audit"}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").symlink_to(real / "results.json")
    with pytest.raises(MipkitValueError, match="symbolic link"):
        read_results(run)
