"""A memo of deterministic executions, so a rerun does not execute the same program again.

Simulators are deterministic functions of (simulator code, sandbox rules, limits, program), so
an execution's result can be remembered under a hash of exactly those. Results that depend on
the machine's load (timeouts, memory, dead workers) are never remembered. The memo lives next to
the response cache and is switched off with it (``--no-cache``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Protocol

from toolbench.package import __version__
from toolbench.sandbox.host import HostHandler
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.pool import ExecResult, SandboxPool
from toolbench.sandbox.world import WorldFactory, factory_function, factory_ref

# Outcomes that are a function of the program alone; the rest depend on the machine.
DETERMINISTIC_KINDS = frozenset({"ok", "error", "rejected", "output_limit"})


class ProgramRunner(Protocol):
    """What tasks need from the sandbox: run a program in a fresh world of a factory."""

    def run(self, factory: WorldFactory, program: str) -> ExecResult: ...

    async def arun(
        self, factory: WorldFactory, program: str, host: HostHandler | None = None
    ) -> ExecResult: ...

    def run_many(self, factory: WorldFactory, programs: Sequence[str]) -> list[ExecResult]: ...


def _code_digest(module_name: str, limits: Limits) -> str:
    """Hash of the simulator's package (every .py file beside and below the factory's module),
    the sandbox package and the limits."""
    hasher = hashlib.sha256(f"{__version__}|{limits}".encode())
    module = sys.modules[module_name]
    simulator_dir = Path(str(module.__file__)).parent
    sandbox_dir = Path(__file__).parent
    for path in [*sorted(simulator_dir.rglob("*.py")), *sorted(sandbox_dir.glob("*.py"))]:
        hasher.update(path.read_bytes())
    return hasher.hexdigest()


class MemoizedSandbox:
    """A ``SandboxPool`` that first looks in the memo (memory, then SQLite on disk)."""

    def __init__(self, pool: SandboxPool, path: Path, limits: Limits) -> None:
        self._pool = pool
        self._limits = limits
        self._memory: dict[str, ExecResult] = {}
        self._digests: dict[str, str] = {}  # module name -> code digest
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, result TEXT)")
        self.hits = 0
        self.misses = 0

    def _key(self, factory: WorldFactory, program: str) -> str:
        """Code digest + the factory with its arguments (which sample's world) + the program."""
        module = factory_function(factory).__module__
        digest = self._digests.get(module)
        if digest is None:
            digest = self._digests[module] = _code_digest(module, self._limits)
        text = f"{digest}\0{factory_ref(factory)}\0{program}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _lookup(self, key: str) -> ExecResult | None:
        with self._lock:
            found = self._memory.get(key)
            if found is None:
                row = self._db.execute("SELECT result FROM runs WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    found = self._memory[key] = ExecResult(**json.loads(row[0]))
            if found is not None:
                self.hits += 1
            return found

    def _store(self, key: str, result: ExecResult) -> None:
        if result.kind not in DETERMINISTIC_KINDS:
            return
        with self._lock:
            self.misses += 1
            self._memory[key] = result
            self._db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?)", (key, json.dumps(asdict(result)))
            )

    @staticmethod
    def _remembers(factory: WorldFactory) -> bool:
        module = sys.modules.get(factory_function(factory).__module__)
        return getattr(module, "DETERMINISTIC", True) is not False

    def run(self, factory: WorldFactory, program: str) -> ExecResult:
        if not self._remembers(factory):
            return self._pool.run(factory, program)
        key = self._key(factory, program)
        found = self._lookup(key)
        if found is not None:
            return found
        result = self._pool.run(factory, program)
        self._store(key, result)
        return result

    async def arun(
        self, factory: WorldFactory, program: str, host: HostHandler | None = None
    ) -> ExecResult:
        # A program that asks the host depends on the answers too: never remembered (its
        # model calls are cached by the response cache, so a rerun costs executions only).
        if host is not None or not self._remembers(factory):
            return await self._pool.arun(factory, program, host)
        key = self._key(factory, program)
        found = self._lookup(key)
        if found is not None:
            return found
        result = await self._pool.arun(factory, program)
        self._store(key, result)
        return result

    def run_many(self, factory: WorldFactory, programs: Sequence[str]) -> list[ExecResult]:
        if not self._remembers(factory):
            return self._pool.run_many(factory, programs)
        keys = [self._key(factory, program) for program in programs]
        results: list[ExecResult | None] = [self._lookup(key) for key in keys]
        missing = [i for i, result in enumerate(results) if result is None]
        for i, result in zip(
            missing, self._pool.run_many(factory, [programs[i] for i in missing]), strict=True
        ):
            self._store(keys[i], result)
            results[i] = result
        return [r for r in results if r is not None]

    def close(self) -> None:
        with self._lock:
            self._db.close()
