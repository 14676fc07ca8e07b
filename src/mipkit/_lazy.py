"""Lazy package exports: names that load their module on first use (PEP 562).

A package lists ``{module: "name name ..."}``; importing the package loads none of those modules, and
``package.name`` imports ``package.module`` when first asked for. Used where a submodule pulls in something
slow to import (scipy.stats, dp_accounting, matplotlib) that a command line often does not need.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, modules: dict[str, str], namespace: dict[str, Any]
) -> tuple[dict[str, str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(lazy, __getattr__, __dir__)`` for ``package``: ``lazy`` maps each exported name to its module.

    Parameters
    ----------
    package : str
        The package's dotted name (``__name__``).
    modules : dict
        Submodule (relative name) -> its exported names, space-separated.
    namespace : dict
        The package's ``globals()`` (for ``__dir__``).
    """
    lazy = {name: f"{package}.{module}" for module, names in modules.items() for name in names.split()}

    def getattr_(name: str) -> Any:
        if name in lazy:
            return getattr(importlib.import_module(lazy[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return lazy, getattr_, dir_
