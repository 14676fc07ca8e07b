"""Reports: the versioned ``results.json`` and a self-contained ``report.html``.

A command that writes a run folder also registers how to rebuild its report from the folder, so
``mipkit report RUN_DIR`` can re-render any kind of run: ``REPORT_BUILDERS[kind]`` names a function
``build(run_dir) -> (title, summary, sections)`` as ``"module:function"``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from mipkit._validation import MipkitValueError
from mipkit.report.html import Figure, Section, figure_to_png, render_html, write_html_report
from mipkit.report.results import SCHEMA_VERSION, read_results, write_json_atomic, write_results

REPORT_BUILDERS: dict[str, str] = {
    "audit": "mipkit.report.audit_report:build",
    "audit-synthetic": "mipkit.report.synthetic_report:build",
    "audit-fitted": "mipkit.report.fitted_report:build",
    "demo": "mipkit.report.audit_report:build_demo",
}


def rebuild_report(run_dir: str | Path) -> Path:
    """Re-render ``run_dir/report.html`` from the files in the run folder."""
    kind = read_results(run_dir)["kind"]
    if kind not in REPORT_BUILDERS:
        raise MipkitValueError(f"No report builder for runs of kind {kind!r}.")
    module, func = REPORT_BUILDERS[kind].split(":")
    title, summary, sections = getattr(importlib.import_module(module), func)(Path(run_dir))
    return write_html_report(run_dir, title=title, summary=summary, sections=sections)


__all__ = [
    "REPORT_BUILDERS",
    "SCHEMA_VERSION",
    "Figure",
    "Section",
    "figure_to_png",
    "read_results",
    "rebuild_report",
    "render_html",
    "write_html_report",
    "write_json_atomic",
    "write_results",
]
