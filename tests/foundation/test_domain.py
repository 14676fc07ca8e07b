"""Public domains (:mod:`mipkit.data.domain`): reading and validating files, encoding from the domain alone,
and ``mipkit domain``, whose template holds the table's schema and no value of its rows."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.cli import main
from mipkit.data.domain import (
    MAX_DOMAIN_BYTES,
    check_domain,
    domain_template,
    encode_features,
    read_domain,
    validate_domain,
)
from mipkit.data.io import features_target

GOOD = {
    "age": {"type": "numeric", "min": 17, "max": 90, "integer": True},
    "colour": {"type": "categorical", "categories": ["red", "blue", "green"], "missing": True},
}


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_domain_is_read_and_normalised(tmp_path):
    dom = read_domain(_write(tmp_path / "d.json", json.dumps(GOOD)))
    assert dom["age"] == {"type": "numeric", "min": 17.0, "max": 90.0, "integer": True, "missing": False}
    assert dom["colour"] == {"type": "categorical", "categories": ["red", "blue", "green"], "missing": True}
    # numbers as categories are matched as text: 1, 1.0 and "1" are the same level
    assert validate_domain({"k": {"type": "categorical", "categories": [1, 2.5, "x"]}})["k"][
        "categories"
    ] == [
        "1",
        "2.5",
        "x",
    ]


MALFORMED = [
    ("[1, 2]", "must be a JSON object"),
    ("{}", "has no columns"),
    ('{"a": 3}', "must be an object"),
    ('{"a": {"min": 0, "max": 1}}', "has no 'type'"),
    ('{"a": {"type": "number", "min": 0, "max": 1}}', "'numeric', 'categorical' or 'identifier'"),
    ('{"a": {"type": "numeric", "min": 0, "max": 1, "unit": "cm"}}', "unknown key(s) 'unit'"),
    ('{"a": {"type": "categorical", "categories": ["x"], "min": 0}}', "unknown key(s) 'min'"),
    ('{"a": {"type": "numeric", "min": 5, "max": 1}}', "above 'max'"),
    ('{"a": {"type": "numeric", "min": null, "max": 1}}', "needs a finite 'min'"),
    ('{"a": {"type": "numeric", "max": 1}}', "needs a finite 'min'"),
    ('{"a": {"type": "numeric", "min": "0", "max": 1}}', "must be a number"),
    ('{"a": {"type": "numeric", "min": true, "max": 1}}', "must be a number"),
    ('{"a": {"type": "numeric", "min": 0, "max": 1e999}}', "out of range"),
    ('{"a": {"type": "numeric", "min": NaN, "max": 1}}', "not a JSON number"),
    ('{"a": {"type": "numeric", "min": -Infinity, "max": 1}}', "not a JSON number"),
    ('{"a": {"type": "numeric", "min": 0, "max": 1, "integer": "yes"}}', "true or false"),
    ('{"a": {"type": "categorical", "categories": []}}', "non-empty 'categories'"),
    ('{"a": {"type": "categorical"}}', "non-empty 'categories'"),
    ('{"a": {"type": "categorical", "categories": "xy"}}', "non-empty 'categories'"),
    ('{"a": {"type": "categorical", "categories": ["x", null]}}', "type NoneType"),
    ('{"a": {"type": "categorical", "categories": ["x", ["y"]]}}', "type list"),
    ('{"a": {"type": "categorical", "categories": ["1", 1.0]}}', "a category twice"),
    ('{"a": {"type": "categorical", "categories": ["x"], "missing": 1}}', "true or false"),
    ('{"a": {"type": "numeric", "min": 0, "max": 1}, "a": {"type": "numeric", "min": 0, "max": 2}}', "twice"),
    ('{"a": {"type": "numeric", "min": 0, "max": 1}', "not valid JSON"),
    ("[" * 10 + "]" * 10, "nests 10 levels deep"),
    ("[" * 100_000 + "]" * 100_000, "nests 100,000 levels deep"),
]


@pytest.mark.parametrize(("text", "words"), MALFORMED, ids=[w for _, w in MALFORMED])
def test_each_malformed_domain_is_one_line(tmp_path, text, words):
    with pytest.raises(MipkitValueError) as err:
        read_domain(_write(tmp_path / "d.json", text))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_only_regular_files_of_bounded_size_are_read(tmp_path):
    with pytest.raises(MipkitValueError, match="No such domain file"):
        read_domain(tmp_path / "none.json")
    with pytest.raises(MipkitValueError, match="is a folder"):
        read_domain(tmp_path)
    if hasattr(os, "mkfifo"):  # a FIFO would block a reader forever
        os.mkfifo(tmp_path / "fifo.json")
        with pytest.raises(MipkitValueError, match="not a regular file"):
            read_domain(tmp_path / "fifo.json")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_DOMAIN_BYTES + 1)
    with pytest.raises(MipkitValueError, match="at most .* are read"):
        read_domain(big)
    (tmp_path / "latin.json").write_bytes(b'{"\xe9": 1}')
    with pytest.raises(MipkitValueError, match="not UTF-8"):
        read_domain(tmp_path / "latin.json")


def test_check_domain_needs_every_column_and_refuses_misspelt_ones():
    assert list(check_domain(GOOD, ["colour", "age"])) == ["colour", "age"]
    with pytest.raises(MipkitValueError, match=r"no entry for the column\(s\) 'height'"):
        check_domain(GOOD, ["age", "colour", "height"])
    with pytest.raises(MipkitValueError, match=r"names column\(s\) 'colour' that the table lacks"):
        check_domain(GOOD, ["age"])
    assert list(check_domain(GOOD, ["age"], known=["age", "colour", "label"])) == ["age"]


def test_encoding_has_every_domain_level_in_the_domain_order():
    frame = pd.DataFrame({"age": [20, 30, 40], "colour": ["blue", np.nan, "blue"]})
    X, names = encode_features(frame, GOOD)
    assert names == ["age", "colour_red", "colour_blue", "colour_green", "colour_nan"]
    # red and green are held by no row and still are columns (levels come from the domain, not the rows)
    assert X.tolist() == [[20, 0, 1, 0, 0], [30, 0, 0, 0, 1], [40, 0, 1, 0, 0]]
    numeric = {"h": {"type": "numeric", "min": 0, "max": 3, "missing": True}}
    X, names = encode_features(pd.DataFrame({"h": [1.5, np.nan]}), numeric)
    assert names == ["h", "h_nan"] and X.tolist() == [[1.5, 0.0], [0.0, 1.0]]
    # a numeric column may be categorical in the domain: 1.0 is the level "1"
    X, names = encode_features(
        pd.DataFrame({"k": [1.0, 2.0]}), {"k": {"type": "categorical", "categories": [2, 1]}}
    )
    assert names == ["k_2", "k_1"] and X.tolist() == [[0, 1], [1, 0]]


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ({"age": [20, 95, 99], "colour": ["red"] * 3}, "'age' has 2 cell(s) outside its domain [17, 90]"),
        ({"age": [20, 30.5, 40], "colour": ["red"] * 3}, "'age' has 1 cell(s) that are not whole numbers"),
        ({"age": [20, np.nan, 40], "colour": ["red"] * 3}, "'age' has 1 cell(s) missing"),
        ({"age": ["20", "x", "40"], "colour": ["red"] * 3}, "'age' has 1 cell(s) that are not numbers"),
        ({"age": [20, 30, 40], "colour": ["red", "SECRET", "SECRET"]}, "'colour' has 2 cell(s) outside"),
    ],
)
def test_a_value_outside_the_domain_is_refused_without_printing_it(frame, words):
    with pytest.raises(MipkitValueError) as err:
        encode_features(pd.DataFrame(frame), GOOD)
    message = str(err.value)
    assert words in message and "\n" not in message
    assert "SECRET" not in message and "95" not in message and "30.5" not in message


def test_private_releases_refuse_text_features_without_a_domain():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "colour": ["red", "blue", "red"], "label": [0, 1, 0]})
    for encode in ("none", "onehot"):
        with pytest.raises(MipkitValueError, match="would reveal them.*--domain.*mipkit domain"):
            features_target(df, "label", encode=encode, release=True)
    ds = features_target(df, "label", encode="onehot")  # a measurement keeps reading levels from the data
    assert ds.feature_names == ["a", "colour_blue", "colour_red"]
    assert features_target(df[["a", "label"]], "label", release=True).X.shape == (3, 1)
    dom = {"a": {"type": "numeric", "min": 0, "max": 5}, "colour": GOOD["colour"]}
    ds = features_target(df, "label", domain=dom, release=True)
    assert ds.feature_names == ["a", "colour_red", "colour_blue", "colour_green", "colour_nan"]


def test_template_holds_the_schema_and_no_value_of_the_data():
    df = pd.DataFrame(
        {"id": [1, 2], "age": [31.5, 77.25], "name": ["MARKER_Q7Z", "x"], "flag": [True, False]}
    )
    template = domain_template(df, drop=("id",))
    assert template == {
        "age": {"type": "numeric", "min": None, "max": None, "integer": False, "missing": False},
        "name": {"type": "categorical", "categories": [], "missing": False},
        "flag": {"type": "categorical", "categories": [], "missing": False},
    }
    with pytest.raises(MipkitValueError, match="needs a finite 'min'"):
        validate_domain(template)  # to be filled in before use


def test_domain_command_writes_a_template_without_any_value(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "id": np.arange(50),
            "age": rng.integers(18, 80, 50),
            "income": rng.normal(5e4, 1e4, 50).round(2),
            "country": rng.choice(["Peru", "Chile"], 50),
            "label": rng.choice(["yes", "no"], 50),
        }
    )
    df.loc[7, "country"] = "Zzyzx-Marker-Country"
    df.loc[9, "income"] = 987654.321
    df.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "domain.json"
    assert main(["domain", "--data", str(tmp_path / "t.csv"), "--out", str(out), "--drop", "id"]) == 0
    said = capsys.readouterr().out
    assert len(said.strip().splitlines()) == 1 and "public" in said and "--domain" in said
    text = out.read_text()
    for value in ("Zzyzx-Marker-Country", "987654", "Peru", "Chile", "yes"):
        assert value not in text and value not in said
    assert not any(str(v) in text for v in df["age"].unique())
    assert list(json.loads(text)) == ["age", "income", "country", "label"]
    # filled in from public knowledge, the template is a domain train-private can use
    dom = json.loads(text)
    dom["age"].update(min=0, max=120, integer=True)
    dom["income"].update(min=0, max=1e7)
    dom["country"]["categories"] = ["Chile", "Peru", "Zzyzx-Marker-Country"]
    dom["label"]["categories"] = ["no", "yes"]
    assert list(validate_domain(dom)) == ["age", "income", "country", "label"]


@pytest.mark.parametrize(("text", "words"), MALFORMED[:12], ids=[w for _, w in MALFORMED[:12]])
def test_a_malformed_domain_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys, text, words):
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]}).to_csv(tmp_path / "t.csv", index=False)
    dom = _write(tmp_path / "d.json", text)
    args = ["train-private", "--data", str(tmp_path / "t.csv"), "--target", "label", "--domain", str(dom),
            "--noise-multiplier", "1", "--batch-size", "2", "--out", str(tmp_path / "run")]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mipkit: error:") and words in err
    assert not (tmp_path / "run" / "model.joblib").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--out", "domain.txt"], "ending in .json"),
        (["--out", "domain.json", "--drop", "nope"], "'nope' not found"),
        (["--out", "domain.json", "--drop", "a,label"], "leaves no column"),
    ],
)
def test_domain_command_bad_input(tmp_path, capsys, args, words):
    pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]}).to_csv(tmp_path / "t.csv", index=False)
    args = [a if not a.startswith("domain.") else str(tmp_path / a) for a in args]
    assert main(["domain", "--data", str(tmp_path / "t.csv"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err
