"""What the command line shows while the library works: one Rich progress bar on stderr.

The library draws nothing; it reports ``progress(stage, done, total)`` (:mod:`mipkit._progress`).
:class:`ProgressBar` implements that protocol: a bar per stage, with its elapsed time and ETA, on stderr so
that ``--json`` output on stdout stays clean. Rich is imported only when something is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ProgressBar", "fits_label"]


def fits_label(backend: str = "local", n_jobs: int = -1, address: str | None = None) -> str:
    """The bar's label for a run of fits: ``"fits (local, 2 workers)"``, ``"fits (ray @ auto)"``, ..."""
    if backend == "ray" and address is not None:
        return f"fits (ray @ {address})"
    from mipkit.engine.runner import resolve_n_jobs

    n = resolve_n_jobs(n_jobs)
    unit = "CPU" if backend == "ray" else "worker"
    return f"fits ({backend}, {n} {unit}{'s' if n > 1 else ''})"


class ProgressBar:
    """A :class:`mipkit._progress.Progress` drawn with Rich on stderr.

    ``bar(stage, done, total)`` starts a new bar when the stage changes (or a stage starts again from a
    lower ``done``), with elapsed time and ETA, and leaves the finished one on screen; an uncounted stage
    (``total == 0``) is printed as a line ``> stage``. A stage whose work was all done before (fits read back
    from a ledger) shows no bar. Disabled (``enabled=False``, for ``--quiet`` / ``--json``), it prints
    nothing.

    Parameters
    ----------
    enabled : bool
        False for ``--quiet`` / ``--json``.
    labels : mapping, optional
        The text shown for a stage in place of its name, e.g. ``{"model fits": fits_label()}``.

    Examples
    --------
    >>> with ProgressBar(enabled=False) as bar:
    ...     bar("model fits", 0, 2); bar("model fits", 2, 2)
    """

    def __init__(self, *, enabled: bool = True, labels: Mapping[str, str] | None = None) -> None:
        self.enabled = enabled
        self.labels = dict(labels or {})
        self._stage: str | None = None
        self._done = 0
        self._bar: Any = None
        self._task: Any = None
        self._console: Any = None

    def _stderr(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self._stage or done < self._done or self._bar is None:
            self.close()
            self._stage, self._done = stage, done
            if total <= 0:
                from rich.markup import escape

                self._stderr().print(f"[bold]>[/bold] {escape(self.labels.get(stage, stage))}")
                return
            self._start(stage, done, total)
        else:
            self._done = done
            self._bar.update(self._task, total=total, completed=done)

    def _start(self, stage: str, done: int, total: int) -> None:
        from rich.markup import escape
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self._stderr(),
        )
        self._task = self._bar.add_task(escape(self.labels.get(stage, stage)), total=total, completed=done)
        self._bar.start()

    def close(self) -> None:
        """Stop the current bar, leaving its last state on screen (idempotent)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
