"""Code and docs say what is: no tracker issue numbers and no notes of what a name or a figure used to be."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"(?i)\bissues? ?#?\d+\b|(?<![\w.\]/(&-])#\d{1,4}\b")
HISTORY = re.compile(r"(?i)\bformerly\b|\(was \d|\bdeprecat\w*\b.*\bmipkit\b|before 2026-\d\d")


def _texts():
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "src" / "mipkit").rglob("*.py")]:
        yield path, path.read_text(encoding="utf-8")


def offending(pattern: re.Pattern, texts) -> list[str]:
    return [
        f"{path.name}:{i}: {line.strip()[:80]}"
        for path, text in texts
        for i, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]


def test_no_issue_numbers_in_src_or_docs() -> None:
    assert not offending(ISSUE, _texts())


def test_no_history_notes_in_src_or_docs() -> None:
    assert not offending(HISTORY, _texts())


def test_the_patterns_catch_what_they_should() -> None:
    bad = [(Path("a.py"), "fixed for issue 9 (was 73.1%)\nsee #23\nformerly run_audit")]
    assert len(offending(ISSUE, bad)) == 2 and len(offending(HISTORY, bad)) == 2
    good = [(Path("b.md"), "see [theory](theory.md#10-where) and `x = 1  # 1 fit`; what was fixed")]
    assert not offending(ISSUE, good) and not offending(HISTORY, good)
