"""One lazy-export helper: packages that load their modules on first use do it through
``mipkit._lazy.lazy_exports``, not with a ``__getattr__`` written by hand.

A hand-written ``__getattr__`` repeats the lookup, its error message and ``__dir__`` (or forgets one of
them); the helper writes them once. The lower layers (every package below ``workflows`` and ``cli``) hold no
``def __getattr__`` of their own.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
UPPER = ("workflows", "cli")
LAZY_PACKAGES = ("mipkit.accounting", "mipkit.attacks", "mipkit.synthesizers")


def hand_written_getattr(src: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """The modules under ``src`` that define ``__getattr__`` at module level (``skip``: top folders)."""
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] in skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
            found.append(rel.as_posix())
    return found


def test_no_lower_layer_module_writes_its_own_getattr() -> None:
    assert not hand_written_getattr(SRC, skip=UPPER)


def test_a_hand_written_getattr_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def __getattr__(name):\n    raise AttributeError(name)\n")
    (tmp_path / "b.py").write_text("_L, __getattr__, __dir__ = lazy_exports(__name__, {}, globals())\n")
    assert hand_written_getattr(tmp_path) == ["a.py"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_export_resolves_and_is_listed(package: str) -> None:
    mod = importlib.import_module(package)
    for name in mod.__all__:
        assert getattr(mod, name) is not None
        assert name in dir(mod)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_importing_synthesize_loads_none_of_its_modules() -> None:
    code = (
        "import sys, mipkit.synthesizers as s\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mipkit.synthesizers.'))\n"
        "assert not loaded, loaded\n"
        "assert 'torch' not in sys.modules\n"
        "assert s.DPWGANGP.__module__ == 'mipkit.synthesizers.dpwgan'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
