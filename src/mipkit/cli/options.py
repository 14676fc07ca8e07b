"""Parsing helpers shared by several commands.

Imported when the command modules are, so it imports nothing heavy at module level (see
:mod:`mipkit.cli`).
"""

from __future__ import annotations

import json


def parse_params(text: str | None) -> dict:
    """``--params`` JSON text -> dict of trainer constructor arguments, with a one-line error."""
    from mipkit._validation import MipkitValueError

    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise MipkitValueError(f"--params is not valid JSON: {err.msg} (column {err.colno}).") from None
    if not isinstance(value, dict):
        raise MipkitValueError(f"--params must be a JSON object such as '{{\"C\": 0.1}}'. Got {text!r}.")
    return value
