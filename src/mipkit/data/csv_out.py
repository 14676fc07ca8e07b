"""Writing CSV files that are safe to open in a spreadsheet (no formula injection).

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or carriage
return) as a formula: ``=HYPERLINK("http://x", "click")`` in a released table becomes a link or a command
when a privacy officer opens the CSV. Every CSV file mipkit writes goes through :func:`to_safe_csv`, which
applies the OWASP CSV-injection rule: a text cell (and a column name) starting with one of those characters
gets a leading ``'``, which spreadsheets show as text. Numbers are never touched: numeric columns, number
cells of a text column, and text that is a plain number (``"-3.5"``), which a spreadsheet reads as that
number. ``raw=True`` (``--raw-csv`` on the command line) writes the cells as they are. mipkit reads its own
neutralised cells back as they were (:func:`restore_cell`, applied by :func:`mipkit.data.io.read_table` to the
text cells and column names of a CSV file), so ``mipkit audit-synthetic`` compares a released
``synthetic.csv`` with the original table cell for cell.
"""

from __future__ import annotations

import re

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "neutralise_cell", "neutralise_formulas", "restore_cell", "to_safe_csv"]

#: First characters that make a spreadsheet read a cell as a formula (OWASP).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise_cell(value: object) -> object:
    """``value`` with a leading ``'`` when it is text that a spreadsheet would run as a formula.

    Examples
    --------
    >>> neutralise_cell('=HYPERLINK("http://x")'), neutralise_cell("-3.5"), neutralise_cell(-3.5)
    ('\\'=HYPERLINK("http://x")', '-3.5', -3.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def restore_cell(value: object) -> object:
    """The inverse of :func:`neutralise_cell`: ``'=x`` read back as ``=x`` (other values unchanged).

    Examples
    --------
    >>> restore_cell("'=HYPERLINK(1)"), restore_cell("'-3.5"), restore_cell("'quoted")
    ('=HYPERLINK(1)', "'-3.5", "'quoted")
    """
    if isinstance(value, str) and value.startswith("'"):
        rest = value[1:]
        if rest.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(rest):
            return rest
    return value


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are neutralised (:func:`neutralise_cell`);
    numeric columns are kept as they are."""
    out = frame.copy()
    for i in range(out.shape[1]):
        series = out.iloc[:, i]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        out.isetitem(i, series.map(neutralise_cell, na_action="ignore"))
    out.columns = [neutralise_cell(c) for c in out.columns]
    return out


def to_safe_csv(frame: pd.DataFrame, *, raw: bool = False, index: bool = False) -> str:
    """``frame`` as CSV text with formula cells neutralised (:func:`neutralise_formulas`), or as it is with
    ``raw``; what every CSV writer of mipkit calls."""
    return (frame if raw else neutralise_formulas(frame)).to_csv(index=index)
