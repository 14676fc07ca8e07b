"""DP-SGD's schedule on the command line in Opacus's terms: ``--batch-size B --epochs E --n-records N``.

Beside ``--sample-rate Q --steps T`` (the accountant's terms), what a user of DP-SGD knows; ``mipkit risk``
and ``mipkit calibrate`` take both forms and pass them to their verb, which turns the second into the first
(:func:`mipkit.workflows._dpsgd.sample_rate_and_steps`).
"""

from __future__ import annotations

from typing import Annotated

from typer import Option

__all__ = ["BatchSizeOption", "EpochsOption", "NRecordsOption"]

BatchSizeOption = Annotated[
    int | None,
    Option("--batch-size", help="DP-SGD expected batch size (with --epochs and --n-records)."),
]
EpochsOption = Annotated[int | None, Option("--epochs", help="DP-SGD passes over the data.")]
NRecordsOption = Annotated[int | None, Option("--n-records", help="DP-SGD training records.")]
