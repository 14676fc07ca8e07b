"""Help texts: every command's ``--help`` shows each option's default and its bracketed notes as written.

Rich markup used to swallow ``[loss,lira,rmia]`` and ``[runs/audit]`` ("Run folder .") and print flags as
``--json <bool>``; help is now plain text. The reference values here come from the click parameters
themselves (their help strings and defaults), not from the rendered output.
"""

from __future__ import annotations

import re

import pytest
from typer._click import Context
from typer._click.utils import make_default_short_help

import mipkit.cli as cli

BRACKETED = re.compile(r"\[[^\]]+\]")


def _squeeze(text: str) -> str:
    """Text without any whitespace, so that line wrapping does not matter."""
    return re.sub(r"\s+", "", text)


def _command(name: str):
    module = cli.COMMANDS[name][0]
    return cli._load_module_commands(module)[name]


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_help_shows_every_default_and_no_markup_losses(name, capsys):
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: mipkit {name} ")
    assert "<bool>" not in out
    flat = _squeeze(out)
    command = _command(name)
    ctx = Context(command, info_name=name)
    options = [p for p in command.params if getattr(p, "opts", None) and p.param_type_name == "option"]
    assert options
    for param in options:
        names, help_text = param.get_help_record(ctx)
        if param.is_flag:
            # a flag is printed bare: "--json", "--dropna / --no-dropna", never "--json <bool>"
            assert "<" not in names, names
        if param.default is not None and not param.is_flag and param.show_default is not False:
            assert "default:" in help_text, f"{name} {param.opts[0]}: default {param.default!r} not shown"
        for note in BRACKETED.findall(param.help or ""):
            assert _squeeze(note) in flat, f"{name} {param.opts[0]}: {note} lost from the help"
        assert _squeeze(f"{names}{help_text}") in flat, (
            f"{name} {param.opts[0]} is not shown as {help_text!r}"
        )


def test_the_command_table_matches_the_modules():
    """COMMANDS lists every registered command, in the module that registers it, with its own summary."""
    registered = {}
    for module in {module for module, _ in cli.COMMANDS.values()}:
        for name, command in cli._load_module_commands(module).items():
            registered[name] = (module, command)
    assert set(registered) == set(cli.COMMANDS)
    for name, (module, summary) in cli.COMMANDS.items():
        assert registered[name][0] == module
        real = " ".join((registered[name][1].help or "").split("\n\n")[0].split())
        # what `mipkit --help` lists is what the command's own docstring would give
        assert make_default_short_help(summary, 60) == make_default_short_help(real, 60), (
            f"update the summary of {name!r} in mipkit.cli.COMMANDS to the first sentence of its docstring"
        )


def test_top_level_help_lists_the_commands_without_importing_them(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert re.search(rf"^  {re.escape(name)}\s", out, re.M), name
    assert "<bool>" not in out and "--version" in out


def test_no_arguments_prints_the_help_and_exits_2(capsys):
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: mipkit") and "Commands:" in err


INTERNALS = (
    ":class:",
    ":func:",
    ":data:",
    ":meth:",
    "``",
    "option declarations",
    "Long only",
    "flags ->",
    "mipkit.workflows",
    "Config`",
)


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_help_is_for_users_without_internal_notes(name, capsys):
    """``--help`` shows the docstring: no Sphinx roles, no code markup, no notes about the code's layout."""
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    for word in INTERNALS:
        assert word not in out, f"{name} --help shows the internal text {word!r}"
