"""Non-finite numbers and words in numeric columns, in every input table of every command that reads one.

Each table of the working folder comes in four spoiled variants (``<table>_<tag>.csv``, tags of
:data:`fuzz_inputs.POISONS`): ``nan``, ``inf`` and ``-inf`` in a numeric column, and a word (``seven``)
among its numbers. Every command must refuse them before its computation (the ``no_computation``
fixture), except where a missing value is data: ``audit-synthetic`` and ``synthesize`` take missing cells as
a category of their own, so ``nan`` reaches their computation there.
"""

from __future__ import annotations

import pytest
from fuzz_inputs import POISONS, as_params

pytestmark = pytest.mark.usefixtures("no_computation")

LOGISTIC = ["--model", "sklearn.linear_model.LogisticRegression"]
FITTED = ["audit-fitted", "--model-file", "model.skops", "--target", "label", "--out", "prev"]
SYNTH = ["audit-synthetic", "--out", "prev"]

#: (command, the table's role) -> the command line with ``{}`` where the spoiled table's tag goes.
READERS = {
    ("audit", "--data"): ["audit", "--data", "good_{}.csv", "--target", "label", *LOGISTIC, "--quiet"],
    ("protect", "--data"): [
        "protect",
        "--data",
        "good_{}.csv",
        "--target",
        "label",
        *LOGISTIC,
        "--eta",
        "0.1",
        "--out",
        "model.joblib",
    ],
    ("audit-noise", "--data"): [
        "audit-noise",
        "--data",
        "good_{}.csv",
        "--target",
        "label",
        *LOGISTIC,
        "--eta",
        "0.1",
    ],
    ("train-private", "--data"): [
        "train-private",
        "--data",
        "good_{}.csv",
        "--target",
        "label",
        "--noise-multiplier",
        "1",
        "--out",
        "prev",
    ],
    ("audit-one-run", "--data"): [
        "audit-one-run",
        "--data",
        "good_{}.csv",
        "--target",
        "label",
        "--canaries",
        "10",
        "--out",
        "prev",
    ],
    ("synthesize", "--data"): [
        "synthesize",
        "--data",
        "good_{}.csv",
        "--method",
        "mst",
        "--epsilon",
        "1",
        "--domain",
        "public_domain.json",
        "--out",
        "prev",
    ],
    ("audit-fitted", "--members"): [
        *FITTED,
        "--members",
        "members_{}.csv",
        "--non-members",
        "non_members.csv",
    ],
    ("audit-fitted", "--non-members"): [
        *FITTED,
        "--members",
        "members.csv",
        "--non-members",
        "non_members_{}.csv",
    ],
    ("audit-fitted", "--population"): [
        *FITTED,
        "--members",
        "members.csv",
        "--non-members",
        "non_members.csv",
        "--population",
        "population_{}.csv",
        "--reference-models",
        "4",
    ],
    ("audit-scores", "--predictions"): [
        "audit-scores",
        "--predictions",
        "predictions_{}.csv",
        "--out",
        "prev",
    ],
    ("audit-synthetic", "--original"): [
        *SYNTH,
        "--original",
        "original_{}.csv",
        "--synthetic",
        "synthetic.csv",
    ],
    ("audit-synthetic", "--synthetic"): [
        *SYNTH,
        "--original",
        "original.csv",
        "--synthetic",
        "synthetic_{}.csv",
    ],
    ("audit-synthetic", "--holdout"): [
        *SYNTH,
        "--original",
        "original.csv",
        "--synthetic",
        "synthetic.csv",
        "--holdout",
        "holdout_{}.csv",
    ],
    ("audit-synthetic", "--control"): [
        *SYNTH,
        "--original",
        "original.csv",
        "--synthetic",
        "synthetic.csv",
        "--control",
        "holdout_{}.csv",
    ],
}

#: Where a missing value is data, not a defect.
MISSING_IS_DATA = {"audit-synthetic", "synthesize"}


def _cases(refuse: bool) -> list:
    out = []
    for (command, role), args in READERS.items():
        for tag in POISONS:
            accepted = tag == "nan" and command in MISSING_IS_DATA
            if accepted == refuse:
                continue
            name = f"{command} {role}: {tag}"
            line = [a.replace("{}", tag) for a in args]
            out.append(pytest.param(name, line))
    return out


CASES = _cases(refuse=True)


@pytest.mark.parametrize("args", as_params(CASES))
def test_a_spoiled_number_is_refused_before_the_computation(refused, args):
    refused(args)


@pytest.mark.parametrize("args", as_params(_cases(refuse=False)))
def test_a_missing_value_is_data_where_the_command_models_it(reaches, args):
    reaches(args)


def test_every_command_that_reads_a_table_is_covered():
    import mipkit.cli as cli

    readers = {command for command, _ in READERS}
    no_table = {"risk", "calibrate", "report", "demo", "domain"}  # domain reads the schema, no value
    assert readers == set(cli.COMMANDS) - no_table
