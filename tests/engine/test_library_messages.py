"""No library message names a command-line flag: the engine and the trainers speak in library terms.

``ledger.py`` used to say "pass --overwrite" and ``trainers.py`` "--trainer", neither of which exists; the
command line translates library errors for its users. Docstrings may show command lines; messages may not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
MODULES = [
    *sorted((SRC / "engine").glob("*.py")),
    SRC / "game" / "trainers.py",
    SRC / "game" / "torch_adapter.py",
    SRC / "game" / "testing.py",
    SRC / "workflows" / "demo.py",
]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _message_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant of the module except docstrings, with its line."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_cli_flag_in_library_messages(path):
    strings = _message_strings(ast.parse(path.read_text(encoding="utf-8")))
    assert strings  # the scan sees the module's messages
    found = [(line, text) for line, text in strings if FLAG.search(text)]
    assert not found, f"{path.name} names CLI flags: {found}"


def test_the_scan_would_catch_a_flag():
    tree = ast.parse('"""Docs may say --out."""\nraise ValueError("choose another --out folder")\n')
    assert [text for _, text in _message_strings(tree) if FLAG.search(text)] == [
        "choose another --out folder"
    ]


def test_ledger_and_ray_messages_in_library_terms(tmp_path, monkeypatch):
    import sys

    from mipkit._validation import MipkitValueError
    from mipkit.engine import Ledger
    from mipkit.engine.ray_backend import import_ray

    bad = tmp_path / "ledger.sqlite"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(MipkitValueError, match="not a usable mipkit ledger") as info:
        Ledger(bad, "k")
    assert "--" not in str(info.value) and "another run folder" in str(info.value)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(
        MipkitValueError, match=r"Ray backend needs .*pip install mipkit\[distributed\]"
    ) as info:
        import_ray()
    assert "--" not in str(info.value)
