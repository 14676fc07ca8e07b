"""A verb's refusals in flag words: ``the 'n_attacks' parameter of audit_synthetic`` is ``--n-attacks``.

A verb's config and the verb itself name their settings as Python does; a command maps flags to those
settings, so it says the same refusal with the flag's name (``--seed`` for ``random_state``, ...). Imports
nothing heavy (the command modules import it inside their commands).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping

__all__ = ["flag_errors", "flag_message"]


def flag_message(message: str, verb: str, flags: Mapping[str, str] | None = None) -> str:
    """``message`` with each ``the 'field' parameter of verb`` written as its flag.

    Parameters
    ----------
    message : str
        A :class:`~mipkit.MipkitValueError` message.
    verb : str
        The verb whose settings the message names (``"audit_synthetic"``).
    flags : mapping, optional
        Field -> flag where the flag is not the field in kebab case (``{"random_state": "--seed"}``).
    """
    names = dict(flags or {})

    def flag(m: re.Match) -> str:
        return names.get(m.group(1), "--" + m.group(1).replace("_", "-"))

    return re.sub(rf"\b[Tt]he '(\w+)' parameter of {re.escape(verb)}\b", flag, message)


@contextlib.contextmanager
def flag_errors(verb: str, flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Re-raise a :class:`~mipkit.MipkitValueError` of the block in flag words (:func:`flag_message`)."""
    from mipkit._validation import MipkitValueError

    try:
        yield
    except MipkitValueError as err:
        text = flag_message(str(err), verb, flags)
        if text == str(err):
            raise
        raise MipkitValueError(text) from None
