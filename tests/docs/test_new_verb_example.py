"""The example of docs/layout.md ("Adding a verb") is a verb of the one shape.

Its files, written into a folder that extends ``mipkit.workflows`` and ``mipkit.cli``, and its two
registrations, applied to ``mipkit.VERBS`` / the lazy exports and to ``mipkit.cli.COMMANDS``, pass the
shape checks of tests/workflows/test_one_shape.py and the command-table check of
tests/cli/test_cli_help_texts.py (imported from there, not copied); the verb and its command give the
answers and the errors the page states.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import mipkit
import mipkit.cli as cli
import mipkit.workflows
from mipkit._validation import MipkitValueError
from mipkit.workflows._shape import VerbResult

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "layout.md"
BLOCK = re.compile(r'```python title="([^"]+)"\n(.*?)```', re.S)


def _load(path: Path, name: str):
    """A test module of the suite, loaded under its own name (its check functions are reused)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ONE_SHAPE = _load(ROOT / "tests" / "workflows" / "test_one_shape.py", "one_shape_checks")
HELP_TEXTS = _load(ROOT / "tests" / "cli" / "test_cli_help_texts.py", "cli_help_text_checks")


def _example() -> tuple[dict[str, str], dict]:
    """The page's files (path under src/mipkit -> code) and the names its registrations set."""
    blocks = dict(BLOCK.findall(PAGE.read_text(encoding="utf-8")))
    files = {
        title.removeprefix("src/mipkit/"): code for title, code in blocks.items() if title.startswith("src/")
    }
    registry: dict = {"COMMANDS": {}}
    exec(blocks["the two registrations"], registry)
    return files, registry


@pytest.fixture
def verb(tmp_path, monkeypatch):
    files, registry = _example()
    for rel, code in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code, encoding="utf-8")
    (name,) = [v for v in registry["VERBS"] if isinstance(v, str)]
    camel = mipkit._camel(name)
    monkeypatch.setattr(
        mipkit.workflows, "__path__", [*mipkit.workflows.__path__, str(tmp_path / "workflows")]
    )
    monkeypatch.setattr(cli, "__path__", [*cli.__path__, str(tmp_path / "cli")])
    monkeypatch.setattr(mipkit, "VERBS", (*mipkit.VERBS, name))
    for export in (name, f"{camel}Config", f"{camel}Result"):  # what VERBS gives in mipkit/__init__.py
        monkeypatch.setitem(mipkit._lazy, export, f"mipkit.workflows.{name}")
    monkeypatch.setitem(ONE_SHAPE.CAMEL, name, camel)
    for command, entry in registry["COMMANDS"].items():
        monkeypatch.setitem(cli.COMMANDS, command, entry)
    try:
        yield name
    finally:
        for module in [
            m for m in sys.modules if m.startswith((f"mipkit.workflows.{name}", f"mipkit.cli.{name}"))
        ]:
            del sys.modules[module]
        vars(mipkit.workflows).pop(name, None)
        vars(cli).pop(name, None)


def test_the_page_shows_a_whole_verb() -> None:
    files, registry = _example()
    (name,) = [v for v in registry["VERBS"] if isinstance(v, str)]
    assert {f"workflows/{name}/{m}.py" for m in ("config", "run", "result", "__init__")} <= set(files)
    assert f"cli/{name}.py" in files
    assert [module for module, _ in registry["COMMANDS"].values()] == [name]


def test_the_example_verb_has_the_one_shape(verb) -> None:
    ONE_SHAPE.test_subpackage_has_the_three_modules(verb)
    ONE_SHAPE.test_verb_takes_data_and_config(verb)
    ONE_SHAPE.test_config_is_frozen_and_checked(verb)
    ONE_SHAPE.test_result_is_frozen_with_the_four_methods(verb)


def test_the_example_verb_answers_and_refuses_in_one_line(verb, tmp_path) -> None:
    table = pd.DataFrame({"zip": ["1000", "1000", "2000", "2000", "2000"], "age": [30, 30, 40, 40, 41]})
    config = mipkit.SmallestGroupConfig(columns=["zip"], k=2)
    assert config.columns == ("zip",)
    result = getattr(mipkit, verb)(table, config)
    assert isinstance(result, VerbResult)
    assert (result.smallest, result.groups) == (2, 2)
    assert "meets k = 2" in result.summary()
    assert getattr(mipkit, verb)(table, config.replace(columns=())).smallest == 1  # every column: (2000, 41)
    assert json.loads((result.write(tmp_path / "out")).read_text()) == json.loads(
        json.dumps(result.to_dict())
    )
    assert result.to_frame()["value"].tolist() == [2, 2]
    with pytest.raises(MipkitValueError, match=r"^k must be at least 2; got 1\.$"):
        config.replace(k=1)
    with pytest.raises(MipkitValueError, match="not found"):
        getattr(mipkit, verb)(table, config.replace(columns=("postcode",)))
    assert "`MipkitValueError: k must be at least 2; got 1.`" in PAGE.read_text(encoding="utf-8")


def test_the_example_command_is_in_the_command_table_and_runs(verb, tmp_path, capsys) -> None:
    HELP_TEXTS.test_the_command_table_matches_the_modules()
    (command,) = [c for c, (module, _) in cli.COMMANDS.items() if module == verb]
    data = tmp_path / "table.csv"
    pd.DataFrame({"zip": ["1000", "1000", "2000"], "age": [30, 31, 40]}).to_csv(data, index=False)
    assert cli.main([command, "--data", str(data), "--column", "zip", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "The smallest of 2 groups holds 1 records: the table does not meet k = 2." in out
    assert cli.main([command, "--data", str(data), "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "mipkit: error: k must be at least 2; got 1.\n"
    assert f"`{err.strip()}`" in PAGE.read_text(encoding="utf-8")
