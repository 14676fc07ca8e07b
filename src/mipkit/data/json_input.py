"""Reading a JSON input (a certificate, a domain, ``--params``, a run's ``results.json``) with bounds.

Every JSON document a command reads comes through :func:`read_json_file` or :func:`parse_json_text`, which
refuse with one :class:`~mipkit.MipkitValueError` line, before parsing where they can:

* a path that is not a regular file (a folder, ``/dev/zero``, a FIFO: a device can be endless), or a file
  over :data:`MAX_JSON_BYTES`; a symbolic link the user names is followed;
* text that is not UTF-8, or not JSON;
* nesting deeper than :data:`MAX_JSON_DEPTH` (Python's parser would recurse until it fails);
* ``NaN`` / ``Infinity`` literals and numbers that overflow a float (``1e999``) or have thousands of digits:
  JSON has no such numbers, and a NaN compares false with every limit.
"""

from __future__ import annotations

import json
import math
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "parse_json_text", "read_input_bytes", "read_json_file"]

MAX_JSON_BYTES = 16 * 2**20
"""Largest JSON (or YAML) input accepted, in bytes (mipkit's own results files are well under 1 MiB)."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (mipkit's own files nest fewer than 10 levels)."""
_MAX_DIGITS = 400  # an integer literal longer than this is no count or setting of any mipkit input
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def read_input_bytes(path: str | Path, what: str, *, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the input file ``path`` (``what`` names it in messages), refused when it is missing,
    not a regular file or larger than ``max_bytes``. Symbolic links are followed."""
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise MipkitValueError(f"No such {what}: {p}") from None
    except OSError as err:
        raise MipkitValueError(f"Cannot read the {what} {p}: {err.strerror or err}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise MipkitValueError(f"The {what} {p} is a folder; give a file.")
    if not stat.S_ISREG(info.st_mode):
        raise MipkitValueError(f"The {what} {p} is not a regular file (a device or a pipe); give a file.")
    if info.st_size > max_bytes:
        raise MipkitValueError(f"The {what} {p} has {info.st_size:,} bytes; at most {max_bytes:,} are read.")
    with p.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while read
        raise MipkitValueError(
            f"The {what} {p} has more than {max_bytes:,} bytes; at most that many are read."
        )
    return data


def nesting_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON (or flow-style YAML) text, outside strings."""
    bare = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)
    steps = (np.isin(bare, (ord("["), ord("{"))).astype(np.int64)) - np.isin(bare, (ord("]"), ord("}")))
    return int(np.cumsum(steps).max(initial=0))


def _bad_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-')):,} digits is out of range")
    return int(text)


def parse_json_text(
    text: str | bytes,
    what: str,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    object_pairs_hook: Any = None,
) -> Any:
    """Parse JSON text within the bounds of the module docstring; ``what`` names the input in messages;
    ``object_pairs_hook`` as for :func:`json.loads` (e.g. to refuse a repeated name)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > max_bytes:
        raise MipkitValueError(f"{what} has {len(data):,} bytes; at most {max_bytes:,} are read.")
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MipkitValueError(
            f"{what} is not UTF-8 text (byte {err.start + 1}); is it a JSON file?"
        ) from None
    depth = nesting_depth(data)
    if depth > max_depth:
        raise MipkitValueError(f"{what} nests {depth:,} levels deep; at most {max_depth} are read.")
    try:
        return json.loads(
            decoded,
            parse_constant=_bad_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
            object_pairs_hook=object_pairs_hook,
        )
    except json.JSONDecodeError as err:
        raise MipkitValueError(
            f"{what} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})."
        ) from None
    except (ValueError, RecursionError) as err:
        raise MipkitValueError(f"{what} is not valid JSON: {err}.") from None


def read_json_file(
    path: str | Path,
    what: str,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Read the JSON file ``path`` (``what`` names it in messages) within the bounds of the module
    docstring."""
    data = read_input_bytes(path, what, max_bytes=max_bytes)
    return parse_json_text(data, f"The {what} {path}", max_bytes=max_bytes, max_depth=max_depth)
