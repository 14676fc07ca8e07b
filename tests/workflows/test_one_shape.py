"""Every verb has the one shape: mipkit.<verb>(data, config) -> <Verb>Result, a frozen config checked when
built, a frozen result with summary / to_dict / to_frame / write, in a subpackage of three modules."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

import mipkit
from mipkit.workflows._shape import VerbConfig

CAMEL = {verb: "".join(p.capitalize() for p in verb.split("_")) for verb in mipkit.VERBS}


def test_eleven_verbs_exported() -> None:
    assert len(mipkit.VERBS) == 11
    for verb in mipkit.VERBS:
        assert verb in mipkit.__all__
        assert f"{CAMEL[verb]}Config" in mipkit.__all__
        assert f"{CAMEL[verb]}Result" in mipkit.__all__


@pytest.mark.parametrize("verb", mipkit.VERBS)
def test_subpackage_has_the_three_modules(verb: str) -> None:
    for module in ("config", "run", "result"):
        importlib.import_module(f"mipkit.workflows.{verb}.{module}")


@pytest.mark.parametrize("verb", mipkit.VERBS)
def test_verb_takes_data_and_config(verb: str) -> None:
    params = list(inspect.signature(getattr(mipkit, verb)).parameters.values())
    assert [p.name for p in params[:2]] == ["data", "config"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:]), params


@pytest.mark.parametrize("verb", mipkit.VERBS)
def test_config_is_frozen_and_checked(verb: str) -> None:
    config_cls = getattr(mipkit, f"{CAMEL[verb]}Config")
    assert dataclasses.is_dataclass(config_cls) and issubclass(config_cls, VerbConfig)
    assert config_cls.__dataclass_params__.frozen
    config = config_cls()  # every setting has a default
    field = dataclasses.fields(config)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(config, field, getattr(config, field))
    assert isinstance(config.to_dict(), dict)


@pytest.mark.parametrize("verb", mipkit.VERBS)
def test_result_is_frozen_with_the_four_methods(verb: str) -> None:
    result_cls = getattr(mipkit, f"{CAMEL[verb]}Result")
    assert dataclasses.is_dataclass(result_cls) and result_cls.__dataclass_params__.frozen
    for method in ("summary", "to_dict", "to_frame", "write"):
        assert callable(getattr(result_cls, method, None)), method
