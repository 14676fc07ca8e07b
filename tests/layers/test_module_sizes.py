"""Small modules with one job each: no source file of the package over 500 lines (issue 8)."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
LIMIT = 500


def test_no_source_file_over_the_limit() -> None:
    sizes = {
        p.relative_to(SRC).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in SRC.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"files over {LIMIT} lines: {over}"
