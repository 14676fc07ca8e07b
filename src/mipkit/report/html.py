"""A self-contained HTML report: plain-language summary, tables and figures embedded as PNG data URIs."""

from __future__ import annotations

import base64
import contextlib
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from mipkit import __version__
from mipkit._runfolder import atomic_write

REPORT_FILE = "report.html"


@dataclass(frozen=True)
class Figure:
    """A figure already rendered to PNG bytes, with a caption."""

    title: str
    png: bytes
    caption: str = ""

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


@dataclass(frozen=True)
class Section:
    """One part of the report: a heading, paragraphs, tables and figures."""

    title: str
    text: list[str] = field(default_factory=list)
    tables: list[pd.DataFrame] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


def figure_to_png(fig, *, dpi: int = 110) -> bytes:
    """Render a Matplotlib figure to PNG bytes and close it.

    Laid out by Matplotlib's constrained layout (unless the figure has a layout engine already): one drawing
    pass, where ``bbox_inches="tight"`` draws the figure twice.
    """
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def plain_log_ticks(axis) -> None:
    """Label a log-scaled axis ``0.001, 0.01, 0.1, 1`` (no minor labels): plainer to read than ``10^-3``, and
    drawn without Matplotlib's mathtext parser (a noticeable share of a one-figure report's time)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def preload_plotting() -> threading.Thread:
    """Import Matplotlib (Agg backend) on a background thread and return the thread.

    A command that will draw a report calls this before its computation: the import (about a second) then
    runs while the computation's NumPy threads hold little of the GIL, instead of after it. An import that
    fails here fails again, with its message, where the report imports Matplotlib.
    """

    def load() -> None:
        with contextlib.suppress(Exception):
            import matplotlib

            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot

    thread = threading.Thread(target=load, name="mipkit-preload-plotting", daemon=True)
    thread.start()
    return thread


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("mipkit.report", "templates"),
        autoescape=select_autoescape(["html"]),
    )


def render_html(*, title: str, summary: list[str], sections: list[Section]) -> str:
    """Render the report to an HTML string (no external resources)."""
    rendered = [
        (
            s,
            [
                t.to_html(index=False, float_format=lambda x: f"{x:.4g}", border=0, classes="tbl")
                for t in s.tables
            ],
        )
        for s in sections
    ]
    return (
        _env()
        .get_template("report.html")
        .render(title=title, summary=summary, sections=rendered, version=__version__)
    )


def write_html_report(
    run_dir: str | Path, *, title: str, summary: list[str], sections: list[Section]
) -> Path:
    """Write ``run_dir/report.html`` and return its path."""
    path = Path(run_dir) / REPORT_FILE
    return atomic_write(path, render_html(title=title, summary=summary, sections=sections))
