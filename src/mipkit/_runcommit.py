"""The files of a run folder: a journalled commit of many files, leftovers, and reads that follow no symlink.

Helpers of :mod:`mipkit._runfolder` (which documents the run-folder rules):

* **Journalled commit** (:func:`commit_files`): the temporaries of a staged run are renamed over the files of
  the previous run (and the previous run's files this run does not write are removed) after a journal
  ``.mipkit-commit.json`` lists every rename and removal. A run killed in the middle of them (even by
  SIGKILL) leaves the journal; the next run that takes the folder's lock (:func:`remove_leftovers`, which
  ``mipkit report`` and every command that writes a run folder call) finishes them first
  (:func:`finish_commit`), so the folder holds the whole previous run or the whole new one.
* **Leftovers** (:func:`remove_leftovers`): temporaries of a killed run are removed.
* **No symlink followed** (:func:`refuse_symlink`, :func:`read_nofollow`): a file of a run folder that is a
  symbolic link is refused with one line, never opened through.

It imports nothing of mipkit but :mod:`mipkit._validation`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from mipkit._validation import MipkitValueError

__all__ = [
    "JOURNAL_FILE",
    "TEMP_SUFFIX",
    "commit_files",
    "finish_commit",
    "read_nofollow",
    "refuse_symlink",
    "remove_leftovers",
]

TEMP_SUFFIX = ".mipkit-tmp"
JOURNAL_FILE = ".mipkit-commit.json"
#: Temporary names of earlier mipkit versions (fixed or ``mkstemp`` names), removed like our own.
_PLAIN_TEMPS = ("report.html.tmp",)
_PLAIN_PREFIXES = (".results.json.", ".config.json.")

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def fsync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- symlinks ---------------------------------------------------------------------------------------------
def refuse_symlink(path: str | os.PathLike) -> Path:
    """``path``, or a one-line :class:`MipkitValueError` when it is a symbolic link (never followed)."""
    p = Path(path)
    if p.is_symlink():
        raise MipkitValueError(
            f"{p} is a symbolic link; remove it (mipkit never follows one in a run folder)."
        )
    return p


def read_nofollow(path: str | os.PathLike) -> bytes | None:
    """The bytes of the regular file ``path``, opened with ``O_NOFOLLOW``; None when there is no file.

    Raises
    ------
    MipkitValueError
        When ``path`` is a symbolic link (its target is never read) or not a regular file.
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP or p.is_symlink():
            refuse_symlink(p)
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise MipkitValueError(f"{p} is not a regular file; remove it or use another run folder.")
        return fh.read()


# -- the journalled commit ---------------------------------------------------------------------------------
def _is_leftover(name: str) -> bool:
    if name.startswith(".") and name.endswith(TEMP_SUFFIX):
        return True
    if name in _PLAIN_TEMPS:
        return True
    return name.endswith(".tmp") and name.startswith(_PLAIN_PREFIXES)


def _plain_name(name: object) -> bool:
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _apply(folder: Path, renames: Iterable[tuple[str, str]], removals: Iterable[str]) -> None:
    """Rename each temporary still there over its final name, then remove ``removals`` (links themselves)."""
    for tmp, final in renames:
        src = folder / tmp
        try:
            if not stat.S_ISREG(os.lstat(src).st_mode):
                continue
        except FileNotFoundError:
            continue  # renamed before the kill
        os.replace(src, folder / final)
    for name in removals:
        with contextlib.suppress(FileNotFoundError):
            if not (folder / name).is_dir() or (folder / name).is_symlink():
                os.unlink(folder / name)


def commit_files(folder: Path, pending: Mapping[Path, Path], removals: Iterable[str] = ()) -> None:
    """Rename the temporaries ``pending`` (final path -> temporary, all in ``folder``) into place and remove
    the files named ``removals``, as one step: with more than one change, a journal listing them is written
    (atomically) first and removed last, and :func:`finish_commit` completes what a kill interrupted."""
    renames = [(tmp.name, final.name) for final, tmp in pending.items()]
    gone = [n for n in dict.fromkeys(removals) if os.path.lexists(folder / n)]
    journal = folder / JOURNAL_FILE
    if len(renames) + len(gone) > 1:
        tmp = folder / f".{JOURNAL_FILE}.{os.getpid()}{TEMP_SUFFIX}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_NOFOLLOW | _O_CLOEXEC
        with os.fdopen(os.open(tmp, flags, 0o600), "w", encoding="utf-8") as fh:
            json.dump({"rename": renames, "remove": gone}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, journal)
        fsync_folder(folder)
    _apply(folder, renames, gone)
    fsync_folder(folder)
    if len(renames) + len(gone) > 1:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        fsync_folder(folder)


def finish_commit(folder: str | os.PathLike) -> bool:
    """Complete the commit a killed run left in ``folder`` (its journal); True when there was one.

    Only plain names inside ``folder`` are touched: temporaries (``.*.mipkit-tmp``, regular files) renamed
    over their final names, and the listed files of the previous run removed. A journal that is not one
    (or a symlink) is removed and nothing else is done.
    """
    root = Path(folder)
    journal = root / JOURNAL_FILE
    if not os.path.lexists(journal):
        return False
    try:
        data = json.loads((read_nofollow(journal) or b"").decode("utf-8"))
        renames = [(t, f) for t, f in data["rename"] if _is_leftover(t) and _plain_name(f)]
        removals = [n for n in data["remove"] if _plain_name(n) and not _is_leftover(n)]
        renames = [(t, f) for t, f in renames if _plain_name(t) and f != JOURNAL_FILE]
    except (MipkitValueError, ValueError, KeyError, TypeError, OSError):
        renames, removals = [], []
    with contextlib.suppress(OSError):
        _apply(root, renames, [n for n in removals if n != JOURNAL_FILE])
        fsync_folder(root)
    with contextlib.suppress(OSError):
        os.unlink(journal)
    fsync_folder(root)
    return True


def remove_leftovers(folder: str | os.PathLike, *, depth: int = 1) -> list[Path]:
    """Finish an interrupted commit in ``folder`` (:func:`finish_commit`), then delete the temporaries a
    killed run left there (and in its subfolders, ``depth`` levels down).

    Only names that mipkit's writers use are touched (``.*.mipkit-tmp`` and the fixed temporary names of
    earlier versions); a symlink with such a name is removed itself, never its target, and symlinked
    subfolders are not entered. Call it while holding the folder's lock, so that no running writer loses
    its temporary. Returns the paths removed.
    """
    removed: list[Path] = []
    root = Path(folder)
    finish_commit(root)
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        try:
            if _is_leftover(entry.name) and not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            elif depth > 0 and entry.is_dir(follow_symlinks=False):
                removed += remove_leftovers(entry.path, depth=depth - 1)
        except OSError:
            continue
    return removed
