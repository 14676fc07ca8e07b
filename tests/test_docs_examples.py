"""The Python examples in README.md and docs/*.md run, and the values they print match their comments.

A line ``print(...)  # 0.0987 ...`` in an example states what it prints; the test captures the output of
each ``print`` and checks that every number in the comment appears in the printed text (same rounding).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
NUMBER = re.compile(r"-?\d+\.\d+|-?\d+")


def _examples():
    for doc in DOCS:
        for i, block in enumerate(BLOCK.findall(doc.read_text(encoding="utf-8"))):
            yield pytest.param(block, id=f"{doc.name}-{i}")


def _expected_per_print(block: str) -> list[list[str]]:
    """Numbers stated in the comment of each top-level print line, in order (empty when none)."""
    out = []
    for line in block.splitlines():
        if line.startswith("print(") and "#" in line:
            comment = line.split("#", 1)[1]
            out.append(NUMBER.findall(comment.split("  ")[0] if "  " in comment.strip() else comment))
        elif line.startswith("print("):
            out.append([])
    return out


@pytest.mark.parametrize("block", list(_examples()))
def test_documented_example_runs_and_prints_what_it_says(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed: list[str] = []

    def capture(*args, **kwargs):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print(*args, **kwargs)
        printed.append(buf.getvalue())

    module = types.ModuleType("__doc_example__")  # a real module, so that a dataclass defined in it resolves
    module.__dict__["print"] = capture
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(block, "<doc example>", "exec"), module.__dict__)
    expected = _expected_per_print(block)
    top_level = printed[-len(expected) :] if expected else []
    for want, got in zip(expected, top_level, strict=True):
        for number in want:
            assert number in got, f"documented value {number} not in printed {got!r}"
