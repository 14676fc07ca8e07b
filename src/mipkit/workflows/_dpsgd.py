"""DP-SGD's schedule in either of its two forms, for the verbs that take a DP-SGD mechanism.

``sample_rate`` and ``steps`` (the accountant's terms) or ``batch_size``, ``epochs`` and ``n_records``
(Opacus's terms, what a user of DP-SGD knows): :func:`sample_rate_and_steps` turns the second into the first
with :func:`mipkit.accounting.mechanisms.dpsgd_schedule`, the formulas
:class:`mipkit.trainers.DPSGDClassifier` trains and accounts with.
"""

from __future__ import annotations

from mipkit._validation import MipkitValueError

__all__ = ["OPACUS_TERMS", "SCHEDULE_WORDS", "sample_rate_and_steps"]

#: The schedule in Opacus's terms.
OPACUS_TERMS = ("batch_size", "epochs", "n_records")
#: The two forms, for messages.
SCHEDULE_WORDS = "sample_rate and steps, or batch_size, epochs and n_records"


def sample_rate_and_steps(
    sample_rate: float | None,
    steps: int | None,
    batch_size: int | None,
    epochs: int | None,
    n_records: int | None,
    *,
    owner: str,
) -> tuple[float | None, int | None]:
    """``(sample_rate, steps)`` of a schedule given in either form.

    Without any of ``batch_size``, ``epochs`` and ``n_records`` the first two come back as given (the
    mechanism record checks them); with all three, ``q = batch_size / n_records`` and
    ``T = epochs * ceil(n_records / batch_size)``. Both forms at once, a part of the second, a count below 1
    or a batch larger than the records are refused with one line.
    """
    from mipkit.accounting.mechanisms import dpsgd_schedule

    opacus = dict(zip(OPACUS_TERMS, (batch_size, epochs, n_records), strict=True))
    if all(v is None for v in opacus.values()):
        return sample_rate, steps
    if sample_rate is not None or steps is not None:
        raise MipkitValueError(f"Give the DP-SGD schedule as {SCHEDULE_WORDS}, not both.")
    missing = [name for name, v in opacus.items() if v is None]
    if missing:
        raise MipkitValueError(f"batch_size, epochs and n_records go together; missing {', '.join(missing)}.")
    return dpsgd_schedule(batch_size, epochs, n_records, owner=owner)  # type: ignore[arg-type]
