"""The utility section of a synthetic table (``quality`` block of ``mipkit synthesize`` and ``mipkit
audit-synthetic --quality-target``): plain sentences, a terminal table's rows and ``quality.html``.

Functions take the dict of :func:`mipkit.synthesizers.quality_report.quality_report` and return text or write
the page; they compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit.report.html import Section, render_html

__all__ = ["QUALITY_FILE", "quality_rows", "quality_section", "quality_sentences", "write_quality_page"]

QUALITY_FILE = "quality.html"


def _worst(block: Mapping[str, Mapping[str, Any]]) -> tuple[str, float] | None:
    if not block:
        return None
    name = max(block, key=lambda k: block[k]["distance"])
    return name, float(block[name]["distance"])


def quality_sentences(q: Mapping[str, Any]) -> list[str]:
    """What the utility report says, in words: shapes, trends, the train-on-synthetic score, the premise."""
    out = [
        f"Column shapes: the synthetic columns differ from the real ones by {q['column_shapes']:.3f} on "
        "average (Kolmogorov-Smirnov for numbers, total variation for categories; 0 = the same distribution)"
        + (f"; furthest: {w[0]} ({w[1]:.3f})" if (w := _worst(q.get("columns") or {})) else "")
        + ".",
        f"Pair trends: the relations between pairs of columns differ by {q['pair_trends']:.3f} on average "
        "(half the correlation difference, or the contingency tables' total variation)"
        + (f"; furthest: {w[0]} ({w[1]:.3f})" if (w := _worst(q.get("pairs") or {})) else "")
        + ".",
    ]
    t = q.get("train_synthetic_test_real")
    if t:
        out.append(
            f"Train on synthetic, test on real: a model trained on the synthetic table predicts "
            f"{t['target']} = {t['positive']} on real records with AUC {_auc(t['tstr_auc'])} (1 = perfect, "
            f"0.5 = guessing); the same model trained on real records, the reference, reaches "
            f"{_auc(t['trtr_auc'])}; tested on {t['test_rows']} records, {t['tested_on']}."
        )
    out.append(f"These figures are {q['note']}.")
    return out


def quality_rows(q: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(measure, value)`` rows for a terminal table."""
    rows = [
        ("column shapes (mean distance)", f"{q['column_shapes']:.3f}"),
        ("pair trends (mean distance)", f"{q['pair_trends']:.3f}"),
    ]
    t = q.get("train_synthetic_test_real")
    if t:
        rows.append((f"AUC on real records, model trained on synthetic ({t['target']})", _auc(t["tstr_auc"])))
        rows.append((f"AUC on real records, model trained on real ({t['target']}; reference)",
                     _auc(t["trtr_auc"])))  # fmt: skip
    return rows


def _auc(value: float | None) -> str:
    """An AUC, or why there is none (a synthetic target with one class trains no model)."""
    return "not measurable (one class)" if value is None else f"{value:.3f}"


def quality_section(q: Mapping[str, Any]) -> Section:
    """The report section: the sentences, then a table per column and the ten furthest pairs."""
    cols = pd.DataFrame(
        [(c, v["measure"], v["distance"]) for c, v in (q.get("columns") or {}).items()],
        columns=["column", "measure", "distance"],
    )
    pairs = pd.DataFrame(
        [(p, v["measure"], v["distance"]) for p, v in (q.get("pairs") or {}).items()],
        columns=["pair", "measure", "distance"],
    )
    pairs = pairs.sort_values("distance", ascending=False).head(10)
    return Section("Utility of the synthetic data", quality_sentences(q), [cols, pairs])


def write_quality_page(run_dir: str | Path, q: Mapping[str, Any]) -> Path:
    """Write ``run_dir/quality.html`` (the section on its own page) and return its path."""
    from mipkit._runfolder import atomic_write

    path = Path(run_dir) / QUALITY_FILE
    html = render_html(title="Synthetic data utility", summary=quality_sentences(q)[:1],
                       sections=[quality_section(q)])  # fmt: skip
    return atomic_write(path, html)
