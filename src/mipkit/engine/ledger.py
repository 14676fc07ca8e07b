"""The run ledger: every finished fit, committed to SQLite as soon as it ends, so a killed run resumes.

The ledger is one SQLite file (``ledger.sqlite`` in the run folder) in write-ahead-log mode. Each finished
fit is one row of the table ``fits``::

    fits(run_key TEXT, idx INTEGER, output BLOB, shape TEXT, dtype TEXT, meta TEXT, seconds REAL,
         created REAL, PRIMARY KEY (run_key, idx))

``output`` holds the fit's output array as ``np.save`` bytes (no pickle), ``meta`` a JSON object (which
process fitted it, its seed, the task's key, ...), ``created`` the Unix time of the commit.

Rows are namespaced by ``run_key``, a hash of everything the outputs depend on (trainer, data, tasks; see
:func:`make_run_key`). A run with a different configuration in the same folder therefore gets its own
namespace and never reads another configuration's fits; re-running the same configuration finds its rows and
skips them. Only the parent process writes (worker processes return their outputs to it), so SQLite always
has a single writer. A symbolic link at ``ledger.sqlite`` (or at SQLite's ``-wal``, ``-shm``, ``-journal``
files beside it) is refused with one line, never followed (``mipkit._runfolder``'s rules).
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mipkit._runcommit import refuse_symlink
from mipkit._validation import MipkitValueError

__all__ = ["LEDGER_FILENAME", "Ledger", "hash_array", "make_run_key"]

LEDGER_FILENAME = "ledger.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fits (
    run_key TEXT NOT NULL,
    idx INTEGER NOT NULL,
    output BLOB NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    meta TEXT NOT NULL,
    seconds REAL,
    created REAL NOT NULL,
    PRIMARY KEY (run_key, idx)
);
CREATE TABLE IF NOT EXISTS runs (
    run_key TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    created REAL NOT NULL
);
"""


_INSERT_FIT = (
    "INSERT OR REPLACE INTO fits (run_key, idx, output, shape, dtype, meta, seconds, created) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def hash_array(array: Any) -> str:
    """SHA-256 hex digest of an array's dtype, shape and bytes (C order)."""
    arr = np.ascontiguousarray(np.asarray(array))
    if arr.dtype == object:
        raise MipkitValueError("Cannot hash an object array; encode the data as numbers first.")
    h = hashlib.sha256()
    h.update(f"{arr.dtype.str}|{arr.shape}|".encode())
    h.update(memoryview(arr).cast("B"))
    return h.hexdigest()


def make_run_key(
    trainer: Any,
    X: Any,
    y: Any,
    tasks: Iterable[Any],
    *,
    query_X: Any | None = None,
    extra: dict | None = None,
) -> str:
    """Hash of everything a run's fit outputs depend on: the ledger namespace for that run.

    Parameters
    ----------
    trainer : TrainerSpec
        Its :meth:`~mipkit.game.trainers.TrainerSpec.fingerprint` enters the key.
    X, y : array-like
        Training data (dtype, shape and bytes enter the key).
    tasks : iterable of FitTask
        Each task's index, seed and training indices (in order) enter the key.
    query_X : array-like, optional
        The rows the fitted models are queried on (default ``X``).
    extra : dict, optional
        Anything else that should separate runs (JSON-able), e.g. a workflow version.

    Returns
    -------
    str
        64 hex characters.
    """
    h = hashlib.sha256()
    h.update(b"mipkit-run-key-v1|")
    h.update(trainer.fingerprint().encode())
    h.update(hash_array(X).encode())
    h.update(hash_array(y).encode())
    h.update(("X" if query_X is None else hash_array(query_X)).encode())
    for task in tasks:
        seed = "none" if task.seed is None else str(int(task.seed))
        h.update(f"|{int(task.index)}:{seed}:".encode())
        h.update(hash_array(np.asarray(task.train_idx, dtype=np.int64)).encode())
    if extra:
        h.update(json.dumps(extra, sort_keys=True, default=repr).encode())
    return h.hexdigest()


_IO_ERRORS = {
    "full": errno.ENOSPC,
    "disk i/o": errno.EIO,
    "readonly": errno.EROFS,
    "unable to open": errno.EACCES,
}


def _is_io_error(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(key in text for key in _IO_ERRORS)


def _os_error(exc: sqlite3.Error, what: str, path: Path) -> OSError:
    """An SQLite error of the file system (full disk, I/O error, read-only) as the OSError it is."""
    text = str(exc).lower()
    code = next((c for key, c in _IO_ERRORS.items() if key in text), errno.EIO)
    hint = "; is the disk full?" if code == errno.EIO else ""
    return OSError(code, f"{what} ({exc}{hint})", str(path))


def _to_bytes(output: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, output, allow_pickle=False)
    return buffer.getvalue()


def _from_bytes(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(blob), allow_pickle=False)


class Ledger:
    """SQLite ledger of finished fits for one run (namespace ``run_key``).

    Parameters
    ----------
    path : str or Path
        The SQLite file, or a run folder (then ``<folder>/ledger.sqlite``). A new file (and its parent
        folders) is created by the first :meth:`put`, so a run that fails before its first fit leaves the
        folder as it was; an existing file is opened (and checked) at once.
    run_key : str
        The run's namespace, normally :func:`make_run_key`. Rows written under another key (another
        configuration in the same folder) are invisible to this ledger.
    info : dict, optional
        JSON-able description of the run, stored in the ``runs`` table with the first fit (for people
        inspecting the file).

    Notes
    -----
    :meth:`put` commits before it returns (WAL journal, ``synchronous=FULL``), so a fit whose ``put``
    returned survives a SIGKILL of the process a moment later. Use one ``Ledger`` per process; the
    connection is not shared with worker processes.

    Examples
    --------
    >>> import numpy as np, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with Ledger(d, "demo") as ledger:
    ...         ledger.put(0, np.eye(2), {"seed": 1})
    ...         sorted(ledger.done()), ledger.get(0).tolist()
    ([0], [[1.0, 0.0], [0.0, 1.0]])
    """

    def __init__(self, path: str | Path, run_key: str, *, info: dict | None = None):
        if not isinstance(run_key, str) or not run_key:
            raise MipkitValueError(
                f"The 'run_key' parameter of Ledger must be a non-empty string. Got {run_key!r} instead."
            )
        path = Path(path)
        if (path.is_dir() and not path.is_symlink()) or path.suffix == "":
            path = path / LEDGER_FILENAME
        self.path = path
        self._refuse_links()
        self.run_key = run_key
        self._info = json.dumps(info or {}, sort_keys=True, default=repr)
        self._registered = False
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        if path.exists() or path.is_symlink():
            self._connect()  # an existing ledger is checked now; a new one is created by the first put

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if self._closed:
            raise MipkitValueError(f"The ledger {self.path} is closed.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refuse_links()
        conn = None
        side_files = [Path(f"{self.path}{suffix}") for suffix in ("-wal", "-shm")]
        new_side_files = [p for p in side_files if not p.exists()]
        try:
            conn = sqlite3.connect(str(self.path), timeout=60.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            for p in new_side_files:  # what SQLite began and could not finish (a full disk) is removed
                if p.exists() and (p.name.endswith("-shm") or p.stat().st_size == 0):
                    p.unlink(missing_ok=True)
            raise self._open_error(exc) from None
        self._conn = conn
        return conn

    def _refuse_links(self) -> None:
        """A symlink at the ledger's name (or at SQLite's side files) is refused, never followed."""
        for p in (self.path, *(Path(f"{self.path}{s}") for s in ("-wal", "-shm", "-journal"))):
            refuse_symlink(p)

    def _open_error(self, exc: sqlite3.DatabaseError) -> Exception:
        """An unusable ledger file (bad input) or a file-system failure (an OSError: full disk, ...)."""
        if isinstance(exc, sqlite3.OperationalError) and _is_io_error(exc):
            return _os_error(exc, "Cannot open the ledger", self.path)
        return MipkitValueError(
            f"{self.path} is not a usable mipkit ledger ({exc}); use another run folder, or delete "
            "this file to start the run afresh."
        )

    def _register(self) -> None:
        """Record the run in the ``runs`` table, at its first committed fit (a run that fits nothing, or
        fails before its first fit, leaves an existing ledger as it was)."""
        if not self._registered:
            with self._db:
                self._db.execute(
                    "INSERT OR IGNORE INTO runs (run_key, info, created) VALUES (?, ?, ?)",
                    (self.run_key, self._info, time.time()),
                )
            self._registered = True

    # -- connection ----------------------------------------------------------------------------------------
    @property
    def _db(self) -> sqlite3.Connection:
        return self._connect()

    @property
    def _exists(self) -> bool:
        if self._closed:
            raise MipkitValueError(f"The ledger {self.path} is closed.")
        return self._conn is not None or self.path.exists()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._closed = True
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict:
        raise TypeError("A Ledger holds an SQLite connection and is not sent to worker processes.")

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r}, run_key={self.run_key[:12]!r}...)"

    # -- reading and writing -------------------------------------------------------------------------------
    def done(self) -> set[int]:
        """Indices of the fits already committed under this run key."""
        if not self._exists:
            return set()
        rows = self._db.execute("SELECT idx FROM fits WHERE run_key = ?", (self.run_key,)).fetchall()
        return {int(r[0]) for r in rows}

    def put(self, index: int, output: np.ndarray, meta: dict | None = None) -> None:
        """Commit fit ``index``'s output (replacing any earlier row of this index) before returning.

        ``meta`` is stored as JSON; its ``"seconds"`` entry, if any, also fills the ``seconds`` column.
        """
        output = np.asarray(output)
        if output.dtype == object:
            raise MipkitValueError("Ledger outputs must be numeric arrays, not object arrays.")
        meta = dict(meta or {})
        seconds = meta.get("seconds")
        row = (
            self.run_key,
            int(index),
            _to_bytes(output),
            json.dumps(list(output.shape)),
            output.dtype.str,
            json.dumps(meta, sort_keys=True, default=repr),
            None if seconds is None else float(seconds),
            time.time(),
        )
        try:
            self._register()
            with self._db:
                self._db.execute(_INSERT_FIT, row)
        except sqlite3.OperationalError as exc:  # a full disk, a read-only folder: the commit was rolled back
            raise _os_error(exc, "Cannot commit a fit to the ledger", self.path) from None

    def _column(self, index: int, column: str) -> Any:
        """The ``column`` (``"output"`` or ``"meta"``) of fit ``index``'s row, as stored.

        Parameters
        ----------
        index : int
            The fit.
        column : {"output", "meta"}
            The column of the ``fits`` table.

        Raises
        ------
        KeyError
            If fit ``index`` is not in the ledger.
        """
        if not self._exists:
            raise KeyError(f"fit {int(index)} is not in the ledger {self.path}")
        row = self._db.execute(
            f"SELECT {column} FROM fits WHERE run_key = ? AND idx = ?", (self.run_key, int(index))
        ).fetchone()
        if row is None:
            raise KeyError(f"fit {int(index)} is not in the ledger {self.path}")
        return row[0]

    def get(self, index: int) -> np.ndarray:
        """The output of fit ``index``; ``KeyError`` if it is not in the ledger."""
        return _from_bytes(self._column(index, "output"))

    def get_all(self, indices: Iterable[int]) -> np.ndarray:
        """Outputs of the fits ``indices`` stacked along a new first axis, in the order given."""
        return np.stack([self.get(i) for i in indices])

    def meta(self, index: int) -> dict:
        """The metadata stored with fit ``index``; ``KeyError`` if it is not in the ledger."""
        return json.loads(self._column(index, "meta"))

    def records(self) -> list[dict]:
        """One dict per committed fit (``idx``, ``shape``, ``dtype``, ``meta``, ``seconds``, ``created``)."""
        if not self._exists:
            return []
        rows = self._db.execute(
            "SELECT idx, shape, dtype, meta, seconds, created FROM fits WHERE run_key = ? ORDER BY idx",
            (self.run_key,),
        ).fetchall()
        return [
            {
                "idx": int(idx),
                "shape": tuple(json.loads(shape)),
                "dtype": dtype,
                "meta": json.loads(meta),
                "seconds": seconds,
                "created": created,
            }
            for idx, shape, dtype, meta, seconds, created in rows
        ]

    def other_run_keys(self) -> list[str]:
        """Run keys of other configurations that have fits in the same file."""
        if not self._exists:
            return []
        rows = self._db.execute(
            "SELECT DISTINCT run_key FROM fits WHERE run_key != ? ORDER BY run_key", (self.run_key,)
        ).fetchall()
        return [r[0] for r in rows]

    def purge_other_runs(self) -> int:
        """Delete the fits of every other run key in the file; return how many rows were deleted."""
        if not self._exists:
            return 0
        with self._db:
            cur = self._db.execute("DELETE FROM fits WHERE run_key != ?", (self.run_key,))
            self._db.execute("DELETE FROM runs WHERE run_key != ?", (self.run_key,))
        return int(cur.rowcount)
