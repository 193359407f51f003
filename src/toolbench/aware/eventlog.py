"""The SQLite plumbing shared by the review store and the human-answer store.

Both keep an append-only event log that several people (processes) write at once, so both
need the same careful opening: WAL mode (readers never wait for the writer), a generous
busy timeout, a retry while a brand-new file is switched to WAL (SQLite reports BUSY there
without consulting the busy handler), and short ``BEGIN IMMEDIATE`` write transactions that
take the write lock up front so two writers can never deadlock upgrading a read lock.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from toolbench.errors import UserError

BUSY_TIMEOUT_MS = 30_000

_Store = TypeVar("_Store", bound="EventLog")


class EventLog:
    """Base of a store over one SQLite file; one object may be shared by threads."""

    #: What the file holds, for error messages ("review decisions", "human answers").
    what = "events"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    def _open(self, init_schema: Callable[[], None]) -> None:
        """Connect, switch to WAL, then let the subclass create or check its tables."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,  # autocommit; transactions are explicit and short
                check_same_thread=False,
            )
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._enable_wal()
            self._conn.execute("PRAGMA synchronous = NORMAL")
            init_schema()
        except sqlite3.DatabaseError as error:
            self.close()
            raise UserError(
                f"{self.path}: cannot open the {self.what} ({error}); pass another file with --db"
            ) from None
        except BaseException:
            self.close()
            raise

    def _enable_wal(self) -> None:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._db().execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"the store of {self.what} is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction, taking the write lock up front (no upgrade deadlocks)."""
        with self._lock:
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self: _Store) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def last_seq(self) -> int:
        """The newest event's seq (0 when empty); a session remembers it to count its own work."""
        with self._lock:
            row = self._db().execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return int(row[0])

    def meta(self) -> dict[str, str]:
        """What the store recorded when it was created."""
        with self._lock:
            return dict(self._db().execute("SELECT key, value FROM meta").fetchall())

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._db().execute("PRAGMA journal_mode").fetchone()[0])
