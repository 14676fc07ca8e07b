"""The shared pieces of the commands (mipkit.cli.options): size limits, output paths, strict config values,
groups of flags and their parsing."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from mipkit._validation import MipkitValueError
from mipkit.cli.options import (
    LIMITS,
    check_config_types,
    check_count,
    check_out_file,
    check_out_folder,
    comma_floats,
    comma_names,
    config_from_flags,
    flag_table,
    target_parameters,
    with_options,
)


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


def _group(
    fprs: str = typer.Option("0.1", "--fprs", help="FPRs."),
    n_boot: int = typer.Option(10, "--n-boot", help="Replicates."),
) -> dict:
    return {"fprs": comma_floats(fprs, "--fprs"), "n_boot": n_boot}


def _app_with_group(calls: list) -> typer.Typer:
    app = typer.Typer()

    @app.command("run")
    @with_options("measure", _group)
    def run(
        data: str = typer.Option(..., "--data", help="Data."),
        measure: object = None,
        as_json: bool = typer.Option(False, "--json", help="JSON."),
    ) -> None:
        """Run."""
        calls.append((data, as_json, measure))

    @app.command("other")
    def other() -> None:
        """Another command, so that ``run`` is a subcommand."""

    return app


def test_with_options_puts_the_group_in_place_and_defers_its_parsing():
    calls: list = []
    app = _app_with_group(calls)
    params = [p.name for p in typer.main.get_command(app).commands["run"].params]
    assert params == ["data", "fprs", "n_boot", "as_json"]  # the group's flags where ``measure`` stands
    result = CliRunner().invoke(app, ["run", "--data", "d.csv", "--fprs", "0.2,1:3", "--json"])
    assert result.exit_code == 0, result.output
    [(data, as_json, measure)] = calls
    assert (data, as_json) == ("d.csv", True)
    assert measure() == {"fprs": (0.2, 0.25), "n_boot": 10}  # parsed when the command calls it
    calls.clear()
    assert CliRunner().invoke(app, ["run", "--data", "d.csv", "--fprs", "x"]).exit_code == 0
    with pytest.raises(MipkitValueError, match="--fprs must be comma-separated numbers"):
        calls[0][2]()


def test_target_parameters_name_the_commands_target_flag():
    given = target_parameters("--target-risk")
    helps = {name: p.default.help for name, p in inspect.signature(given).parameters.items()}
    assert helps == {
        "fpr": "FPR for --target-risk tpr-at-fpr.",
        "baseline": "Baseline success for --target-risk success.",
        "base_rate": "Member fraction for --target-risk precision.",
        "recall": "Recall for --target-risk precision.",
    }
    assert given(0.01, None, None, None) == {"fpr": 0.01, "baseline": None, "base_rate": None, "recall": None}


def test_config_from_flags_takes_the_fields_named_like_flags():
    @dataclasses.dataclass(frozen=True)
    class Config:
        data: str = ""
        drop: tuple = ()
        n_models: int = 16
        seed: int = 0

    flags = {"data": "d.csv", "drop": "a, b", "models": 8, "out": "runs/x", "as_json": True}
    cfg = config_from_flags(Config, flags, drop=comma_names(flags["drop"]), n_models=flags["models"])
    assert cfg == Config(data="d.csv", drop=("a", "b"), n_models=8, seed=0)


def test_comma_lists():
    assert comma_names(None) is None
    assert comma_names(" a, b ,,") == ("a", "b")
    assert comma_floats("0.5, 1:3,", "--base-rates") == (0.5, 0.25)
    with pytest.raises(MipkitValueError, match="--fprs must be comma-separated numbers. Got 'a'"):
        comma_floats("a", "--fprs")


_TABLE = flag_table(
    """
--original          Training data of the generator.
--non-member-baseline/--no-non-member-baseline  Run each attack on the
                    original without the targets;
                    see the docs.
--bare
"""
)


def test_flag_table_reads_flags_helps_and_continuations():
    flags = _TABLE
    assert list(flags) == ["--original", "--non-member-baseline/--no-non-member-baseline", "--bare"]
    assert flags["--original"].help == "Training data of the generator."
    assert flags["--non-member-baseline/--no-non-member-baseline"].help == (
        "Run each attack on the original without the targets; see the docs."
    )
    assert flags["--bare"].help == ""
    app = typer.Typer()

    @app.command()
    def run(original: Annotated[str, _TABLE["--original"]] = "x") -> None:
        print(f"got {original}")

    runner = CliRunner()
    assert runner.invoke(app, ["--original", "y"]).output.strip() == "got y"
    assert "Training data of the generator." in runner.invoke(app, ["--help"]).output
    with pytest.raises(ValueError, match="twice"):
        flag_table("--a  one\n--a  two\n")
    with pytest.raises(ValueError, match="continuation"):
        flag_table("   orphan text\n--a  one\n")


def test_every_flag_of_a_flag_table_is_used_by_its_command():
    # a help written for a flag no parameter uses would never be shown
    from mipkit.cli import audit_fitted, audit_synthetic

    for module in (audit_fitted, audit_synthetic):
        source = inspect.getsource(module)
        for flag in module.FLAGS:
            assert source.count(f'FLAGS["{flag}"]') == 1, (module.__name__, flag)
