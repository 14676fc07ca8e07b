"""DP-SGD's schedule on the command line, in either of its two forms.

``--sample-rate Q --steps T`` (the accountant's terms) or ``--batch-size B --epochs E --n-records N``
(Opacus's terms, what a user of DP-SGD knows): :func:`dpsgd_sampling` turns the second into the first with
:func:`mipkit.accounting.mechanisms.dpsgd_schedule`, the formulas :class:`mipkit.trainers.DPSGDClassifier`
trains and accounts with. ``mipkit risk`` and ``mipkit calibrate`` take both forms.
"""

from __future__ import annotations

from typing import Annotated

from typer import Option

__all__ = ["BatchSizeOption", "EpochsOption", "NRecordsOption", "SCHEDULE_HELP", "dpsgd_sampling"]

BatchSizeOption = Annotated[
    int | None,
    Option("--batch-size", help="DP-SGD expected batch size (with --epochs and --n-records)."),
]
EpochsOption = Annotated[int | None, Option("--epochs", help="DP-SGD passes over the data.")]
NRecordsOption = Annotated[int | None, Option("--n-records", help="DP-SGD training records.")]

SCHEDULE_HELP = "--sample-rate and --steps, or --batch-size, --epochs and --n-records"
_OPACUS = ("--batch-size", "--epochs", "--n-records")


def dpsgd_sampling(
    sample_rate: float | None,
    steps: int | None,
    batch_size: int | None,
    epochs: int | None,
    n_records: int | None,
    *,
    owner: str,
) -> tuple[float | None, int | None, dict | None]:
    """``(sample_rate, steps, schedule)`` of the flags of either form.

    Without any of ``--batch-size --epochs --n-records`` the first two come back as given (the caller
    checks them) and ``schedule`` is None; with all three, ``q = batch_size / n_records`` and ``T = epochs
    * ceil(n_records / batch_size)`` and ``schedule`` holds the three. Both forms at once, a part of the
    second, a count below 1, a batch larger than the records or more steps than the accountant takes are
    refused with one line.
    """
    from mipkit._validation import MipkitValueError
    from mipkit.accounting.mechanisms import dpsgd_schedule
    from mipkit.cli.limits import check_count

    opacus = dict(zip(_OPACUS, (batch_size, epochs, n_records), strict=True))
    if all(v is None for v in opacus.values()):
        return sample_rate, steps, None
    if sample_rate is not None or steps is not None:
        raise MipkitValueError(f"Give the DP-SGD schedule as {SCHEDULE_HELP}, not both.")
    missing = [flag for flag, v in opacus.items() if v is None]
    if missing:
        raise MipkitValueError(
            f"--batch-size, --epochs and --n-records go together; missing {', '.join(missing)}."
        )
    check_count("--batch-size", batch_size, kind="rows")
    check_count("--epochs", epochs, kind="steps")
    check_count("--n-records", n_records, kind="rows")
    q, t = dpsgd_schedule(batch_size, epochs, n_records, owner=owner)
    check_count("--epochs x ceil(--n-records / --batch-size) (the steps)", t, kind="steps")
    return q, t, {"batch_size": batch_size, "epochs": epochs, "n_records": n_records}
