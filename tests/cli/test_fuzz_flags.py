"""Flag bounds: every numeric flag of every command given values outside its range.

For each command, a table ``flag -> values`` of what the flag must refuse: negative numbers, zero where a
count or a scale must be positive, ``nan``, ``inf``, sizes over their limit (the limits of
:data:`mipkit.cli.options.LIMITS`: ``--reference-models 100000000``, ``--n-boot 1000000000``, ``--hidden
100000000``, ``--rows 10^12``), seeds of -1 and words or booleans for numbers. Each is refused before the
command's computation (the ``no_computation`` fixture), the run folder untouched.
"""

from __future__ import annotations

import pytest
from fuzz_inputs import as_params

pytestmark = pytest.mark.usefixtures("no_computation")

LOGISTIC = ["--model", "sklearn.linear_model.LogisticRegression"]
NAN_INF = ["nan", "inf", "-inf"]
PROBABILITY = ["nan", "0", "1", "-1", "2"]
COUNT = ["0", "-1", "ten", "1.5"]
SEED = ["-1", "true", "nan"]

#: DP-SGD's schedule in Opacus's terms (batch size, epochs, records) for risk and calibrate: each flag out of
#: its range or too large for the others, the two forms mixed, a part of the second form missing.
RISK_Z = ["risk", "--noise-multiplier", "1.1"]
CALIBRATE_Z = ["calibrate", "--mechanism", "dpsgd", "--target", "eta", "--value", "0.1"]
SCHEDULE = [
    case
    for head in (RISK_Z, CALIBRATE_Z)
    for case in (
        ([*head, "--epochs", "30", "--n-records", "8000"], [], {"--batch-size": [*COUNT, "8001"]}),
        ([*head, "--batch-size", "64", "--n-records", "8000"], [], {"--epochs": [*COUNT, "1000000000"]}),
        ([*head, "--batch-size", "64", "--epochs", "30"], [], {"--n-records": [*COUNT, "63", "1000000000"]}),
        ([*head, "--batch-size", "1", "--n-records", "100000"], [], {"--epochs": ["1000"]}),  # 10^8 steps
        (
            [*head, "--batch-size", "64", "--epochs", "30", "--n-records", "8000"],
            [],
            {"--sample-rate": ["0.008"]},
        ),
        ([*head, "--batch-size", "64", "--epochs", "30", "--n-records", "8000"], [], {"--steps": ["3750"]}),
        (
            [*head, "--sample-rate", "0.008", "--steps", "3750"],
            [],
            {"--batch-size": ["64"], "--epochs": ["30"]},
        ),
        ([*head, "--batch-size", "64"], [], {"--epochs": ["30"], "--n-records": ["8000"]}),  # one missing
        (head, [], {"--batch-size": ["64"], "--epochs": ["30"], "--n-records": ["8000"]}),  # two missing
    )
]

#: (command line without the flag, the rest of it) -> {flag: values it must refuse}.
BOUNDS = [
    *SCHEDULE,
    (
        ["risk", "--epsilon", "1"],
        [],
        {"--fpr": [*NAN_INF, "-1"], "--baseline": NAN_INF, "--base-rate": NAN_INF},
    ),
    (["risk"], [], {"--mu": ["inf", "-inf"], "--rho": [*NAN_INF, "-1"], "--gaussian-sigma": NAN_INF}),
    (["risk"], [], {"--laplace-scale": [*NAN_INF, "-1"]}),
    (["risk", "--gaussian-sigma", "1"], [], {"--sensitivity": [*NAN_INF, "-1"]}),
    (["risk", "--sample-rate", "0.01", "--steps", "10"], [], {"--noise-multiplier": [*NAN_INF, "-1"]}),
    (
        ["risk", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10"],
        [],
        {"--tolerance": [*NAN_INF, "-1"]},
    ),
    (["risk", "--noise-multiplier", "1", "--steps", "10"], [], {"--sample-rate": NAN_INF}),
    (["calibrate", "--mechanism", "gaussian", "--target", "eta"], [], {"--value": NAN_INF}),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "0.1"],
        [],
        {"--sensitivity": [*NAN_INF, "-1"]},
    ),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "tpr-at-fpr", "--value", "0.1"],
        [],
        {"--fpr": PROBABILITY},
    ),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "success", "--value", "0.6"],
        [],
        {"--baseline": [*NAN_INF, "-1"]},
    ),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "precision", "--value", "0.6"],
        [],
        {"--base-rate": NAN_INF, "--recall": [*NAN_INF, "-1"]},
    ),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "epsilon", "--value", "1"],
        [],
        {"--delta": PROBABILITY},
    ),
    (
        [
            "calibrate",
            "--mechanism",
            "dpsgd",
            "--target",
            "eta",
            "--value",
            "0.1",
            "--sample-rate",
            "0.01",
            "--steps",
            "10",
        ],
        [],
        {"--tolerance": [*NAN_INF, "-1"]},
    ),
    (
        ["protect", "--data", "good.csv", "--target", "label", *LOGISTIC, "--eta", "0.1"],
        ["--out", "model.joblib"],
        {
            "--sigma": [*NAN_INF, "-1", "0"],
            "--n-estimates": COUNT,
            "--confidence": PROBABILITY,
            "--moment": NAN_INF,
            "--sensitivity": [*NAN_INF, "-1", "0"],
            "--seed": SEED,
            "--n-jobs": ["0", "-100000"],
            "--eta": NAN_INF,
        },
    ),
    (
        ["audit-noise", "--data", "good.csv", "--target", "label", *LOGISTIC, "--eta", "0.1"],
        [],
        {
            "--n-reference": [*COUNT, "1000000000"],
            "--n-releases": [*COUNT, "1000000000"],
            "--n-targets": COUNT,
            "--confidence": PROBABILITY,
            "--moment": [*NAN_INF, "1"],
            "--seed": SEED,
            "--n-jobs": ["0"],
            "--sigma": [*NAN_INF, "-1"],
        },
    ),
    (
        ["audit", "--data", "good.csv", "--target", "label", *LOGISTIC, "--n-jobs", "1", "--quiet"],
        ["--out", "prev"],
        {
            "--seed": SEED,
            "--n-jobs": ["0"],
            "--max-records": ["-1", "0"],
            "--ltu-rounds": [*COUNT, "1000000000"],
            "--certified-eta": [*NAN_INF, "-1"],
            "--confidence": PROBABILITY,
            "--fail-above": [*NAN_INF, "-1"],
            "--n-boot": [*COUNT, "1", "1000000000"],
            "--fprs": [*NAN_INF, "0"],
            "--base-rates": [*NAN_INF, "0", "1:0"],
            "--models": [*COUNT, "100000000"],
            "--targets": [*COUNT, "1000000000"],
        },
    ),
    (
        [
            "audit-fitted",
            "--model-file",
            "model.skops",
            "--members",
            "members.csv",
            "--non-members",
            "non_members.csv",
            "--target",
            "label",
        ],
        ["--out", "prev"],
        {
            "--seed": SEED,
            "--n-jobs": ["0"],
            "--fprs": [*NAN_INF, "0"],
            "--base-rates": [*NAN_INF, "0", "1:0"],
            "--confidence": PROBABILITY,
            "--n-boot": [*COUNT, "1", "1000000000"],
            "--fail-above": [*NAN_INF, "-1"],
            "--backend": ["spark"],
            "--attacks": ["shadow"],
        },
    ),
    (
        [
            "audit-fitted",
            "--model-file",
            "model.skops",
            "--members",
            "members.csv",
            "--non-members",
            "non_members.csv",
            "--target",
            "label",
            "--population",
            "population.csv",
        ],
        ["--out", "prev"],
        {"--reference-models": ["0", "1", "-1", "ten", "100000000"]},
    ),
    (
        ["audit-scores", "--predictions", "predictions.csv"],
        ["--out", "prev"],
        {
            "--seed": SEED,
            "--fprs": [*NAN_INF, "0"],
            "--base-rates": [*NAN_INF, "0"],
            "--confidence": PROBABILITY,
            "--n-boot": [*COUNT, "1", "1000000000"],
            "--fail-above": [*NAN_INF, "-1"],
            "--attacks": ["shadow"],
        },
    ),
    (
        ["audit-synthetic", "--original", "original.csv", "--synthetic", "synthetic.csv"],
        ["--out", "prev"],
        {
            "--n-attacks": [*COUNT, "1000000000"],
            "--tolerance": [*NAN_INF, "-1", "2"],
            "--max-nnaa-rows": COUNT,
            "--max-dcr-rows": COUNT,
            "--seed": SEED,
            "--n-jobs": ["0", "-5"],
            "--fail-above": NAN_INF,
            "--singling-out": [*COUNT, "1000000000"],
            "--singling-out-cols": [*COUNT, "1000000000"],
            "--linkability-neighbors": [*COUNT, "1000000000"],
        },
    ),
    (
        ["train-private", "--data", "good.csv", "--target", "label", "--noise-multiplier", "1"],
        ["--out", "prev"],
        {
            "--delta": PROBABILITY,
            "--epochs": [*COUNT, "1000000000000"],
            "--batch-size": [*COUNT, "1000000000"],
            "--max-grad-norm": [*NAN_INF, "0", "-1"],
            "--learning-rate": [*NAN_INF, "0", "-1"],
            "--hidden": ["100000000", "-1", "nan", "x", "64,100000000", ",".join(["8"] * 100)],
            "--test-size": PROBABILITY,
            "--seed": SEED,
        },
    ),
    (
        ["train-private", "--data", "good.csv", "--target", "label"],
        ["--out", "prev"],
        {"--noise-multiplier": [*NAN_INF, "-1", "0"]},
    ),
    (
        ["train-private", "--data", "good.csv", "--target", "label", "--target-risk", "eta"],
        ["--out", "prev"],
        {"--value": [*NAN_INF, "-1", "0.5"]},
    ),
    (
        ["audit-one-run", "--data", "good.csv", "--target", "label", "--canaries", "10"],
        ["--out", "prev"],
        {
            "--k-plus": [*NAN_INF, "-1", "11", "2.5"],
            "--k-minus": [*NAN_INF, "-1"],
            "--delta": PROBABILITY,
            "--confidence": PROBABILITY,
            "--seed": SEED,
            "--fail-above": NAN_INF,
        },
    ),
    (
        ["audit-one-run", "--data", "good.csv", "--target", "label"],
        ["--out", "prev"],
        {"--canaries": [*COUNT, "1000000000000"]},
    ),
    (
        ["synthesize", "--data", "good.csv", "--method", "mst"],
        ["--out", "prev"],
        {
            "--epsilon": [*NAN_INF, "0", "-1", "1000000"],
            "--target-risk": ["eta=nan", "eta=inf", "eta=-1", "tpr-at-fpr=0.1,fpr=nan"],
        },
    ),
    (
        ["synthesize", "--data", "good.csv", "--method", "mst", "--epsilon", "1"],
        ["--out", "prev"],
        {"--delta": PROBABILITY, "--rows": [*COUNT, "1000000000000"], "--seed": SEED},
    ),
    (["demo", "--fast"], ["--out", "prev"], {"--models": [*COUNT, "3", "100000000"], "--seed": SEED}),
    (
        ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "0.1"],
        [],
        {"--batch-size": ["64"], "--epochs": ["30"], "--n-records": ["8000"]},  # not DP-SGD
    ),
    (["risk", "--epsilon", "1"], [], {"--batch-size": ["64"], "--epochs": ["30"], "--n-records": ["8000"]}),
]

CASES = [
    (f"{head[0]} {flag} {value}", [*head, flag, value, *tail])
    for head, tail, flags in BOUNDS
    for flag, values in flags.items()
    for value in values
]


@pytest.mark.parametrize("args", as_params(CASES))
def test_a_flag_out_of_its_range_is_refused_before_the_computation(refused, args):
    refused(args)


def test_every_command_with_numeric_flags_is_covered():
    import mipkit.cli as cli

    no_number = {"report", "domain"}
    assert {head[0] for head, _, _ in BOUNDS} == set(cli.COMMANDS) - no_number


# -- flags that name a column, or a value of one: a column the table lacks, or one that cannot serve
FITTED_TABLES = [
    "audit-fitted", "--model-file", "model.skops", "--members", "members.csv", "--non-members",
    "non_members.csv", "--target", "label",
]  # fmt: skip
SCORES = ["audit-scores", "--predictions", "predictions.csv"]

#: (command line without the flag, the rest of it) -> {flag: values it must refuse}.
COLUMN_FLAGS = [
    (
        FITTED_TABLES,
        ["--out", "prev"],
        {
            "--id-column": ["nope", "a", "label"],  # absent, a feature of the model, the target
            "--slice-by": ["nope", "a,nope"],
        },
    ),
    (
        SCORES,
        ["--out", "prev"],
        {
            "--id-column": ["nope", "label"],  # absent, repeated values
            "--label-column": ["nope"],
            "--member-column": ["nope", "p_1"],  # absent, not 0/1
            "--member-value": ["yes"],  # no row holds it
            "--score-column": ["nope", "id"],  # absent, not a number
            "--proba-columns": ["nope", "p_1", "p_1,p_1", "0=p_0,1=nope"],
            "--slice-by": ["nope"],
        },
    ),
    (SCORES, ["--score-column", "p_1", "--out", "prev"], {"--positive-class": ["7"]}),
    (SCORES, ["--score-column", "p_1", "--out", "prev"], {"--proba-columns": ["p_0,p_1"]}),  # both
]

NAME_CASES = [
    (f"{head[0]} {flag} {value}", [*head, flag, value, *tail])
    for head, tail, flags in COLUMN_FLAGS
    for flag, values in flags.items()
    for value in values
]


@pytest.mark.parametrize("args", as_params(NAME_CASES))
def test_a_column_flag_naming_a_wrong_column_is_refused_before_the_computation(refused, args):
    refused(args)
