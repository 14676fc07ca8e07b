"""Load a fitted model from a file without running code the user did not agree to.

Loading a pickle (``.pkl``, ``.pickle``, ``.joblib``) *runs code*: the file names functions that the loader
calls, so a model file from someone else can do anything the user can. :func:`load_model_file` therefore

* loads a **skops** file (``.skops``; ``skops.io``, the ``models`` extra) after checking every type it
  holds: types skops trusts by default load, and any other type (a class of the user's own package, say)
  is listed and refused unless the caller names it in ``trusted``;
* loads a pickle or joblib file only with ``trust_pickle=True``, and then warns
  (:class:`PickleLoadWarning`) that it ran the file's code.

:func:`save_model_file` writes the safe format (``skops.io.dump``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mipkit._validation import MipkitValueError

__all__ = [
    "PICKLE_SUFFIXES",
    "SKOPS_SUFFIXES",
    "PickleLoadWarning",
    "UntrustedModelFileError",
    "check_model_file",
    "load_model_file",
    "save_model_file",
    "untrusted_types",
]

PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
SKOPS_SUFFIXES = (".skops",)
SKOPS_MISSING = "Reading .skops model files needs the 'models' extra: pip install mipkit[models]"


class PickleLoadWarning(UserWarning):
    """A pickle / joblib model file was loaded: its code ran with the user's rights."""


class UntrustedModelFileError(MipkitValueError):
    """A model file that was not loaded because loading it would run, or build, what the user has not trusted.

    Attributes
    ----------
    path : str
    kind : {"pickle", "skops"}
    untrusted : list of str
        For a skops file: the types it holds that are not trusted (empty for a pickle).
    """

    def __init__(self, path: str, kind: str, message: str, untrusted: Iterable[str] = ()) -> None:
        self.path = path
        self.kind = kind
        self.untrusted = list(untrusted)
        super().__init__(message)


def _skops_io() -> Any:
    try:
        import skops.io as sio
    except ImportError:
        raise MipkitValueError(SKOPS_MISSING) from None
    return sio


def untrusted_types(path: str | Path) -> list[str]:
    """The types of a skops file that skops does not trust by default (``skops.io.get_untrusted_types``)."""
    return sorted(_skops_io().get_untrusted_types(file=str(path)))


def check_model_file(
    path: str | Path, *, trust_pickle: bool = False, trusted: Iterable[str] = ()
) -> list[str]:
    """Refuse ``path`` as :func:`load_model_file` would, without loading it; return the skops types to trust.

    Cheap enough to run before any other work: a skops file's types are read from its schema, a pickle is
    not opened.

    Raises
    ------
    UntrustedModelFileError, MipkitValueError
        As :func:`load_model_file`.
    """
    p = Path(path)
    if not p.is_file():
        raise MipkitValueError(f"No such model file: {p}")
    suffix = p.suffix.lower()
    if suffix in SKOPS_SUFFIXES:
        try:
            found = untrusted_types(p)
        except MipkitValueError:
            raise
        except Exception as exc:  # not a skops archive
            raise MipkitValueError(f"{p} is not a readable skops file: {type(exc).__name__}: {exc}") from None
        extra = sorted(set(found) - set(trusted))
        if extra:
            raise UntrustedModelFileError(
                str(p),
                "skops",
                f"The model file {p} holds types that are not trusted by default: {', '.join(extra)}. Check "
                "that you expect them, then pass them as trusted types to load the file.",
                extra,
            )
        return found
    if suffix in PICKLE_SUFFIXES:
        if not trust_pickle:
            raise UntrustedModelFileError(
                str(p),
                "pickle",
                f"The model file {p} is a pickle: loading it runs code stored in the file, with your rights. "
                "Load it only if you trust where it came from (pass trust_pickle=True), or save the model in "
                "the skops format (mipkit.game.model_files.save_model_file) and load that.",
            )
        return []
    raise MipkitValueError(
        f"The model file {p} has suffix {suffix or '(none)'!r}; expected .skops (safe) or a pickle "
        f"({', '.join(PICKLE_SUFFIXES)})."
    )


def load_model_file(path: str | Path, *, trust_pickle: bool = False, trusted: Iterable[str] = ()) -> Any:
    """The fitted model stored in ``path`` (see the module docstring for what is refused).

    Parameters
    ----------
    path : path
        A ``.skops`` file, or a ``.pkl`` / ``.pickle`` / ``.joblib`` file.
    trust_pickle : bool
        Load a pickle / joblib file (it runs the file's code; a :class:`PickleLoadWarning` says so).
    trusted : iterable of str
        Types of a skops file to trust beyond skops' defaults (as :func:`untrusted_types` names them).

    Raises
    ------
    UntrustedModelFileError
        A pickle without ``trust_pickle``, or a skops file holding types not in ``trusted``.
    MipkitValueError
        A missing file or an unknown suffix.
    """
    found = check_model_file(path, trust_pickle=trust_pickle, trusted=trusted)
    p = Path(path)
    if p.suffix.lower() in SKOPS_SUFFIXES:
        return _skops_io().load(str(p), trusted=found or None)
    warnings.warn(
        f"Loaded {p} as a pickle: the code it holds ran with your rights (trust_pickle=True).",
        PickleLoadWarning,
        stacklevel=2,
    )
    import joblib

    return joblib.load(p)


def save_model_file(model: Any, path: str | Path) -> Path:
    """Write ``model`` to a skops file (``path`` should end in ``.skops``); returns the path."""
    p = Path(path)
    _skops_io().dump(model, str(p))
    return p
