"""Bad input thrown at every command, as a careless or hostile user would (issue 10).

Every case must be a clean refusal: exit code 2, exactly one line ``mipkit: error: ...`` on stderr, nothing
on stdout, no traceback, and the working folder - which holds the inputs, a finished run folder that the
commands are pointed at with ``--out``, and a saved model - byte for byte as it was before the call (nothing
written, nothing replaced, nothing created: ``--model subprocess.Popen --params '{"args": "touch X", ...}'``
must not create ``X``). The cases are the issue's, the docs' list of bad inputs (wrong column names, NaN,
strings in numeric columns, empty files, unreadable or unwritable paths, unknown flags, eta outside
(0, 1/2), negative epsilon, delta >= 1, sample rates outside (0, 1]) and more of the same kind for each
command. ``CASES`` is counted in the "Bad input" paragraph of docs/conventions.md.
"""

from __future__ import annotations

import json

import pytest
from fuzz_inputs import AUDIT, AUDIT_RUN, as_params, name_args

import mipkit.cli as cli

PROTECT = [
    "protect",
    "--data",
    "good.csv",
    "--target",
    "label",
    "--model",
    "sklearn.linear_model.LogisticRegression",
]
NOISE = [
    "audit-noise",
    "--data",
    "good.csv",
    "--target",
    "label",
    "--model",
    "sklearn.linear_model.LogisticRegression",
]
SYNTH = ["audit-synthetic", "--original", "original.csv", "--synthetic", "synthetic.csv"]
FITTED = ["audit-fitted", "--members", "good.csv", "--non-members", "good.csv", "--target", "label"]
TRAIN = ["--data", "good.csv", "--target", "label", "--noise-multiplier", "1"]
POPEN = ["--model", "subprocess.Popen", "--params", '{"args": "touch X", "shell": true}']


def audit(*extra: str) -> list[str]:
    return [*AUDIT, *AUDIT_RUN, *extra]


def audit_with(flag: str, value: str) -> list[str]:
    """The audit command line with ``flag`` replaced by ``value`` (or added)."""
    args = audit()
    if flag in args:
        args[args.index(flag) + 1] = value
        return args
    return [*args, flag, value]


CASES: list[tuple[str, list[str]] | object] = [
    # -- the command line itself
    ("unknown command", ["auditt"]),
    ("unknown flag", ["risk", "--epsilon", "1", "--no-such-flag"]),
    ("flag without value", ["risk", "--epsilon"]),
    ("unknown top-level flag", ["--no-such-flag"]),
    # -- domain: the template of a table's schema
    ("domain: no such table", ["domain", "--data", "nope.csv", "--out", "template.json"]),
    ("domain: empty table", ["domain", "--data", "empty.csv", "--out", "template.json"]),
    ("domain: unknown --drop", ["domain", "--data", "good.csv", "--drop", "nope", "--out", "template.json"]),
    ("domain: out is a folder", ["domain", "--data", "good.csv", "--out", "prev"]),
    # -- risk: the docs' list (negative epsilon, delta >= 1, sample rates outside (0, 1]) and more
    ("risk: no mechanism", ["risk"]),
    ("risk: two mechanisms", ["risk", "--epsilon", "1", "--mu", "1"]),
    ("risk: negative epsilon", ["risk", "--epsilon", "-1"]),
    ("risk: epsilon nan", ["risk", "--epsilon", "nan"]),
    ("risk: epsilon inf", ["risk", "--epsilon", "inf"]),
    ("risk: epsilon text", ["risk", "--epsilon", "one"]),
    ("risk: epsilon empty", ["risk", "--epsilon", ""]),
    ("risk: delta 1", ["risk", "--epsilon", "1", "--delta", "1"]),
    ("risk: delta above 1", ["risk", "--epsilon", "1", "--delta", "2"]),
    ("risk: negative delta", ["risk", "--epsilon", "1", "--delta", "-0.1"]),
    ("risk: delta nan", ["risk", "--mu", "1", "--delta", "nan"]),
    ("risk: negative mu", ["risk", "--mu", "-1"]),
    ("risk: mu nan", ["risk", "--mu", "nan"]),
    ("risk: gaussian sigma 0", ["risk", "--gaussian-sigma", "0"]),
    ("risk: negative gaussian sigma", ["risk", "--gaussian-sigma", "-1"]),
    ("risk: laplace scale 0", ["risk", "--laplace-scale", "0"]),
    ("risk: sensitivity 0", ["risk", "--gaussian-sigma", "1", "--sensitivity", "0"]),
    ("risk: sensitivity with epsilon", ["risk", "--epsilon", "1", "--sensitivity", "2"]),
    ("risk: dp-sgd incomplete", ["risk", "--noise-multiplier", "1"]),
    ("risk: sample rate 0", ["risk", "--noise-multiplier", "1", "--sample-rate", "0", "--steps", "10"]),
    (
        "risk: sample rate above 1",
        ["risk", "--noise-multiplier", "1", "--sample-rate", "1.5", "--steps", "10"],
    ),
    (
        "risk: negative sample rate",
        ["risk", "--noise-multiplier", "1", "--sample-rate", "-0.1", "--steps", "10"],
    ),
    ("risk: steps 0", ["risk", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "0"]),
    ("risk: negative steps", ["risk", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "-5"]),
    (
        "risk: steps 10^12",
        ["risk", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "1000000000000"],
    ),
    (
        "risk: steps not an integer",
        ["risk", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "1e3"],
    ),
    (
        "risk: noise multiplier 0",
        ["risk", "--noise-multiplier", "0", "--sample-rate", "0.01", "--steps", "10"],
    ),
    ("risk: fpr 0", ["risk", "--epsilon", "1", "--fpr", "0"]),
    ("risk: fpr 1", ["risk", "--epsilon", "1", "--fpr", "1"]),
    ("risk: fpr above 1", ["risk", "--epsilon", "1", "--fpr", "2"]),
    ("risk: baseline above 1", ["risk", "--epsilon", "1", "--baseline", "1.5"]),
    ("risk: base rate 0", ["risk", "--epsilon", "1", "--base-rate", "0"]),
    ("risk: plot unknown format", ["risk", "--epsilon", "1", "--plot", "x.foo"]),
    ("risk: plot without suffix", ["risk", "--epsilon", "1", "--plot", "figure"]),
    ("risk: plot a folder", ["risk", "--epsilon", "1", "--plot", "prev"]),
    ("risk: plot empty", ["risk", "--epsilon", "1", "--plot", ""]),
    ("risk: plot into a file's folder", ["risk", "--epsilon", "1", "--plot", "good.csv/x.png"]),
    # -- calibrate
    ("calibrate: nothing", ["calibrate"]),
    (
        "calibrate: unknown mechanism",
        ["calibrate", "--mechanism", "exponential", "--target", "eta", "--value", "0.1"],
    ),
    (
        "calibrate: unknown target",
        ["calibrate", "--mechanism", "gaussian", "--target", "fun", "--value", "0.1"],
    ),
    (
        "calibrate: negative value",
        ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "-0.1"],
    ),
    ("calibrate: eta 0.5", ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "0.5"]),
    ("calibrate: value nan", ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "nan"]),
    (
        "calibrate: advantage 1",
        ["calibrate", "--mechanism", "laplace", "--target", "advantage", "--value", "1"],
    ),
    (
        "calibrate: tpr without fpr",
        ["calibrate", "--mechanism", "gaussian", "--target", "tpr-at-fpr", "--value", "0.1"],
    ),
    (
        "calibrate: fpr above 1",
        ["calibrate", "--mechanism", "gaussian", "--target", "tpr-at-fpr", "--value", "0.1", "--fpr", "2"],
    ),
    (
        "calibrate: dp-sgd without steps",
        ["calibrate", "--mechanism", "dpsgd", "--target", "eta", "--value", "0.1", "--sample-rate", "0.01"],
    ),
    (
        "calibrate: dp-sgd steps 10^12",
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
            "1000000000000",
        ],
    ),
    (
        "calibrate: sample rate 0",
        [
            "calibrate",
            "--mechanism",
            "dpsgd",
            "--target",
            "eta",
            "--value",
            "0.1",
            "--sample-rate",
            "0",
            "--steps",
            "10",
        ],
    ),
    (
        "calibrate: sensitivity 0",
        ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "0.1", "--sensitivity", "0"],
    ),
    (
        "calibrate: steps for gaussian",
        ["calibrate", "--mechanism", "gaussian", "--target", "eta", "--value", "0.1", "--steps", "5"],
    ),
    # -- audit: the trainer (item 2 of the issue: naming a class must not run code)
    ("audit: subprocess.Popen", [*AUDIT[:5], *POPEN, *AUDIT_RUN]),
    (
        "audit: os.system",
        [*AUDIT[:5], "--model", "os.system", "--params", '{"command": "touch X"}', *AUDIT_RUN],
    ),
    ("audit: builtins.exec", [*AUDIT[:5], "--model", "builtins.exec", *AUDIT_RUN]),
    ("audit: unimported package", [*AUDIT[:5], "--model", "antigravity.Fly", *AUDIT_RUN]),
    ("audit: missing trainer", [*AUDIT[:5], "--model", "sklearn.linear_model.NoSuchModel", *AUDIT_RUN]),
    ("audit: not a classifier", [*AUDIT[:5], "--model", "sklearn.cluster.KMeans", *AUDIT_RUN]),
    ("audit: mipkit non-trainer", [*AUDIT[:5], "--model", "mipkit.mechanisms.MIPNoise", *AUDIT_RUN]),
    ("audit: no model", [*AUDIT[:5], *AUDIT_RUN]),
    ("audit: model without module", [*AUDIT[:5], "--model", "LogisticRegression", *AUDIT_RUN]),
    ("audit: params not JSON", audit("--params", "{C: 1")),
    ("audit: params a list", audit("--params", "[1, 2]")),
    ("audit: unknown parameter", audit("--params", '{"no_such_option": 1}')),
    ("audit: parameter refused at fit", audit("--params", '{"C": -1}')),
    # -- audit: the data (the docs' list: wrong column names, NaN, strings, empty files, unreadable paths)
    ("audit: missing file", audit_with("--data", "nope.csv")),
    ("audit: empty file", audit_with("--data", "empty.csv")),
    ("audit: header only", audit_with("--data", "header.csv")),
    ("audit: folder as data", audit_with("--data", "prev")),
    ("audit: binary garbage", audit_with("--data", "garbage.csv")),
    ("audit: not parquet", audit_with("--data", "fake.parquet")),
    ("audit: wrong target column", audit_with("--target", "income")),
    ("audit: empty target", audit_with("--target", "")),
    ("audit: NaN in a feature", audit_with("--data", "nan.csv")),
    ("audit: NaN in the label", audit_with("--data", "nan_label.csv")),
    ("audit: infinite values", audit_with("--data", "inf.csv")),
    ("audit: strings in a feature", audit_with("--data", "strings.csv")),
    ("audit: one string in a numeric column", [*audit_with("--data", "mixed.csv"), "--encode", "onehot"]),
    ("audit: one string, no encoding", audit_with("--data", "mixed.csv")),
    ("audit: repeated column names", audit_with("--data", "dup.csv")),
    ("audit: names repeated after stripping", audit_with("--data", "dup_space.csv")),
    ("audit: single class", audit_with("--data", "one_class.csv")),
    ("audit: too few of a class", audit_with("--data", "rare_class.csv")),
    ("audit: only the target", audit_with("--data", "label_only.csv")),
    ("audit: drop the target", audit("--drop", "label")),
    ("audit: drop a missing column", audit("--drop", "nope")),
    ("audit: drop every feature", audit("--drop", "a,b,c")),
    ("audit: unknown encoding", audit("--encode", "ordinal")),
    ("audit: max records too small", audit("--max-records", "3")),
    # -- audit: sizes and settings
    ("audit: odd models", audit_with("--models", "5")),
    ("audit: 0 models", audit_with("--models", "0")),
    ("audit: negative models", audit_with("--models", "-4")),
    ("audit: 10^8 models", audit_with("--models", "100000000")),
    ("audit: over the soft limit", audit_with("--models", "2000")),
    ("audit: models not a number", audit_with("--models", "many")),
    ("audit: 0 targets", audit("--targets", "0")),
    ("audit: more targets than models", audit("--targets", "99")),
    ("audit: 10^9 targets", audit("--targets", "1000000000")),
    ("audit: unknown attack", audit_with("--attacks", "shadow")),
    ("audit: no attack", audit_with("--attacks", ",")),
    ("audit: fprs not numbers", audit("--fprs", "low")),
    ("audit: fpr above 1", audit("--fprs", "0.01,2")),
    ("audit: base rate 1:0", audit("--base-rates", "1:0")),
    ("audit: base rate text", audit("--base-rates", "1:x")),
    ("audit: confidence 1.5", audit("--confidence", "1.5")),
    ("audit: certified eta 0.7", audit("--certified-eta", "0.7")),
    ("audit: negative seed", audit("--seed", "-1")),
    ("audit: 0 ltu rounds", audit("--ltu-rounds", "0")),
    ("audit: unknown backend", audit("--backend", "spark")),
    ("audit: address without ray", audit("--address", "auto")),
    ("audit: 0 jobs", audit_with("--n-jobs", "0")),
    ("audit: unknown ltu strategy", audit("--ltu-strategy", "guess")),
    ("audit: fail-above nan", audit("--fail-above", "nan")),
    # -- audit: the run folder
    ("audit: empty --out", audit_with("--out", "")),
    ("audit: blank --out", audit_with("--out", "  ")),
    ("audit: --out a file", audit_with("--out", "model.joblib")),
    ("audit: --out inside a file", audit_with("--out", "good.csv/run")),
    ("audit: busy run folder", audit_with("--out", "busy")),
    # -- audit: the config file (a shared config file must not be code)
    ("config: missing file", audit("--config", "nope.yaml")),
    ("config: not YAML", audit("--config", "broken.yaml")),
    ("config: a list", audit("--config", "list.yaml")),
    ("config: unknown key", audit("--config", "unknown_key.yaml")),
    ("config: dropna 'no'", audit("--config", "dropna_no.yaml")),
    ("config: models as text", audit("--config", "models_text.yaml")),
    ("config: models a boolean", audit("--config", "models_bool.yaml")),
    ("config: json 'yes'", audit("--config", "json_yes.yaml")),
    ("config: Popen trainer", ["audit", "--config", "popen.yaml", "--quiet"]),
    ("config: allow-model inside", ["audit", "--config", "allow_inside.yaml", "--quiet"]),
    ("config: confidence text", audit("--config", "confidence_text.yaml")),
    # -- audit-scores / audit-fitted (issue 11): refused before the run folder is made
    ("scores: no such file", ["audit-scores", "--predictions", "nope.csv", "--out", "X"]),
    ("scores: empty file", ["audit-scores", "--predictions", "empty.csv", "--out", "X"]),
    ("scores: not a predictions file", ["audit-scores", "--predictions", "good.csv", "--out", "X"]),
    ("fitted: no such model file", [*FITTED, "--model-file", "nope.skops", "--out", "X"]),
    ("fitted: a table as model file", [*FITTED, "--model-file", "good.csv", "--out", "X"]),
    (
        "fitted: reference models without population",
        [*FITTED, "--model-file", "nope.skops", "--reference-models", "4", "--out", "X"],
    ),
    # -- audit-synthetic
    ("synthetic: no original", ["audit-synthetic", "--synthetic", "synthetic.csv", "--out", "prev"]),
    (
        "synthetic: missing original",
        ["audit-synthetic", "--original", "nope.csv", "--synthetic", "synthetic.csv", "--out", "prev"],
    ),
    (
        "synthetic: empty synthetic",
        ["audit-synthetic", "--original", "original.csv", "--synthetic", "empty.csv", "--out", "prev"],
    ),
    (
        "synthetic: repeated names",
        ["audit-synthetic", "--original", "original.csv", "--synthetic", "dup.csv", "--out", "prev"],
    ),
    (
        "synthetic: other columns",
        ["audit-synthetic", "--original", "original.csv", "--synthetic", "good.csv", "--out", "prev"],
    ),
    ("synthetic: missing holdout", [*SYNTH, "--holdout", "nope.csv", "--out", "prev"]),
    ("synthetic: secret not a column", [*SYNTH, "--secret", "salary", "--out", "prev"]),
    ("synthetic: known not a column", [*SYNTH, "--secret", "a", "--known", "zzz", "--out", "prev"]),
    ("synthetic: 0 attacks", [*SYNTH, "--n-attacks", "0", "--out", "prev"]),
    ("synthetic: 10^9 attacks", [*SYNTH, "--n-attacks", "1000000000", "--out", "prev"]),
    ("synthetic: tolerance 2", [*SYNTH, "--tolerance", "2", "--out", "prev"]),
    ("synthetic: unknown metric", [*SYNTH, "--metric", "cosine", "--out", "prev"]),
    ("synthetic: 0 NNAA rows", [*SYNTH, "--max-nnaa-rows", "0", "--out", "prev"]),
    ("synthetic: 10^12 DCR rows", [*SYNTH, "--max-dcr-rows", "1000000000000", "--out", "prev"]),
    ("synthetic: empty --out", [*SYNTH, "--out", ""]),
    ("synthetic: --out a file", [*SYNTH, "--out", "model.joblib"]),
    ("synthetic: busy run folder", [*SYNTH, "--out", "busy"]),
    ("synthetic: fail-above nan", [*SYNTH, "--out", "prev", "--fail-above", "nan"]),
    # -- protect (the docs' list: eta outside (0, 1/2))
    ("protect: eta 0.7", [*PROTECT, "--eta", "0.7", "--out", "model.joblib"]),
    ("protect: eta 0", [*PROTECT, "--eta", "0", "--out", "model.joblib"]),
    ("protect: eta 0.5", [*PROTECT, "--eta", "0.5", "--out", "model.joblib"]),
    ("protect: eta nan", [*PROTECT, "--eta", "nan", "--out", "model.joblib"]),
    ("protect: negative eta", [*PROTECT, "--eta", "-0.1", "--out", "model.joblib"]),
    ("protect: no eta", [*PROTECT, "--out", "model.joblib"]),
    ("protect: subprocess.Popen", [*PROTECT[:5], *POPEN, "--eta", "0.1", "--out", "model.joblib"]),
    ("protect: os.system", [*PROTECT[:5], "--model", "os.system", "--eta", "0.1", "--out", "model.joblib"]),
    ("protect: params not JSON", [*PROTECT, "--params", "{", "--eta", "0.1", "--out", "model.joblib"]),
    (
        "protect: missing data",
        ["protect", "--data", "nope.csv", *PROTECT[3:], "--eta", "0.1", "--out", "model.joblib"],
    ),
    (
        "protect: wrong target",
        [
            "protect",
            "--data",
            "good.csv",
            "--target",
            "y",
            *PROTECT[5:],
            "--eta",
            "0.1",
            "--out",
            "model.joblib",
        ],
    ),
    (
        "protect: strings",
        ["protect", "--data", "strings.csv", *PROTECT[3:], "--eta", "0.1", "--out", "model.joblib"],
    ),
    ("protect: drop the target", [*PROTECT, "--drop", "label", "--eta", "0.1", "--out", "model.joblib"]),
    ("protect: empty --out", [*PROTECT, "--eta", "0.1", "--out", ""]),
    ("protect: --out a folder", [*PROTECT, "--eta", "0.1", "--out", "prev"]),
    (
        "protect: unknown calibration",
        [*PROTECT, "--eta", "0.1", "--calibration", "magic", "--out", "model.joblib"],
    ),
    ("protect: sigma text", [*PROTECT, "--eta", "0.1", "--sigma", "wide", "--out", "model.joblib"]),
    ("protect: sigma empty", [*PROTECT, "--eta", "0.1", "--sigma", ",", "--out", "model.joblib"]),
    (
        "protect: 10^9 estimates",
        [*PROTECT, "--eta", "0.1", "--n-estimates", "1000000000", "--out", "model.joblib"],
    ),
    (
        "protect: moment 1",
        [*PROTECT, "--eta", "0.1", "--calibration", "izzo2024", "--moment", "1", "--out", "model.joblib"],
    ),
    ("protect: unknown train-on", [*PROTECT, "--eta", "0.1", "--train-on", "some", "--out", "model.joblib"]),
    ("protect: unknown choose", [*PROTECT, "--eta", "0.1", "--choose", "largest", "--out", "model.joblib"]),
    ("protect: confidence 1", [*PROTECT, "--eta", "0.1", "--confidence", "1", "--out", "model.joblib"]),
    # -- audit-noise (the issue: 100000 targets on 60 rows)
    ("audit-noise: 100000 targets", [*NOISE, "--eta", "0.1", "--n-targets", "100000"]),
    ("audit-noise: 61 targets", [*NOISE, "--eta", "0.1", "--n-targets", "61"]),
    ("audit-noise: 0 targets", [*NOISE, "--eta", "0.1", "--n-targets", "0"]),
    ("audit-noise: 1 reference", [*NOISE, "--eta", "0.1", "--n-reference", "1"]),
    ("audit-noise: 0 releases", [*NOISE, "--eta", "0.1", "--n-releases", "0"]),
    ("audit-noise: 10^9 references", [*NOISE, "--eta", "0.1", "--n-reference", "1000000000"]),
    ("audit-noise: eta 0.6", [*NOISE, "--eta", "0.6"]),
    ("audit-noise: subprocess.Popen", [*NOISE[:5], *POPEN, "--eta", "0.1"]),
    ("audit-noise: unknown calibration", [*NOISE, "--eta", "0.1", "--calibration", "magic"]),
    ("audit-noise: missing data", ["audit-noise", "--data", "nope.csv", *NOISE[3:], "--eta", "0.1"]),
    ("audit-noise: NaN", ["audit-noise", "--data", "nan.csv", *NOISE[3:], "--eta", "0.1"]),
    # -- report
    ("report: missing folder", ["report", "nowhere"]),
    ("report: empty name", ["report", ""]),
    ("report: a file", ["report", "good.csv"]),
    ("report: no results.json", ["report", "bare"]),
    ("report: results.json not JSON", ["report", "bad_json"]),
    ("report: results.json a list", ["report", "list_json"]),
    ("report: other schema", ["report", "schema9"]),
    ("report: no results in it", ["report", "no_results"]),
    ("report: unknown kind", ["report", "odd_kind"]),
    ("report: busy run folder", ["report", "busy"]),
    ("report: damaged scores.parquet", ["report", "damaged"]),
    # -- demo
    ("demo: 0 models", ["demo", "--models", "0", "--out", "prev"]),
    ("demo: 3 models", ["demo", "--models", "3", "--out", "prev"]),
    ("demo: 10^8 models", ["demo", "--models", "100000000", "--out", "prev"]),
    ("demo: negative seed", ["demo", "--seed", "-1", "--out", "prev"]),
    ("demo: empty --out", ["demo", "--fast", "--out", ""]),
    ("demo: --out a file", ["demo", "--fast", "--out", "model.joblib"]),
    ("demo: busy run folder", ["demo", "--fast", "--out", "busy"]),
    # -- train-private
    (
        "train-private: missing data",
        [
            "train-private",
            "--data",
            "nope.csv",
            "--target",
            "label",
            "--noise-multiplier",
            "1",
            "--out",
            "prev",
        ],
    ),
    (
        "train-private: wrong target",
        ["train-private", "--data", "good.csv", "--target", "y", "--noise-multiplier", "1", "--out", "prev"],
    ),
    ("train-private: drop the target", ["train-private", *TRAIN, "--drop", "label", "--out", "prev"]),
    (
        "train-private: strings",
        [
            "train-private",
            "--data",
            "strings.csv",
            "--target",
            "label",
            "--noise-multiplier",
            "1",
            "--out",
            "prev",
        ],
    ),
    (
        "train-private: no target risk",
        ["train-private", "--data", "good.csv", "--target", "label", "--out", "prev"],
    ),
    (
        "train-private: unknown target risk",
        [
            "train-private",
            "--data",
            "good.csv",
            "--target",
            "label",
            "--target-risk",
            "fun",
            "--value",
            "0.1",
            "--out",
            "prev",
        ],
    ),
    ("train-private: 10^12 epochs", ["train-private", *TRAIN, "--epochs", "1000000000000", "--out", "prev"]),
    ("train-private: empty --out", ["train-private", *TRAIN, "--out", ""]),
    ("train-private: busy run folder", ["train-private", *TRAIN, "--out", "busy"]),
    # -- audit-one-run
    (
        "audit-one-run: subprocess.Popen",
        ["audit-one-run", "--data", "good.csv", "--target", "label", *POPEN, "--out", "prev"],
    ),
    (
        "audit-one-run: missing data",
        ["audit-one-run", "--data", "nope.csv", "--target", "label", "--out", "prev"],
    ),
    (
        "audit-one-run: 10^12 canaries",
        [
            "audit-one-run",
            "--data",
            "good.csv",
            "--target",
            "label",
            "--canaries",
            "1000000000000",
            "--out",
            "prev",
        ],
    ),
    (
        "audit-one-run: unknown canary kind",
        [
            "audit-one-run",
            "--data",
            "good.csv",
            "--target",
            "label",
            "--canary-kind",
            "gold",
            "--out",
            "prev",
        ],
    ),
    (
        "audit-one-run: confidence 2",
        ["audit-one-run", "--data", "good.csv", "--target", "label", "--confidence", "2", "--out", "prev"],
    ),
    ("audit-one-run: empty --out", ["audit-one-run", "--data", "good.csv", "--target", "label", "--out", ""]),
    (
        "audit-one-run: busy run folder",
        ["audit-one-run", "--data", "good.csv", "--target", "label", "--out", "busy"],
    ),
    # -- synthesize
    (
        "synthesize: missing data",
        ["synthesize", "--data", "nope.csv", "--method", "mst", "--epsilon", "1", "--out", "prev"],
    ),
    (
        "synthesize: unknown method",
        ["synthesize", "--data", "good.csv", "--method", "gan", "--epsilon", "1", "--out", "prev"],
    ),
    (
        "synthesize: negative epsilon",
        ["synthesize", "--data", "good.csv", "--method", "mst", "--epsilon", "-1", "--out", "prev"],
    ),
    (
        "synthesize: delta 1",
        [
            "synthesize",
            "--data",
            "good.csv",
            "--method",
            "mst",
            "--epsilon",
            "1",
            "--delta",
            "1",
            "--out",
            "prev",
        ],
    ),
    (
        "synthesize: 0 rows",
        [
            "synthesize",
            "--data",
            "good.csv",
            "--method",
            "mst",
            "--epsilon",
            "1",
            "--rows",
            "0",
            "--out",
            "prev",
        ],
    ),
    ("synthesize: no budget", ["synthesize", "--data", "good.csv", "--method", "mst", "--out", "prev"]),
    (
        "synthesize: bad target risk",
        ["synthesize", "--data", "good.csv", "--method", "mst", "--target-risk", "eta", "--out", "prev"],
    ),
    (
        "synthesize: domain not JSON",
        [
            "synthesize",
            "--data",
            "good.csv",
            "--method",
            "mst",
            "--epsilon",
            "1",
            "--domain",
            "broken.yaml",
            "--out",
            "prev",
        ],
    ),
    (
        "synthesize: empty --out",
        ["synthesize", "--data", "good.csv", "--method", "mst", "--epsilon", "1", "--out", ""],
    ),
]


@pytest.mark.parametrize("args", as_params(CASES))
def test_bad_input_is_refused_cleanly(refused, args):
    refused(args)


def test_the_case_list_covers_every_command():
    commands = {name_args(c)[1][0] for c in CASES}
    assert set(cli.COMMANDS) <= commands
    assert len(CASES) >= 150


@pytest.mark.parametrize(
    "args",
    [
        ["risk", "--epsilon", "1000"],
        ["risk", "--epsilon", "1e308", "--delta", "0.1"],
        ["risk", "--laplace-scale", "1e-300"],
    ],
)
def test_extreme_guarantees_are_valid_results(args, capsys):
    """e^epsilon overflowed from epsilon 710 up; such a guarantee certifies nothing: eta = 1/2."""
    assert cli.main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["eta"] == 0.5 and out["advantage"] == 1.0


def test_a_plot_is_written_whole_in_the_format_its_name_says(tmp_path, capsys):
    for name, magic in (("f.png", b"\x89PNG"), ("f.pdf", b"%PDF"), ("f.svg", b"<?xml")):
        assert cli.main(["risk", "--epsilon", "1", "--json", "--plot", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_bytes().startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png", "f.svg"]
    assert "Figure written to" in capsys.readouterr().err
