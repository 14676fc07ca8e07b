"""The one progress protocol of the library: ``progress(stage, done, total)``.

Library functions draw nothing; anything that can run for more than a few seconds takes
``progress: Progress | None = None`` and calls it with the name of its stage (``"reference fits"``,
``"DP-SGD steps"``, ...), the units done so far and the units in all. The command line passes a Rich bar
(:class:`mipkit.cli._progress.FitProgress`), which starts a new bar when the stage changes.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress", "report"]


class Progress(Protocol):
    """``progress(stage, done, total)``: ``done`` of ``total`` units of ``stage`` are finished."""

    def __call__(self, stage: str, done: int, total: int) -> None: ...


def report(progress: Progress | None, stage: str, done: int, total: int) -> None:
    """Call ``progress(stage, done, total)`` unless ``progress`` is None."""
    if progress is not None:
        progress(stage, done, total)
