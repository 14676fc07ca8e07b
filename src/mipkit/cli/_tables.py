"""Draw the tables of a verb's result (:class:`mipkit.workflows._text_table.TextTable`) with Rich."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["print_answer", "print_tables"]


def print_answer(result: Any, json_output: bool) -> None:
    """A verb's answer: ``to_dict()`` as one JSON object, or the summary paragraph then the tables."""
    if json_output:
        import json

        import typer

        typer.echo(json.dumps(result.to_dict(), allow_nan=False))
        return
    from rich.console import Console

    console = Console()
    console.print(result.summary(), highlight=False)
    console.print()
    print_tables(result.tables(), console)


def print_tables(tables: Iterable[Any], console: Any = None) -> None:
    """Print each table, then its notes, on ``console`` (default: a new :class:`rich.console.Console`)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console() if console is None else console
    for text in tables:
        table = Table(title=text.title, title_justify="left")
        for i, name in enumerate(text.columns):
            style = "bold" if i == 0 and text.bold_first else None
            table.add_column(name, justify=text.justify(i), style=style)
        for row in text.rows:
            table.add_row(*row)
        console.print(table)
        for note in text.notes:
            console.print(escape(note), highlight=False)
