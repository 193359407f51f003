"""A persistent response cache, so reruns and resumed runs never pay for the same answer twice.

SQLite in WAL mode lets several evaluation processes share one cache file: readers never wait
for writers, and a writer waits up to ``busy_timeout`` for another. Reads and writes use
separate connections, each behind its own lock. Lookups run directly on the event loop: a WAL
point read takes microseconds and never waits for a lock, while a thread hop would cost more
than the read. Writes can wait (for another process's transaction), so they are queued and
written in batches from a worker thread (``asyncio.to_thread``); queued rows are served from
memory until written. Identical requests in flight at the same time share one model call.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

from toolbench.errors import UserError
from toolbench.models.base import Model
from toolbench.models.digest import canonical_digest
from toolbench.types import Generation, GenerationRequest

log = logging.getLogger(__name__)

#: Bump when the key material or the stored fields change meaning; old rows then just miss.
KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    finish_reason TEXT,
    tool_calls TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(model_name: str, base_url: str | None, request: GenerationRequest) -> str:
    """sha256 of canonical JSON of everything that can change a real model's answer."""
    material = {"v": KEY_VERSION, "model": model_name, "base_url": base_url}
    # The same text as json.dumps(material + request payload, sort_keys=True, compact,
    # ensure_ascii=False), hashed incrementally over a transcript that grows turn by turn.
    return canonical_digest(material, request)


class CachedModel:
    """Wraps a cacheable model with an SQLite cache at ``path``.

    ``hits`` counts answers not produced by the model (stored rows and shared in-flight calls);
    ``misses`` counts model calls. A hit carries ``cached=True`` and the lookup's own latency.
    Call ``aclose()`` (or ``flush()``) before exiting so that queued rows reach the disk.
    """

    def __init__(self, inner: Model, path: Path, base_url: str | None = None) -> None:
        if not inner.cacheable:
            raise ValueError(f"model {inner.name!r} is not cacheable")
        self.inner = inner
        self.name = inner.name
        self.cacheable = True
        self.path = Path(path)
        self.base_url = base_url if base_url is not None else getattr(inner, "base_url", None)
        self.hits = 0
        self.misses = 0
        self._inflight: dict[str, asyncio.Future[Generation]] = {}
        self._unwritten: dict[str, Generation] = {}  # stored but not yet on disk
        self._write_queue: list[tuple[str, Generation]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer: sqlite3.Connection | None = self._connect()
            self._writer.execute("PRAGMA journal_mode = WAL")  # persistent: set once per file
            self._writer.execute(_SCHEMA)
            self._reader: sqlite3.Connection | None = self._connect()
        except (OSError, sqlite3.Error) as error:
            raise UserError(f"cannot open the response cache {self.path}: {error}") from None

    def _connect(self) -> sqlite3.Connection:
        # check_same_thread=False because the connection is created here but used from the
        # loop thread (reader) or a worker thread (writer); the locks serialise each one.
        conn = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable enough for a cache in WAL mode
        return conn

    def journal_mode(self) -> str:
        """The database's journal mode (``"wal"``), for tests and diagnostics."""
        with self._read_lock:
            row = self._open(self._reader).execute("PRAGMA journal_mode").fetchone()
        return str(row[0])

    @staticmethod
    def _open(conn: sqlite3.Connection | None) -> sqlite3.Connection:
        if conn is None:
            raise RuntimeError("cache is closed")
        return conn

    # ---- reading ----

    def _lookup(self, key: str) -> Generation | None:
        queued = self._unwritten.get(key)
        if queued is not None:
            return replace(queued, cached=True)
        try:
            with self._read_lock:
                row = (
                    self._open(self._reader)
                    .execute(
                        "SELECT text, prompt_tokens, completion_tokens, finish_reason, tool_calls"
                        " FROM responses WHERE key = ?",
                        (key,),
                    )
                    .fetchone()
                )
        except sqlite3.Error as error:
            # A broken cache must not fail the run: the model can still answer.
            log.warning(
                "response cache %s: lookup failed (%s); calling the model", self.path, error
            )
            return None
        if row is None:
            return None
        text, prompt_tokens, completion_tokens, finish_reason, tool_calls = row
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
            cached=True,
            tool_calls=json.loads(tool_calls),
        )

    # ---- writing ----

    def _write(self, rows: list[tuple[str, Generation]]) -> None:
        now = time.time()
        values = [
            (
                key,
                self.name,
                g.text,
                g.prompt_tokens,
                g.completion_tokens,
                g.latency_s,
                g.finish_reason,
                json.dumps(g.tool_calls),
                now,
            )
            for key, g in rows
        ]
        with self._write_lock:
            conn = self._open(self._writer)
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", values
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _write_queued(self, rows: list[tuple[str, Generation]]) -> None:
        try:
            self._write(rows)
        except sqlite3.Error as error:
            log.warning("response cache %s: store failed (%s)", self.path, error)
        finally:
            for key, _ in rows:
                self._unwritten.pop(key, None)

    async def _flush_queue(self) -> None:
        while self._write_queue:
            rows, self._write_queue = self._write_queue, []
            await asyncio.to_thread(self._write_queued, rows)

    def _store(self, key: str, generation: Generation) -> None:
        self._unwritten[key] = generation
        self._write_queue.append((key, generation))
        loop = asyncio.get_running_loop()
        flusher = self._flusher
        if flusher is None or flusher.done() or flusher.get_loop() is not loop:
            self._flusher = loop.create_task(self._flush_queue())

    async def flush(self) -> None:
        """Wait until every stored answer is on disk."""
        flusher = self._flusher
        if flusher is not None and flusher.get_loop() is asyncio.get_running_loop():
            await flusher
        if self._write_queue:
            rows, self._write_queue = self._write_queue, []
            await asyncio.to_thread(self._write_queued, rows)

    # ---- the model interface ----

    async def _join(self, key: str, start: float) -> Generation | None:
        """Wait for an identical in-flight call; None if there is none or its caller gave up."""
        while (future := self._inflight.get(key)) is not None:
            try:
                generation = await asyncio.shield(future)
            except asyncio.CancelledError:
                if future.cancelled():
                    continue  # the leading call was cancelled, not us: try again
                raise
            self.hits += 1
            return replace(generation, cached=True, latency_s=time.perf_counter() - start)
        return None

    async def generate(self, request: GenerationRequest) -> Generation:
        start = time.perf_counter()
        key = cache_key(self.name, self.base_url, request)
        joined = await self._join(key, start)
        if joined is not None:
            return joined
        stored = self._lookup(key)
        if stored is not None:
            self.hits += 1
            stored.latency_s = time.perf_counter() - start
            return stored
        # No await between the lookup and registering the call: no duplicate can slip in.
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        self.misses += 1
        try:
            generation = await self.inner.generate(request)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: nobody may be waiting
            raise
        except BaseException:  # cancelled: waiters retry on their own
            future.cancel()
            raise
        else:
            self._store(key, generation)
            future.set_result(generation)
            return generation
        finally:
            del self._inflight[key]

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            await self.flush()
            with self._write_lock, self._read_lock:
                for conn in (self._writer, self._reader):
                    if conn is not None:
                        conn.close()
                self._writer = self._reader = None
