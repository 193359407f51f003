"""A persistent response cache, so reruns and resumed runs never pay for the same answer twice.

SQLite in WAL mode lets several evaluation processes share one cache file: readers never block,
and a writer waits up to ``busy_timeout`` for another. Within a process, one connection is used
from worker threads (``asyncio.to_thread``) behind a lock, so a slow disk never stalls the event
loop. Identical requests that are in flight at the same time share one model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolbench.models.base import Model
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
    material = {
        "v": KEY_VERSION,
        "model": model_name,
        "base_url": base_url,
        "request": request.cache_payload(),
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedModel:
    """Wraps a cacheable model with an SQLite cache at ``path``.

    ``hits`` counts answers not produced by the model (stored rows and shared in-flight calls);
    ``misses`` counts model calls. A hit carries ``cached=True`` and the lookup's own latency.
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
        self._lock = threading.Lock()
        self._inflight: dict[str, asyncio.Future[Generation]] = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA busy_timeout = 30000")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute(_SCHEMA)

    def journal_mode(self) -> str:
        """The database's journal mode (``"wal"``), for tests and diagnostics."""
        with self._lock:
            row = self._connection().execute("PRAGMA journal_mode").fetchone()
        return str(row[0])

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("cache is closed")
        return self._conn

    def _get(self, key: str) -> Generation | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT text, prompt_tokens, completion_tokens, finish_reason, tool_calls"
                    " FROM responses WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
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

    def _put(self, key: str, generation: Generation) -> None:
        values: tuple[Any, ...] = (
            key,
            self.name,
            generation.text,
            generation.prompt_tokens,
            generation.completion_tokens,
            generation.latency_s,
            generation.finish_reason,
            json.dumps(generation.tool_calls),
            time.time(),
        )
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", values
            )

    async def _lookup(self, key: str) -> Generation | None:
        try:
            return await asyncio.to_thread(self._get, key)
        except sqlite3.Error as error:
            # A broken cache must not fail the run: the model can still answer.
            log.warning("response cache %s: lookup failed (%s); calling the model", self.path, error)
            return None

    async def _store(self, key: str, generation: Generation) -> None:
        try:
            await asyncio.to_thread(self._put, key, generation)
        except sqlite3.Error as error:
            log.warning("response cache %s: store failed (%s)", self.path, error)

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
        stored = await self._lookup(key)
        if stored is not None:
            self.hits += 1
            stored.latency_s = time.perf_counter() - start
            return stored
        joined = await self._join(key, start)  # someone may have started while we looked
        if joined is not None:
            return joined
        return await self._call(key, request)

    async def _call(self, key: str, request: GenerationRequest) -> Generation:
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        self.misses += 1
        try:
            generation = await self.inner.generate(request)
            await self._store(key, generation)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: nobody may be waiting
            raise
        except BaseException:  # cancelled: waiters retry on their own
            future.cancel()
            raise
        else:
            future.set_result(generation)
            return generation
        finally:
            del self._inflight[key]

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
