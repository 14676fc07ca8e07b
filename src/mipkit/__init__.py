"""mipkit: membership-inference and re-identification risk for releases built from personal records.

Three parts, one direction of data flow (see ``docs`` and the README):

* ``mipkit.accounting`` (certify): privacy guarantees as trade-off curves, turned into operational risk,
  and noise calibrated to a risk target;
* ``mipkit.mechanisms`` (protect): mechanisms that reach a risk target;
* ``mipkit.game``, ``mipkit.attacks``, ``mipkit.metrics``, ``mipkit.report`` (audit): what attackers
  achieve empirically, with confidence intervals.

``import mipkit`` is light (it imports neither numpy nor any subpackage), so that the command line starts
fast; :class:`MipkitValueError` is loaded on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["MipkitValueError", "__version__", "audit_fitted", "audit_predictions"]

_WORKFLOWS = {
    "audit_fitted": "mipkit.workflows.audit_fitted",
    "audit_predictions": "mipkit.workflows.audit_scores",
}

if TYPE_CHECKING:  # pragma: no cover
    from mipkit._validation import MipkitValueError


def __getattr__(name: str) -> Any:
    if name == "MipkitValueError":
        from mipkit._validation import MipkitValueError

        return MipkitValueError
    if name in _WORKFLOWS:  # the audit of one fitted model, imported on first access
        import importlib  # by name: the root package sits above no layer (report imports __version__)

        return getattr(importlib.import_module(_WORKFLOWS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
