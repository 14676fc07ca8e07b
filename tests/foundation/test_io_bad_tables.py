"""Tables that used to be accepted silently (issue 10, item 6): repeated names, a stray word in a numeric
column, dropping the label."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.data.io import features_target, read_table


def test_repeated_column_names_are_refused(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,a,label\n1,2,3,0\n4,5,6,1\n")
    with pytest.raises(MipkitValueError, match=r"repeated column names: 'a' \(columns 1, 3\)"):
        read_table(tmp_path / "d.csv")
    (tmp_path / "s.csv").write_text("a, a ,label\n1,2,0\n")  # the same name once stripped
    with pytest.raises(MipkitValueError, match="repeated column names"):
        read_table(tmp_path / "s.csv")


def test_blank_header_cells_keep_pandas_names(tmp_path):
    (tmp_path / "t.csv").write_text("x,y,label,\n1,2,0,\n3,4,1,\n")
    assert list(read_table(tmp_path / "t.csv").columns) == ["x", "y", "label", "Unnamed: 3"]


def test_a_word_in_a_numeric_column_is_refused_even_with_onehot():
    df = pd.DataFrame({"age": ["31", "45", "abc", "27", "52"], "label": [0, 1, 0, 1, 0]})
    for encode in ("none", "onehot"):
        with pytest.raises(
            MipkitValueError, match=r"'age' holds numbers except for 1 cell.*'abc'.*row\(s\) 3"
        ):
            features_target(df, "label", encode=encode)


def test_a_categorical_column_with_a_few_numbers_is_still_encoded():
    df = pd.DataFrame({"colour": ["red", "blue", "red", "3", "blue", "red"], "label": [0, 1, 0, 1, 0, 1]})
    ds = features_target(df, "label", encode="onehot")
    assert ds.feature_names == ["colour_3", "colour_blue", "colour_red"] and np.all(ds.X.sum(axis=1) == 1)


def test_the_target_cannot_be_dropped():
    df = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]})
    with pytest.raises(MipkitValueError, match="target column 'label' cannot also be dropped"):
        features_target(df, "label", drop=("label",))
