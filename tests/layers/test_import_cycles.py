"""No import cycles: the modules of every package form a DAG (read from the source, imports inside functions
included, so a deferred import does not hide a cycle).

A package's ``__init__`` is left out: it imports its own modules by design, and a module that imports a name
from its package (``from mipkit.accounting import mechanisms``) gets an edge to that module when it is one.
``lint-imports`` keeps the lower layers' packages acyclic too (``acyclic_siblings`` in pyproject.toml).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules(src: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package ``__init__``) for every module under ``src``."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _imported(node: ast.AST, package: str) -> list[str]:
    """The dotted names an import statement may load (``from a import b`` may load ``a`` or ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports anywhere in its source (package ``__init__`` files left out)."""
    modules = _modules(src)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        if is_package:
            continue
        package = name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = {t for node in ast.walk(tree) for t in _imported(node, package)}
        graph[name] = {t for t in targets if t in modules and not modules[t][1] and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_among_the_modules() -> None:
    graph = import_graph(SRC)
    assert "mipkit.accounting.curves" in graph  # the package was found
    assert not cycles(graph), f"modules that import each other: {cycles(graph)}"


def test_a_deferred_import_that_closes_a_cycle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg import a\n")
    (pkg / "a.py").write_text("from pkg.b import g\n")
    (pkg / "b.py").write_text("def g():\n    from . import a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    assert cycles(import_graph(tmp_path)) == [["pkg.a", "pkg.b"]]
