"""One progress protocol across the library: every ``progress`` parameter is a
:class:`mipkit._progress.Progress` (``progress(stage, done, total)``), and no module defines a callable
type of its own for progress (``Callable[[int], None]``, ``Callable[[int, int], None]``, a factory)."""

from __future__ import annotations

import ast
from pathlib import Path

import mipkit

SRC = Path(mipkit.__file__).parent
#: ``advance(n)`` and ``progress(done, total)``; a factory ``(description, total) -> advance`` holds the first
OLD_SHAPES = {"Callable[[int], None]", "Callable[[int, int], None]"}


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_every_progress_parameter_is_the_protocol():
    wrong = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            for arg in args:
                if arg.arg != "progress":
                    continue
                shown = "none" if arg.annotation is None else ast.unparse(arg.annotation)
                if shown not in ("Progress | None", "Progress"):
                    wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}(progress: {shown})")
    assert not wrong, "progress parameters that are not `Progress | None`:\n" + "\n".join(wrong)


def test_no_module_defines_a_progress_callable_of_its_own():
    wrong = []
    for path, tree in _modules():
        if path.name == "_progress.py" and path.parent == SRC:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if any("progress" in n.lower() for n in names):
                    wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {', '.join(names)} =")
            if isinstance(node, ast.Subscript) and ast.unparse(node) in OLD_SHAPES:
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node)}")
    assert not wrong, "progress types besides mipkit._progress.Progress:\n" + "\n".join(wrong)
