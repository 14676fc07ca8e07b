"""``mipkit domain --data T.csv --out domain.json [--drop COL ...]``: a domain template for ``--domain``.

The template holds the table's schema only, never a value of its rows: each column's name and whether it is
numeric (``"min": null, "max": null``) or categorical (``"categories": []``), with ``integer`` and
``missing`` false (:func:`mipkit.data.domain.domain_template`); an id-like column
(:func:`mipkit.synthesizers.tablecheck.find_identifiers`) is marked ``{"type": "identifier"}``. The user
fills in ranges and levels from public knowledge; ``train-private``, ``protect``, ``audit-noise`` and
``synthesize`` then take the file with ``--domain`` and encode from it alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mipkit.cli.options import DataOption

TemplateDropOption = Annotated[
    list[str] | None, typer.Option("--drop", help="Column to leave out (repeatable, or comma-separated).")
]


def register(app: typer.Typer) -> None:
    @app.command("domain")
    def domain_command(
        data: DataOption = ...,
        out: Path = typer.Option(..., "--out", help="The template to write (a .json file)."),
        drop: TemplateDropOption = None,
    ) -> None:
        """Write a domain template for --domain from a table's schema only; you fill in its public values."""
        import json

        from mipkit._runfolder import atomic_write
        from mipkit.cli.options import check_out_file
        from mipkit.data.domain import domain_template
        from mipkit.data.io import check_columns, read_table

        path = check_out_file(out, suffixes=(".json",))
        names = tuple(c.strip() for item in (drop or ()) for c in item.split(",") if c.strip())
        from mipkit.synthesizers.tablecheck import find_identifiers

        table = read_table(data)
        check_columns(table, list(names))
        ids = [c for c in find_identifiers(table) if c not in names]
        template = domain_template(table, drop=names, identifiers=ids)
        if not template:
            from mipkit._validation import MipkitValueError

            raise MipkitValueError("--drop leaves no column for the domain.")
        atomic_write(path, json.dumps(template, indent=2) + "\n")
        numeric = sum(spec["type"] == "numeric" for spec in template.values())
        marked = (
            f" {', '.join(ids)} look(s) like an identifier (an id-like name, or nearly every value "
            "distinct): "
            'marked "identifier", never a feature nor released (name the record ids with --id-column '
            f"{ids[0]}); if one is an ordinary column, write its entry like the others."
            if ids
            else ""
        )
        typer.echo(
            f"Wrote {path}: {len(template)} columns ({numeric} numeric, "
            f"{len(template) - numeric - len(ids)} categorical, {len(ids)} identifier).{marked} "
            'Fill in each numeric "min"/"max" and categorical "categories" (and "integer", '
            '"missing") from public knowledge only - a code book, a standard - never read off the private '
            "rows; then pass it with --domain."
        )
