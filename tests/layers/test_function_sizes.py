"""Small functions: no function spans more than 80 lines, its signature and docstring included; a longer one
is split into steps with a name each. The one exception: a command of ``cli/`` whose length is its option
declarations (one Typer option a flag), which says so in a comment or docstring."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
UPPER = ("workflows", "cli")
LIMIT = 80


def long_functions(src: Path, skip: tuple[str, ...] = (), limit: int = LIMIT) -> dict[str, int]:
    """``{"file:function": lines}`` of every function (methods and nested ones too) over ``limit`` lines."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] in skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found[f"{rel.as_posix()}:{node.name}"] = lines
    return found


def test_no_lower_layer_function_over_the_limit() -> None:
    long = long_functions(SRC, skip=UPPER)
    assert not long, f"functions over {LIMIT} lines: {long}"


def test_no_workflow_function_over_the_limit() -> None:
    long = long_functions(SRC / "workflows")
    assert not long, f"functions over {LIMIT} lines: {long}"


def test_a_long_command_is_long_only_by_its_options() -> None:
    src = SRC / "cli"
    long = long_functions(src)
    texts = {path.relative_to(src).as_posix(): path.read_text(encoding="utf-8") for path in src.rglob("*.py")}
    unexplained = []
    for key in long:
        file, name = key.split(":")
        tree = ast.parse(texts[file])
        node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
        body = "\n".join(texts[file].splitlines()[node.lineno - 1 : node.end_lineno])
        options = body.count("typer.Option(") + body.count("Option = ") + body.count("Option =")
        if "option declarations" not in body or options < 8:
            unexplained.append(key)
    assert not unexplained, f"long commands without the reason or without their options: {unexplained}"


def test_a_long_function_is_found(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    (tmp_path / "a.py").write_text(f"def long():\n{body}\n\ndef short():\n    return 1\n")
    method = "".join(f"        x{i} = {i}\n" for i in range(LIMIT))
    (tmp_path / "b.py").write_text(f"class C:\n    def method(self):\n{method}")
    assert long_functions(tmp_path) == {"a.py:long": LIMIT + 1, "b.py:method": LIMIT + 1}
