"""Records written once: no class restates the fields of a class in another module.

A record that two layers read (an attack's output scored by a metric) lives once, in a layer both may import
(``mipkit.data.attack_records``), not as a dataclass in one package and a ``Protocol`` copy of its fields in
another: a field added to one copy and not the other goes unnoticed until a run reads it.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
MIN_FIELDS = 5  # a class of fewer fields is not a record worth the check


def _records(src: Path) -> list[tuple[str, str, frozenset[str]]]:
    """``(module file, class, its annotated field names)`` of every class with ``MIN_FIELDS`` fields."""
    out = []
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = frozenset(
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                )
                if len(names) >= MIN_FIELDS:
                    out.append((path.relative_to(src).as_posix(), node.name, names))
    return out


def restated(src: Path) -> list[str]:
    """``"a.py:A <= b.py:B"`` for each class whose fields are all fields of a class in another module."""
    found = []
    for one, other in itertools.combinations(_records(src), 2):
        if one[0] == other[0]:
            continue
        small, big = sorted((one, other), key=lambda r: len(r[2]))
        if small[2] <= big[2]:
            found.append(f"{small[0]}:{small[1]} <= {big[0]}:{big[1]}")
    return found


def test_no_record_restates_another() -> None:
    assert len(_records(SRC)) > 20  # the package was found
    assert not restated(SRC), f"records written twice: {restated(SRC)}"


def test_a_protocol_copy_of_a_record_is_found(tmp_path: Path) -> None:
    fields = "".join(f"    f{i}: int\n" for i in range(MIN_FIELDS))
    (tmp_path / "attacks.py").write_text(f"class Guesses:\n{fields}    extra: str\n")
    (tmp_path / "metrics.py").write_text(f"class GuessesLike(Protocol):\n{fields}")
    (tmp_path / "other.py").write_text("class Small:\n    f0: int\n    f1: int\n")
    assert restated(tmp_path) == ["metrics.py:GuessesLike <= attacks.py:Guesses"]
