"""A table as the command line prints it: a title, named columns, rows of text, and the lines under it.

A verb's result builds its tables with their wording (:class:`TextTable`); the command line only draws them
(:mod:`mipkit.cli._tables`), so that every word a command prints comes from the result.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TextTable"]


@dataclass(frozen=True)
class TextTable:
    """A table of text for the terminal.

    Attributes
    ----------
    title : str
        Printed above the table.
    columns : tuple of str
        The column names.
    rows : tuple of tuple of str
        The cells, one tuple per row, as printed.
    notes : tuple of str
        Lines printed under the table.
    align : str
        One letter per column: ``"l"`` (left) or ``"r"`` (right).
    bold_first : bool
        Print the first column in bold.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    align: str = ""
    bold_first: bool = True

    def justify(self, i: int) -> str:
        """``"left"`` or ``"right"`` for column ``i`` (left unless ``align`` says ``"r"``)."""
        return "right" if i < len(self.align) and self.align[i] == "r" else "left"
