"""The default false-positive rates and base rates are written once, in ``mipkit._defaults``.

A literal copy of ``(0.001, 0.01, 0.1)`` in one module drifts from the others the day one of them changes,
and a measured TPR is then reported at other rates than the certified bound beside it. The lower layers
(every package below ``workflows`` and ``cli``) import the two tuples instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mipkit.accounting.profile
import mipkit.metrics.roc
from mipkit import _defaults

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
UPPER = ("workflows", "cli")
NUMERIC = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Tuple, ast.Load)


def _value(node: ast.Tuple) -> tuple | None:
    """The tuple a literal of numbers and arithmetic on them evaluates to (None for anything else)."""
    if not all(isinstance(n, NUMERIC) for n in ast.walk(node)):
        return None
    return eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}})


def literal_copies(src: Path, values: tuple[tuple, ...], skip: tuple[str, ...] = ()) -> list[str]:
    """``"file:line"`` of each tuple literal equal to one of ``values`` (``skip``: top folders left out)."""
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] in skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple) and _value(node) in values:
                found.append(f"{rel.as_posix()}:{node.lineno}")
    return found


def test_the_default_rates_are_written_once_in_the_lower_layers() -> None:
    values = (_defaults.DEFAULT_FPRS, _defaults.DEFAULT_BASE_RATES)
    assert literal_copies(SRC, values, skip=UPPER) == ["_defaults.py:13", "_defaults.py:15"]


def test_metrics_and_accounting_share_the_one_tuple() -> None:
    assert mipkit.metrics.roc.DEFAULT_FPRS is _defaults.DEFAULT_FPRS
    assert mipkit.metrics.roc.DEFAULT_BASE_RATES is _defaults.DEFAULT_BASE_RATES
    defaults = mipkit.accounting.profile.risk_profile.__kwdefaults__
    assert defaults["fprs"] is _defaults.DEFAULT_FPRS
    assert defaults["base_rates"] is _defaults.DEFAULT_BASE_RATES


def test_a_copy_written_with_other_spelling_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("RATES = (1 / 2, 1 / 11, 1 / 101, 1 / 1001)\nX = (0.001, 0.01)\n")
    assert literal_copies(tmp_path, (_defaults.DEFAULT_BASE_RATES,)) == ["a.py:1"]
