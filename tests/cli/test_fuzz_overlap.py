"""Inputs that contradict each other, certificates that lie, models of the wrong kind.

* Overlapping inputs: unseen records (``--control``, ``--holdout``) that are the original's rows, members
  equal to non-members, a population made of the audited records, ``--target`` naming a feature the model
  uses, a one-class table. An audit of such inputs would measure nothing and say so as a result.
* Lying certificates (``audit-synthetic --certificate``): ``"certified": "no"`` (a non-empty string is true
  in Python), numbers given as text, a negative epsilon or eta, a mechanism that states nothing, a file of
  another kind; the audit compares the release with what the certificate states, so each is refused.
* A clusterer saved as a model file (KMeans has ``predict``, but its cluster ids are no prediction).

Each is refused before the computation (the ``no_computation`` fixture).
"""

from __future__ import annotations

import pytest
from fuzz_inputs import as_params

pytestmark = pytest.mark.usefixtures("no_computation")

SYNTH = ["audit-synthetic", "--original", "original.csv", "--synthetic", "synthetic.csv", "--out", "prev"]
FITTED = ["audit-fitted", "--model-file", "model.skops", "--out", "prev"]
AUDITED = ["--members", "members.csv", "--non-members", "non_members.csv"]
LIES = {
    '"certified": "no"': "cert_certified_no",
    "eta as text": "cert_eta_text",
    "a negative epsilon": "cert_negative_epsilon",
    "a negative eta": "cert_negative_eta",
    "a TPR as a word": "cert_tpr_text",
    "another kind of certificate": "cert_other_kind",
    "no mechanism": "cert_no_mechanism",
    "a list": "cert_a_list",
}
CASES = [
    ("audit-synthetic: control = original", [*SYNTH, "--control", "original.csv"]),
    ("audit-synthetic: holdout = original", [*SYNTH, "--holdout", "original.csv"]),
    ("audit-synthetic: holdout = original shuffled", [*SYNTH, "--holdout", "synthetic.csv"]),
    (
        "audit-fitted: members = non-members",
        [*FITTED, "--members", "members.csv", "--non-members", "members.csv", "--target", "label"],
    ),
    (
        "audit-fitted: population = members",
        [*FITTED, *AUDITED, "--population", "members.csv", "--reference-models", "4", "--target", "label"],
    ),
    ("audit-fitted: target a feature", [*FITTED, *AUDITED, "--target", "a"]),
    (
        "audit-fitted: a clusterer",
        ["audit-fitted", "--model-file", "kmeans.skops", *AUDITED, "--target", "label", "--out", "prev"],
    ),
    (
        "audit-one-run: one class",
        [
            "audit-one-run",
            "--data",
            "one_class.csv",
            "--target",
            "label",
            "--canaries",
            "10",
            "--out",
            "prev",
        ],
    ),
    (
        "train-private: one class",
        [
            "train-private",
            "--data",
            "one_class.csv",
            "--target",
            "label",
            "--noise-multiplier",
            "1",
            "--out",
            "prev",
        ],
    ),
    *[(f"certificate: {what}", [*SYNTH, "--certificate", f"{name}.json"]) for what, name in LIES.items()],
    pytest.param(
        "synthesize: a domain entry without its type",
        [
            "synthesize",
            "--data",
            "good.csv",
            "--method",
            "mst",
            "--epsilon",
            "1",
            "--domain",
            "cert.json",
            "--out",
            "prev",
        ],
    ),
]


@pytest.mark.parametrize("args", as_params(CASES))
def test_contradicting_inputs_are_refused_before_the_computation(refused, args):
    refused(args)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            [*SYNTH, "--certificate", "cert.json", "--holdout", "holdout.csv"], id="a true certificate"
        ),
        pytest.param(
            [*SYNTH, "--holdout", "holdout.csv", "--control", "holdout.csv"], id="holdout = control"
        ),
        pytest.param([*FITTED, *AUDITED, "--target", "label"], id="audit-fitted: members and non-members"),
    ],
)
def test_consistent_inputs_reach_the_computation(reaches, args):
    reaches(args)
