"""What the command line shows while the library works: Rich progress bars and stage lines on stderr.

The library draws nothing; it reports through callbacks (``progress(done, total)`` for the fits of
:func:`mipkit.engine.run_fits`, ``say(text)`` for the stages of a workflow). This module turns those
callbacks into Rich output on stderr, so that ``--json`` output on stdout stays clean. Rich is imported
only when something is drawn.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FitProgress", "fits_label"]


def fits_label(backend: str = "local", n_jobs: int = -1, address: str | None = None) -> str:
    """The bar's label for a run of fits: ``"fits (local, 2 workers)"``, ``"fits (ray @ auto)"``, ..."""
    if backend == "ray" and address is not None:
        return f"fits (ray @ {address})"
    from mipkit.engine.runner import resolve_n_jobs

    n = resolve_n_jobs(n_jobs)
    unit = "CPU" if backend == "ray" else "worker"
    return f"fits ({backend}, {n} {unit}{'s' if n > 1 else ''})"


class FitProgress:
    """A Rich progress bar on stderr driven by ``progress(done, total)`` calls; also prints stage lines.

    The bar appears at the first call (so a run whose fits were all resumed from the ledger shows none) and
    stays on screen when the stage ends. :meth:`say` ends the current bar and prints ``"> text"``; the next
    call of the object starts a new bar. Disabled (``enabled=False``), it prints nothing.

    Parameters
    ----------
    label : str
        Text before the bar, e.g. :func:`fits_label`.
    enabled : bool
        False for ``--quiet`` / ``--json``.

    Examples
    --------
    >>> with FitProgress("fits", enabled=False) as bar:
    ...     bar(0, 2); bar(2, 2)
    """

    def __init__(self, label: str = "fits", *, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None
        self._console: Any = None

    def _stderr(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
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
            self._task = self._bar.add_task(self.label, total=total, completed=done)
            self._bar.start()
        else:
            self._bar.update(self._task, total=total, completed=done)

    def stage(self, description: str, total: int) -> Any:
        """End the current bar and start one for a stage of ``total`` units; returns ``advance(n)``.

        The shape of a workflow that reports stages as ``progress(description, total)`` factories (e.g.
        :func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`): each stage gets the same bar, with its
        elapsed time and ETA.
        """
        self.close()
        self.label = description
        total = max(int(total), 1)
        done = [0]
        self(0, total)

        def advance(n: int = 1) -> None:
            done[0] = min(done[0] + int(n), total)
            self(done[0], total)

        return advance

    def say(self, text: str) -> None:
        """End the current bar and print ``> text`` (a workflow stage) on stderr."""
        self.close()
        if self.enabled:
            from rich.markup import escape

            self._stderr().print(f"[bold]>[/bold] {escape(text)}")

    def close(self) -> None:
        """Stop the current bar, leaving its last state on screen (idempotent)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None

    def __enter__(self) -> FitProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
