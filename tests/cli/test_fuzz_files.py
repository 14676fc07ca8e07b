"""Wrong-typed files and hostile JSON, for every file a command reads; symbolic links.

* Every file input (tables, the model file, certificates, ``--domain``, ``--config``) is given a folder, a
  binary file, an empty file, ``/dev/zero`` (endless), a dangling link and a file of the wrong format.
* Every JSON input (``--certificate``, ``--domain``, ``--config``, a run's ``results.json``, ``--params``)
  is given 100,000 levels of nesting, a 50 MB file, ``NaN`` / ``Infinity`` literals, ``1e999``, an integer of
  5,000 digits and text that is not UTF-8 (:mod:`mipkit.data.json_input`: one reader, bounded in size and
  depth); a YAML config also aliases (a billion laughs).
* Symbolic links: a link the user names as an input is followed (reading what a user points at is what
  they asked for): a link to a good table reaches the computation; a link to a folder or to ``/dev/zero``
  is refused as its target would be.
"""

from __future__ import annotations

import os
import re

import pytest
from fuzz_inputs import as_params

from mipkit._validation import MipkitValueError
from mipkit.data.json_input import nesting_depth, parse_json_text, read_json_file

pytestmark = pytest.mark.usefixtures("no_computation")

LOGISTIC = ["--model", "sklearn.linear_model.LogisticRegression"]
FITTED = ["audit-fitted", "--target", "label", "--out", "prev"]
SYNTH = ["audit-synthetic", "--synthetic", "synthetic.csv", "--out", "prev"]

#: (command, flag) -> the rest of its command line: every flag that names a file to read.
FILE_INPUTS = {
    ("audit", "--data"): ["audit", "--target", "label", *LOGISTIC, "--quiet", "--out", "prev"],
    ("protect", "--data"): [
        "protect",
        "--target",
        "label",
        *LOGISTIC,
        "--eta",
        "0.1",
        "--out",
        "model.joblib",
    ],
    ("audit-noise", "--data"): ["audit-noise", "--target", "label", *LOGISTIC, "--eta", "0.1"],
    ("train-private", "--data"): [
        "train-private",
        "--target",
        "label",
        "--noise-multiplier",
        "1",
        "--out",
        "prev",
    ],
    ("audit-one-run", "--data"): ["audit-one-run", "--target", "label", "--canaries", "10", "--out", "prev"],
    ("synthesize", "--data"): ["synthesize", "--method", "mst", "--epsilon", "1", "--out", "prev"],
    ("domain", "--data"): ["domain", "--out", "template.json"],
    ("audit-fitted", "--members"): [
        *FITTED,
        "--model-file",
        "model.skops",
        "--non-members",
        "non_members.csv",
    ],
    ("audit-fitted", "--non-members"): [*FITTED, "--model-file", "model.skops", "--members", "members.csv"],
    ("audit-fitted", "--model-file"): [
        *FITTED,
        "--members",
        "members.csv",
        "--non-members",
        "non_members.csv",
    ],
    ("audit-fitted", "--population"): [
        *FITTED,
        "--model-file",
        "model.skops",
        "--members",
        "members.csv",
        "--non-members",
        "non_members.csv",
        "--reference-models",
        "4",
    ],
    ("audit-scores", "--predictions"): ["audit-scores", "--out", "prev"],
    ("audit-synthetic", "--original"): SYNTH,
    ("audit-synthetic", "--holdout"): [*SYNTH, "--original", "original.csv"],
    ("audit-synthetic", "--control"): [*SYNTH, "--original", "original.csv"],
    ("audit-synthetic", "--certificate"): [*SYNTH, "--original", "original.csv"],
    ("synthesize", "--domain"): [
        "synthesize",
        "--data",
        "good.csv",
        "--method",
        "mst",
        "--epsilon",
        "1",
        "--out",
        "prev",
    ],
    ("audit", "--config"): ["audit", "--quiet"],
}
WRONG_FILES = {
    "a folder": "bare",
    "a link to a folder": "link_folder.csv",
    "binary bytes": "garbage.csv",
    "an empty file": "empty.csv",
    "/dev/zero": "/dev/zero",
    "a link to /dev/zero": "link_zero.csv",
    "a dangling link": "dangling.csv",
}
#: A file of the wrong format for each kind of input.
WRONG_FORMAT = {"table": "cert.json", "json": "good.csv", "model": "members.csv"}
JSON_FILE_INPUTS = {k: v for k, v in FILE_INPUTS.items() if k[1] in ("--certificate", "--domain", "--config")}
HOSTILE_JSON = {
    "100,000 nested arrays": "deep.json",
    "100,000 nested objects": "deep_object.json",
    "a NaN literal": "nan.json",
    "1e999": "huge_number.json",
    "an integer of 5,000 digits": "huge_int.json",
    "not UTF-8": "not_utf8.json",
}


def _kind(flag: str) -> str:
    if flag in ("--certificate", "--domain", "--config"):
        return "json"
    return "model" if flag == "--model-file" else "table"


def _file_cases() -> list:
    cases = []
    for (command, flag), rest in FILE_INPUTS.items():
        files = {**WRONG_FILES, "the wrong format": WRONG_FORMAT[_kind(flag)]}
        for what, path in files.items():
            cases.append((f"{command} {flag}: {what}", [*rest, flag, path]))
    return cases


def _json_cases() -> list:
    cases = []
    for (command, flag), rest in JSON_FILE_INPUTS.items():
        for what, path in HOSTILE_JSON.items():
            cases.append((f"{command} {flag}: {what}", [*rest, flag, path]))
    for what, folder in (("100,000 levels", "deep_results"), ("not JSON", "bad_json")):
        cases.append((f"report results.json: {what}", ["report", folder]))
    return cases


PARAMS_READERS = {
    "audit": ["audit", "--data", "good.csv", "--target", "label", *LOGISTIC, "--quiet", "--out", "prev"],
    "protect": [
        "protect",
        "--data",
        "good.csv",
        "--target",
        "label",
        *LOGISTIC,
        "--eta",
        "0.1",
        "--out",
        "m.joblib",
    ],
    "audit-noise": ["audit-noise", "--data", "good.csv", "--target", "label", *LOGISTIC, "--eta", "0.1"],
    "audit-one-run": [
        "audit-one-run",
        "--data",
        "good.csv",
        "--target",
        "label",
        "--canaries",
        "10",
        "--out",
        "prev",
    ],
    "synthesize": ["synthesize", "--data", "good.csv", "--method", "mst", "--epsilon", "1", "--out", "prev"],
}
HOSTILE_PARAMS = {
    "100,000 nested arrays": "[" * 100_000 + "]" * 100_000,
    "100,000 nested objects": '{"a": ' * 100_000 + "1" + "}" * 100_000,
    "NaN": '{"C": NaN}',
    "Infinity": '{"C": Infinity}',
    "1e999": '{"C": 1e999}',
    "an integer of 5,000 digits": '{"C": ' + "9" * 5000 + "}",
}
CONFIGS = {
    "100,000 nested YAML lists": "deep.yaml",
    "a billion laughs (aliases)": "anchors.yaml",
    "an integer of 5,000 digits": "models_huge.yaml",
}
CASES = [
    *_file_cases(),
    *_json_cases(),
    *[
        (f"{command} --params: {what}", [*args, "--params", text])
        for command, args in PARAMS_READERS.items()
        for what, text in HOSTILE_PARAMS.items()
    ],
    *[(f"audit --config: {what}", ["audit", "--quiet", "--config", path]) for what, path in CONFIGS.items()],
]


@pytest.mark.parametrize("args", as_params(CASES))
def test_a_wrong_or_hostile_file_is_refused_before_the_computation(refused, args):
    refused(args)


@pytest.mark.parametrize(("command", "flag"), sorted(JSON_FILE_INPUTS))
def test_a_50_mb_json_file_is_refused_unread(refused, big_json, command, flag):
    line = refused([*JSON_FILE_INPUTS[command, flag], flag, str(big_json)])
    assert re.search(r"at most [\d,]+ are read", line)


def test_a_results_file_of_50_mb_is_refused(refused, sandbox, big_json):
    folder = sandbox.parent / "big_run"
    folder.mkdir(exist_ok=True)
    (folder / "results.json").unlink(missing_ok=True)
    os.link(big_json, folder / "results.json")  # (a symbolic link in a run folder is refused unread)
    assert "at most" in refused(["report", str(folder)])


LINKED = {
    "audit --data": ["audit", "--data", "link_good.csv", "--target", "label", *LOGISTIC, "--out", "prev"],
    "audit-synthetic --certificate": [
        *SYNTH,
        "--original",
        "original.csv",
        "--certificate",
        "link_cert.json",
    ],
}


@pytest.mark.parametrize("args", LINKED.values(), ids=LINKED.keys())
def test_a_symbolic_link_the_user_names_is_followed(reaches, args):
    reaches(args)


def test_every_command_that_reads_a_file_is_covered():
    import mipkit.cli as cli

    readers = {command for command, _ in FILE_INPUTS} | {"report"}
    assert readers == set(cli.COMMANDS) - {"risk", "calibrate", "demo"}
    assert set(PARAMS_READERS) == {"audit", "protect", "audit-noise", "audit-one-run", "synthesize"}


# -- the reader itself, at small bounds


def test_the_json_reader_bounds_size_and_depth(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a": [[1, 2], {"b": "[[[["}]}')
    assert nesting_depth(path.read_bytes()) == 3  # brackets inside strings do not count
    assert read_json_file(path, "test file") == {"a": [[1, 2], {"b": "[[[["}]}
    with pytest.raises(MipkitValueError, match="nests 3 levels deep; at most 2"):
        read_json_file(path, "test file", max_depth=2)
    with pytest.raises(MipkitValueError, match="at most 10 are read"):
        read_json_file(path, "test file", max_bytes=10)
    for text in ('{"a": -Infinity}', '{"a": [1e400]}', "[" + "1" * 401 + "]"):
        with pytest.raises(MipkitValueError, match="not valid JSON"):
            parse_json_text(text, "x")
