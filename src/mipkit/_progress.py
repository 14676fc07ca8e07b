"""The one progress protocol of the library: ``progress(stage, done, total)``.

Library functions draw nothing; anything that can run for more than a few seconds takes
``progress: Progress | None = None`` and calls it with the name of its stage (``"model fits"``,
``"DP-SGD steps"``, ...), the units done so far and the units in all: ``0 <= done <= total``, ``done``
never falls within a stage, and the last call of a stage has ``done == total``. A stage that is not counted
(a step of a workflow) is announced by one call with ``done == total == 0`` (:func:`announce`). The command
line passes a Rich bar (:class:`mipkit.cli._progress.ProgressBar`), which starts a new bar when the stage
changes and prints an uncounted stage as a line.

Two helpers count for a function that does its work in pieces: :class:`Tally` (``tally.add(n)`` after
``n`` more units) and :class:`Pooled` (one stage made of several runs of a function that reports its own
stage, such as the neighbour searches of one metric).
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["Pooled", "Progress", "Tally", "announce", "report"]


class Progress(Protocol):
    """``progress(stage, done, total)``: ``done`` of ``total`` units of ``stage`` are finished."""

    def __call__(self, stage: str, done: int, total: int) -> None: ...


def report(progress: Progress | None, stage: str, done: int, total: int) -> None:
    """Call ``progress(stage, done, total)`` unless ``progress`` is None."""
    if progress is not None:
        progress(stage, done, total)


def announce(progress: Progress | None, stage: str) -> None:
    """Announce an uncounted stage: ``progress(stage, 0, 0)`` unless ``progress`` is None."""
    report(progress, stage, 0, 0)


class Tally:
    """A running count of the ``total`` units of ``stage``, reported to ``progress`` (``0`` at once).

    ``add(n)`` reports ``n`` more units done, never past ``total`` (from any thread); with
    ``progress=None``, or nothing to count (``total == 0``), it reports nothing.
    """

    def __init__(self, progress: Progress | None, stage: str, total: int) -> None:
        self.progress, self.stage, self.total, self.done = progress, stage, max(int(total), 0), 0
        self._lock = threading.Lock()  # the searches add from their threads
        if self.total:
            report(progress, stage, 0, self.total)

    def add(self, n: int = 1) -> None:
        """``n`` more units are finished."""
        if self.progress is None or not self.total:
            return
        with self._lock:
            self.done = min(self.done + int(n), self.total)
            report(self.progress, self.stage, self.done, self.total)

    def finish(self) -> None:
        """Every unit is finished (a run that needed fewer units than its bound); reported once."""
        if self.done < self.total:
            self.add(self.total - self.done)


class Pooled:
    """A :class:`Progress` that adds up the runs of an inner function into one stage of ``total`` units.

    Each run of the inner function reports its own ``(stage, done, total)`` from 0 up; a ``done`` below
    the last one starts a new run. The units of every run go to ``progress(stage, done, total)``.
    """

    def __init__(self, progress: Progress | None, stage: str, total: int) -> None:
        self.tally, self._last = Tally(progress, stage, total), 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        step = done - self._last if done >= self._last else done
        self._last = done
        if step:
            self.tally.add(step)

    def finish(self) -> None:
        """Every unit of the pooled stage is finished."""
        self.tally.finish()
