"""Optional dependencies of the synthesizers, imported on first use; a one-line message names the extra."""

from __future__ import annotations

import importlib
from typing import Any

from mipkit._validation import MipkitValueError

__all__ = ["require", "require_torch"]


def require(module: str, *, extra: str, what: str) -> Any:
    """Import ``module`` or raise a one-line :class:`~mipkit.MipkitValueError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MipkitValueError(
            f"{what} needs the '{extra}' extra ({module} is not installed): pip install 'mipkit[{extra}]'"
        ) from None


def require_torch() -> Any:
    """``torch``, or a one-line message naming the 'torch' extra."""
    return require("torch", extra="torch", what="DP-WGAN-GP")
