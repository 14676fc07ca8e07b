"""Safe writes into a run folder: one run at a time, whole files or none, nothing followed, nothing left over.

A run folder (``mipkit audit --out DIR``, ...) holds the files of the last finished run. Five rules keep
them:

* **A lock** (:class:`RunFolderLock`): a run takes an exclusive ``flock`` on ``DIR/.mipkit.lock`` for its
  whole duration and writes who holds it (pid, host, start time, command) into the file. A second run into the
  same folder is refused with a :class:`RunFolderBusyError` naming the first. The kernel drops the lock when
  its process dies, even by SIGKILL, so a killed run never leaves the folder locked.
* **Atomic files** (:func:`atomic_write`): every file is written to a unique temporary name in the same
  folder (``.NAME.PID.RANDOM.mipkit-tmp``, created with ``O_EXCL | O_NOFOLLOW``, so a planted file or symlink
  is never opened), flushed and ``fsync``-ed, then renamed over the old one with :func:`os.replace` (which
  replaces a symlink planted at the final name instead of following it). A reader sees the old file or the
  new one, never a part; a full disk or a kill mid-write leaves the old file as it was.
* **Staged runs** (:func:`staged_writes`): inside ``with staged_writes(DIR):`` the atomic writes into ``DIR``
  only write their temporaries; the renames happen together when the block ends without an error. A run
  that fails or is killed before that point leaves every file of the previous run in place, so
  ``config.json`` never describes a run whose ``results.json`` is not there.
  ``report.html`` is written in the same stage as the results it shows, and the previous run's files that
  the new run does not write (``replaces``) are removed with the renames; a journal completes renames a
  kill interrupted (:mod:`mipkit._runcommit`), so the folder holds the whole previous run or the whole new
  one.
* **Leftovers** (:func:`remove_leftovers`): temporaries of a killed run are removed when the next run takes
  the lock.
* **No symlink followed**: no file of a run folder is opened through a symbolic link, for writing (atomic
  files replace the link; the lock file, ``ledger.sqlite`` and its side files are refused when they are
  links) or reading (:func:`read_run_file` and :func:`mipkit._runcommit.read_nofollow` refuse a link with
  one line; a checkpoint that is a link is ignored and replaced).

This module is at the bottom of the layers: it imports nothing of mipkit but :mod:`mipkit._validation`
(and its helper :mod:`mipkit._runcommit`).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import os
import secrets
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from mipkit._runcommit import (
    JOURNAL_FILE,
    TEMP_SUFFIX,
    commit_files,
    fsync_folder,
    read_nofollow,
    refuse_symlink,
    remove_leftovers,
)
from mipkit._validation import MipkitValueError

__all__ = [
    "JOURNAL_FILE",
    "LOCK_FILE",
    "TEMP_SUFFIX",
    "RunFolderBusyError",
    "RunFolderLock",
    "atomic_write",
    "check_output_path",
    "lock_run_folder",
    "read_nofollow",
    "read_run_file",
    "refuse_symlink",
    "remove_leftovers",
    "staged_writes",
]

LOCK_FILE = ".mipkit.lock"

Writer = Callable[[IO[bytes]], Any]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_umask_lock = threading.Lock()
_umask: int | None = None


class RunFolderBusyError(MipkitValueError):
    """Another run holds the run folder's lock.

    Attributes
    ----------
    folder : Path
    holder : dict
        What the holder wrote into the lock file: ``pid``, ``host``, ``started`` (ISO time), ``command``.
    """

    def __init__(self, folder: Path, holder: dict) -> None:
        self.folder = folder
        self.holder = holder
        super().__init__(
            f"The run folder {folder} is in use by another mipkit run ({describe_holder(holder)}); wait for "
            "it to finish or write to another folder."
        )


def describe_holder(holder: dict) -> str:
    """``"pid 123 on host, started 2026-11-26T03:00:00+00:00: mipkit audit ..."`` from a lock's contents."""
    if not holder:
        return "details not written yet"
    text = f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
    command = holder.get("command")
    return f"{text}: {command}" if command else text


def _current_umask() -> int:
    global _umask
    with _umask_lock:
        if _umask is None:
            _umask = os.umask(0o022)
            os.umask(_umask)
        return _umask


def check_output_path(path: str | os.PathLike | None, *, what: str = "output folder") -> Path:
    """``path`` as a :class:`Path`, refusing an empty or blank name (``Path("")`` would be the current
    folder)."""
    if path is None or not str(path).strip():
        raise MipkitValueError(f"The {what} must be a non-empty path. Got {str(path or '')!r} instead.")
    return Path(path)


# -- staged and atomic writes ------------------------------------------------------------------------------
class _Stage:
    """The temporaries written inside one :func:`staged_writes` block, renamed together at its end."""

    def __init__(self, folder: Path, replaces: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.key = _folder_key(folder)
        self.pending: dict[Path, Path] = {}  # final path -> temporary, in the order first written
        self.replaces = list(replaces)  # files of the previous run, removed unless written again

    def commit(self) -> None:
        written = {final.name for final in self.pending}
        commit_files(self.folder, self.pending, [n for n in self.replaces if n not in written])
        self.pending.clear()

    def discard(self) -> None:
        for tmp in self.pending.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self.pending.clear()


_STAGES: contextvars.ContextVar[tuple[_Stage, ...]] = contextvars.ContextVar("mipkit_stages", default=())


def _folder_key(folder: Path) -> str:
    return os.path.realpath(os.fspath(folder))


@contextlib.contextmanager
def staged_writes(folder: str | os.PathLike, *, replaces: tuple[str, ...] = ()) -> Iterator[Path]:
    """Defer the renames of every :func:`atomic_write` into ``folder`` to the end of the block.

    Inside the block, :func:`atomic_write` into ``folder`` writes and syncs its temporary and returns; the
    temporaries replace the final files together when the block ends normally, and the files named in
    ``replaces`` (the files a run of this kind writes) that the block did not write are removed with them,
    so no file of the previous run stays beside the new ones. The renames and removals are journalled
    (:func:`mipkit._runcommit.commit_files`): a kill in their middle is completed by the next run that
    takes the folder's lock. When the block raises (or the process is killed before the commit), the
    temporaries are deleted (or left for :func:`remove_leftovers`) and the files of the folder stay as
    they were. A file read inside the block with :func:`read_run_file` is its new version; a block inside
    a block on the same folder joins the outer one.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with staged_writes(d):
    ...         _ = atomic_write(Path(d) / "a.txt", b"new")
    ...         before = (Path(d) / "a.txt").exists()
    ...     before, (Path(d) / "a.txt").read_bytes()
    (False, b'new')
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    outer = _active_stage(path)
    if outer is not None:  # joins the enclosing stage: committed with it
        outer.replaces += [n for n in replaces if n not in outer.replaces]
        yield path
        return
    stage = _Stage(path, tuple(replaces))
    token = _STAGES.set((*_STAGES.get(), stage))
    try:
        yield path
    except BaseException:
        stage.discard()
        raise
    else:
        try:
            stage.commit()
        except BaseException:
            stage.discard()
            raise
    finally:
        _STAGES.reset(token)


def read_run_file(path: str | os.PathLike) -> bytes | None:
    """The current version of a run-folder file: inside a :func:`staged_writes` block that wrote it, its
    new (staged) version; None when it does not exist or the block will remove it (``replaces``); never
    through a symbolic link (:func:`mipkit._runcommit.read_nofollow` refuses one)."""
    final = Path(path)
    stage = _active_stage(final.parent)
    if stage is not None:
        tmp = stage.pending.get(final)
        if tmp is not None:
            return read_nofollow(tmp)
        if final.name in stage.replaces:
            return None
    return read_nofollow(final)


def _active_stage(folder: Path) -> _Stage | None:
    stages = _STAGES.get()
    if not stages:
        return None
    key = _folder_key(folder)
    for stage in reversed(stages):
        if stage.key == key:
            return stage
    return None


def _temp_name(final: Path) -> Path:
    stem = final.name[:80]  # keep the temporary's name under the 255-byte limit of most file systems
    return final.parent / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def atomic_write(path: str | os.PathLike, data: bytes | str | Writer, *, mode: int | None = None) -> Path:
    """Write a whole file or nothing: a unique temporary in the same folder, ``fsync``, :func:`os.replace`.

    Parameters
    ----------
    path : path
        The final file. Its folder is created if needed. A symlink at this name is replaced, not followed.
    data : bytes, str or callable
        The content (``str`` is written as UTF-8), or ``writer(binary_file)`` that writes it, e.g.
        ``lambda f: frame.to_parquet(f)`` or ``lambda f: joblib.dump(model, f)``.
    mode : int, optional
        Permission bits of the new file (default ``0o666`` less the umask, like :func:`open`).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        When the temporary cannot be written (full disk, no permission, ``path`` a folder): the temporary is
        removed and the old file is untouched.
    """
    final = Path(path)
    if final.is_dir() and not final.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(final))
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(final)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else bytes(data))
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), (0o666 & ~_current_umask()) if mode is None else mode)
        stage = _active_stage(final.parent)
        if stage is not None:
            previous = stage.pending.pop(final, None)
            if previous is not None:
                with contextlib.suppress(OSError):
                    os.unlink(previous)
            stage.pending[final] = tmp
            return final
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_folder(final.parent)
    return final


# -- the lock -----------------------------------------------------------------------------------------------
#: (pid, real folder) -> [count, owner] of the locks this process holds
_HELD: dict[tuple[int, str], list[Any]] = {}
_HELD_LOCK = threading.Lock()


def _read_holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 65536).decode("utf-8", "replace")
        holder = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _command_line() -> str:
    argv = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:]]
    if argv[0] in ("__main__.py", "-m", "-c"):
        argv[0] = "mipkit"
    return " ".join(argv)[:500]


class RunFolderLock:
    """An exclusive lock on a run folder, held by one run (process) at a time; re-entrant in its process.

    Parameters
    ----------
    folder : path
        The run folder; created if needed (and removed again, with the parents created for it, on release
        when the run left it empty).
    command : str, optional
        What the lock file says the holder is running (default: this process's command line).

    Notes
    -----
    ``flock`` on ``folder/.mipkit.lock``, opened with ``O_NOFOLLOW`` (a symlink planted there is refused).
    After taking the lock the file is checked to still be the one at that name (a run that just released the
    lock unlinks it), the holder's details are written into it, and the temporaries of a killed run are
    removed (:func:`remove_leftovers`). On file systems without ``flock`` the run goes ahead unlocked.
    """

    def __init__(self, folder: str | os.PathLike, *, command: str | None = None) -> None:
        self.folder = check_output_path(folder)
        self.command = _command_line() if command is None else command
        self._fd: int | None = None
        self._created: list[Path] = []  # folders this lock created, deepest first
        self._holding = False

    @property
    def path(self) -> Path:
        return self.folder / LOCK_FILE

    def _key(self) -> tuple[int, str]:
        return os.getpid(), _folder_key(self.folder)

    def acquire(self) -> RunFolderLock:
        """Take the lock (or raise :class:`RunFolderBusyError`); returns ``self``."""
        if self.folder.exists() and not self.folder.is_dir():
            raise MipkitValueError(f"The run folder {self.folder} exists and is not a folder.")
        if not self.folder.exists():
            self._created = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
            self.folder.mkdir(parents=True, exist_ok=True)
        with _HELD_LOCK:
            held = _HELD.get(self._key())
            if held is not None:  # this process holds it already (a run inside a run): share it
                held[0] += 1
                self._holding = True
                return self
            try:
                fd = self._lock_file()
            except BaseException:
                self._remove_created_folder()
                raise
            _HELD[self._key()] = [1, self]
            self._holding = True
        self._fd = fd
        if fd is not None:
            info = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": datetime.now().astimezone().isoformat(timespec="seconds"),
                "command": self.command,
            }
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(info).encode(), 0)
        remove_leftovers(self.folder)
        return self

    def _lock_file(self) -> int | None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return None
        for _ in range(50):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, 0o644)
            except OSError as err:
                if err.errno == errno.ELOOP:
                    raise MipkitValueError(
                        f"{self.path} is a symbolic link; remove it (mipkit never follows one in a run "
                        "folder)."
                    ) from None
                raise
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise RunFolderBusyError(self.folder, holder) from None
            except OSError as err:
                if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                    return fd  # no locking on this file system: go ahead unlocked
                os.close(fd)
                raise
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)  # the previous holder unlinked it between our open and our flock: try again
        raise RunFolderBusyError(self.folder, {})  # pragma: no cover - 50 lost races in a row

    def release(self) -> None:
        """Release the lock (idempotent); the last release in the process unlinks the lock file."""
        with _HELD_LOCK:
            held = _HELD.get(self._key())
            if held is None or not self._holding:
                return
            self._holding = False
            held[0] -= 1
            if held[0] > 0:
                return
            del _HELD[self._key()]
            owner = held[1]
        fd, owner._fd = owner._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)  # while still holding it: a waiting run re-checks the name
            os.close(fd)
        owner._remove_created_folder()

    def _remove_created_folder(self) -> None:
        created, self._created = self._created, []
        for folder in created:  # deepest first; only succeeds when the run wrote nothing
            try:
                folder.rmdir()
            except OSError:
                break

    def __enter__(self) -> RunFolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_run_folder(folder: str | os.PathLike, *, command: str | None = None) -> RunFolderLock:
    """A :class:`RunFolderLock` on ``folder``, to use as ``with lock_run_folder(out): ...``."""
    return RunFolderLock(folder, command=command)
