"""A pool of reusable worker processes that run model-written programs.

Programs are hostile input, so they never run in the harness process: each goes to a worker
(``_worker.py``) started as a fresh interpreter by fork+exec, never a bare fork of this
threaded, asyncio-running process. We start workers with ``subprocess`` rather than
``multiprocessing.Process`` because spawn would hand them our environment (API keys) and re-run
the harness's ``__main__`` inside them; here a worker gets a clean environment, an empty
read-only working directory and the parent's ``sys.path``, and talks over a
``multiprocessing`` socket ``Connection``. Only small byte strings cross it: the program going
out, JSON text coming back (``recv_bytes`` with a size cap; nothing is unpickled).

Workers are reused for thousands of programs; one that times out, dies or misbehaves is killed
and replaced on the next demand.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

from toolbench.sandbox._worker import FAILED, IMPORTED, LOADING, READY
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import WorldFactory

KINDS = frozenset(
    ("ok", "rejected", "error", "timeout", "memory", "output_limit", "worker_died")
)
MAX_PROGRAM_CHARS = 100_000
GRACE_S = 0.5  # the worker's own wall timer gets this long to answer before we kill it
STARTUP_TIMEOUT_S = 60.0  # interpreter start, or importing a factory's module
_BOOT = """\
import json, os, sys
from multiprocessing.connection import Connection
conn = Connection(os.dup(0))
try:
    config = json.loads(sys.argv[1])
    sys.path[:] = config["path"]
    from toolbench.sandbox._worker import main
except BaseException as exc:
    conn.send_bytes(b"E" + repr(exc).encode("utf-8", "replace"))
    raise SystemExit(1)
main(conn, config)
"""


class SandboxError(RuntimeError):
    """The sandbox itself failed (worker would not start, world factory broke): not a program
    error, so callers should treat it as an infrastructure failure."""


@dataclass(frozen=True)
class ExecResult:
    ok: bool
    state: Any  # JSON data from world.snapshot() when ok, else None
    error: str | None  # one line, "TypeName: message" or "kind: explanation"
    kind: str  # "ok" | "rejected" | "error" | "timeout" | "memory" | "output_limit" | "worker_died"
    stdout: str = ""  # captured print() output, truncated
    duration_s: float = 0.0


def _factory_ref(factory: WorldFactory) -> str:
    """'module:qualname' for a module-level function, which is all a worker can import."""
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        raise ValueError(
            f"world factory {factory!r} must be a module-level function in an importable module"
        )
    return f"{module}:{qualname}"


class _Worker:
    """One worker process and our end of its socket."""

    def __init__(self, limits: Limits, workdir: str) -> None:
        ours, theirs = Pipe(duplex=True)
        config = {"limits": asdict(limits), "path": [os.path.abspath(p) for p in sys.path]}
        env = {
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "0",  # reproducible set/dict-of-str order across workers
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "HOME": workdir,
            "TMPDIR": workdir,
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", "-c", _BOOT, json.dumps(config)],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=env,
                close_fds=True,
                start_new_session=True,  # terminal signals (Ctrl-C) go to the harness only
            )
        finally:
            theirs.close()
        self.conn: Connection = ours
        self.poller = select.poll()
        self.poller.register(ours.fileno(), select.POLLIN)
        self.max_reply = 8 * limits.max_output_bytes + 65536
        try:
            reply = self.receive(time.monotonic() + STARTUP_TIMEOUT_S)
        except (EOFError, OSError):
            reply = None
        if reply != READY:
            self.kill()
            if reply is None:
                reason = f"it {self.exit_description()}"
            elif reply.startswith(FAILED):
                reason = reply[1:].decode("utf-8", "replace")
            else:
                reason = "unexpected first message"
            raise SandboxError(f"sandbox worker failed to start: {reason}")

    def receive(self, deadline: float) -> bytes | None:
        """The next message, or None if none came by ``deadline`` (monotonic seconds)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self.poller.poll(max(1, int(remaining * 1000) + 1)):
                return self.conn.recv_bytes(self.max_reply)

    def call(self, payload: bytes, budget_s: float) -> bytes | None:
        """Send one program, return its reply or None on timeout. EOFError/OSError: it died."""
        self.conn.send_bytes(payload)
        deadline = time.monotonic() + budget_s
        while True:
            reply = self.receive(deadline)
            if reply == LOADING:
                deadline = time.monotonic() + STARTUP_TIMEOUT_S
            elif reply == IMPORTED:
                deadline = time.monotonic() + budget_s
            else:
                return reply

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:  # pragma: no cover - already reaped
            pass
        self.proc.wait()  # reap: no zombies
        self.conn.close()

    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"


class _Resources:
    """Everything that must be released even if the pool is garbage-collected unclosed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[_Worker] = set()
        self.workdir: str | None = None

    def get_workdir(self) -> str:
        with self.lock:
            if self.workdir is None:
                self.workdir = tempfile.mkdtemp(prefix="toolbench-sandbox-")
                os.chmod(self.workdir, 0o555)  # programs cannot write here even if they got out
            return self.workdir

    def shutdown(self) -> None:
        with self.lock:
            workers, self.live = list(self.live), set()
            workdir, self.workdir = self.workdir, None
        for worker in workers:
            worker.kill()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


class SandboxPool:
    """Runs programs in up to ``workers`` processes (default: one per CPU), started lazily.

    ``run`` is thread-safe and blocks; ``arun`` is the same for asyncio callers. A program
    failure is an ``ExecResult`` with ``ok=False``; only sandbox failures (a worker that will
    not start, a broken world factory, a closed pool) raise ``SandboxError``.
    """

    def __init__(self, workers: int | None = None, limits: Limits = Limits()) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        self.limits = limits
        self._res = _Resources()
        self._cond = threading.Condition(self._res.lock)
        self._idle: list[_Worker] = []
        self._starting = 0
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        self._refs: dict[Any, str] = {}
        self._finalizer = weakref.finalize(self, self._res.shutdown)

    # -- public API -----------------------------------------------------------------------

    def run(self, factory: WorldFactory, program: str) -> ExecResult:
        ref = self._refs.get(factory) or self._remember(factory)
        if not isinstance(program, str):
            raise TypeError("program must be a str")
        if len(program) > MAX_PROGRAM_CHARS:
            message = f"SyntaxError: program is longer than {MAX_PROGRAM_CHARS} characters"
            return ExecResult(False, None, message, "rejected")
        payload = (ref + "\0" + program).encode("utf-8", "surrogatepass")
        worker = self._acquire()
        start = time.perf_counter()
        healthy = False
        try:
            reply = worker.call(payload, self.limits.wall_s + GRACE_S)
            duration = time.perf_counter() - start
            if reply is None:
                error = f"timeout: program ran longer than {self.limits.wall_s} s"
                return ExecResult(False, None, error, "timeout", duration_s=duration)
            try:
                result = self._parse(reply, duration)
            except (ValueError, TypeError):
                error = "worker_died: the worker process sent a malformed reply"
                return ExecResult(False, None, error, "worker_died", duration_s=duration)
            healthy = True
            return result
        except (EOFError, OSError):
            error = f"worker_died: the worker process {worker.exit_description()}"
            return ExecResult(False, None, error, "worker_died", duration_s=self._since(start))
        finally:
            self._release(worker, healthy)

    async def arun(self, factory: WorldFactory, program: str) -> ExecResult:
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._get_executor(), self.run, factory, program)

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._idle.clear()
            self._cond.notify_all()
            executor, self._executor = self._executor, None
        self._finalizer()  # kills every worker (busy ones too) and removes the workdir
        if executor is not None:
            executor.shutdown(wait=False)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------

    @staticmethod
    def _since(start: float) -> float:
        return time.perf_counter() - start

    def _remember(self, factory: WorldFactory) -> str:
        ref = _factory_ref(factory)
        self._refs[factory] = ref
        return ref

    def _parse(self, reply: bytes, duration: float) -> ExecResult:
        head, _, body = reply.decode("utf-8", "surrogatepass").partition("\n")
        kind, error, stdout = json.loads(head)
        if kind == "internal":
            raise SandboxError(f"sandbox worker: {error}")
        if kind not in KINDS or not isinstance(stdout, str):
            raise ValueError("malformed reply from sandbox worker")
        if kind == "ok":
            return ExecResult(True, json.loads(body), None, "ok", stdout, duration)
        return ExecResult(False, None, str(error), kind, stdout, duration)

    def _get_executor(self) -> ThreadPoolExecutor:
        with self._cond:
            if self._closed:
                raise SandboxError("the sandbox pool is closed")
            if self._executor is None:
                # Two threads per worker: one waits on a program while the other hands over.
                self._executor = ThreadPoolExecutor(
                    max_workers=2 * self.workers, thread_name_prefix="sandbox"
                )
            return self._executor

    def _acquire(self) -> _Worker:
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                if self._idle:
                    return self._idle.pop()
                if len(self._res.live) + self._starting < self.workers:
                    self._starting += 1
                    break
                self._cond.wait()
        worker: _Worker | None = None
        try:
            worker = _Worker(self.limits, self._res.get_workdir())
        finally:
            with self._cond:
                self._starting -= 1
                if worker is not None and not self._closed:
                    self._res.live.add(worker)
                self._cond.notify()
        assert worker is not None
        if self._closed:
            worker.kill()
            raise SandboxError("the sandbox pool is closed")
        return worker

    def _release(self, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            keep = healthy and not self._closed and worker in self._res.live
            if keep:
                self._idle.append(worker)
            else:
                self._res.live.discard(worker)
            self._cond.notify()
        if not keep:
            worker.kill()
