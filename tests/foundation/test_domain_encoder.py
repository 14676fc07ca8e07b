"""The released model's encoder reads its public domain: entries for the label or dropped columns are fine,
a misspelled entry is refused by the table's check, and a train-private run takes Adult's code-book domain."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mipkit._validation import MipkitValueError
from mipkit.data.encoder import DomainEncoder

ADULT_DOMAIN = Path(__file__).resolve().parents[2] / "docs" / "adult-domain.json"

DOMAIN = {
    "age": {"type": "numeric", "min": 17, "max": 90},
    "sex": {"type": "categorical", "categories": ["Female", "Male"]},
    "income": {"type": "categorical", "categories": ["<=50K", ">50K"]},
}


def test_an_entry_for_the_label_is_not_a_feature_and_not_an_error() -> None:
    encoder = DomainEncoder(DOMAIN, ["age", "sex"]).fit()
    assert list(encoder.feature_names_in_) == ["age", "sex"]
    out = encoder.transform(pd.DataFrame({"age": [30, 40], "sex": ["Male", "Female"]}))
    assert np.asarray(out).shape[0] == 2


def test_a_feature_without_an_entry_is_refused() -> None:
    with pytest.raises(MipkitValueError, match="no entry"):
        DomainEncoder(DOMAIN, ["age", "race"]).fit()


def test_adult_code_book_domain_fits_with_its_label_in_it() -> None:
    domain = json.loads(ADULT_DOMAIN.read_text())
    features = [c for c in domain if c != "income"]
    encoder = DomainEncoder(domain, features).fit()
    assert len(encoder.feature_names_out_) > len(features)  # text columns one-hot encoded
