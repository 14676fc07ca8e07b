"""The commands' shared guards: size limits, output paths and strict config values (mipkit.cli.options)."""

from __future__ import annotations

import pytest

from mipkit._validation import MipkitValueError
from mipkit.cli.options import LIMITS, check_config_types, check_count, check_out_file, check_out_folder


def test_check_count_limits_and_the_override():
    soft, hard = LIMITS["models"].soft, LIMITS["models"].hard
    assert check_count("--models", soft, kind="models") == soft
    assert check_count("--models", None, kind="models") is None
    with pytest.raises(MipkitValueError, match=f"over the limit of {soft:,}.*--yes-i-mean-it"):
        check_count("--models", soft + 2, kind="models", override=False)
    with pytest.raises(MipkitValueError, match="over the limit") as info:  # a command without the override
        check_count("--models", soft + 2, kind="models")
    assert "--yes-i-mean-it" not in str(info.value)
    assert check_count("--models", soft + 2, kind="models", override=True) == soft + 2
    with pytest.raises(MipkitValueError, match=f"at most {hard:,}"):
        check_count("--models", hard + 2, kind="models", override=True)  # the hard limit is never lifted
    with pytest.raises(MipkitValueError, match="at most 60 here"):
        check_count("--n-targets", 100000, kind="rows", maximum=60)
    with pytest.raises(MipkitValueError, match="at least 1"):
        check_count("--n-attacks", 0, kind="rows")
    with pytest.raises(MipkitValueError, match="even"):
        check_count("--models", 5, kind="models", even=True)
    with pytest.raises(MipkitValueError, match="at most 1,000,000"):
        check_count("--steps", 10**12, kind="steps")


def test_output_paths(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    for bad in ("", "   "):
        with pytest.raises(MipkitValueError, match="empty path"):
            check_out_folder(bad)
        with pytest.raises(MipkitValueError, match="empty path"):
            check_out_file(bad)
    with pytest.raises(MipkitValueError, match="not a folder"):
        check_out_folder(tmp_path / "f.txt")
    with pytest.raises(MipkitValueError, match="is a folder"):
        check_out_file(tmp_path)
    with pytest.raises(MipkitValueError, match=r"ending in \.png, \.pdf, \.svg"):
        check_out_file(tmp_path / "x.foo", "--plot", suffixes=(".png", ".pdf", ".svg"))
    assert check_out_file(tmp_path / "x.PNG", suffixes=(".png",)) == tmp_path / "x.PNG"


class _Param:
    def __init__(self, name, kind, is_flag=False):
        self.name, self.is_flag = name, is_flag
        self.type_descriptor = type("T", (), {"annotation": kind})()


class _Command:
    params = [
        _Param("dropna", bool, is_flag=True),
        _Param("models", int),
        _Param("targets", int | None),
        _Param("confidence", float),
        _Param("target", str),
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"dropna": "no"}, "'dropna' must be true or false"),
        ({"dropna": 0}, "'dropna' must be true or false"),
        ({"models": "8"}, "'models' must be an integer"),
        ({"models": True}, "'models' must be an integer"),
        ({"models": 8.0}, "'models' must be an integer"),
        ({"targets": "4"}, "'targets' must be an integer"),
        ({"confidence": "high"}, "'confidence' must be a number"),
        ({"target": ["a", "b"]}, "'target' must be text"),
        ({"allow_model": "x.Y"}, "cannot be set in a config file"),
    ],
)
def test_config_values_are_checked_strictly(values, message):
    with pytest.raises(MipkitValueError, match=message):
        check_config_types(values, _Command)


def test_good_config_values_pass():
    good = {"dropna": False, "models": 8, "targets": None, "confidence": 1, "target": "income"}
    assert check_config_types(good, _Command) is good
