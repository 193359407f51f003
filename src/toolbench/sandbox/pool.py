"""A pool of reusable worker processes that run model-written programs.

Programs are hostile input, so they never run in the harness process: each goes to a worker
process (``_process.py`` starts it, ``_worker.py`` is what runs inside), and only the program
text goes out and JSON text comes back. Workers are reused for thousands of programs, which is
what makes the sandbox fast; one that times out, dies or misbehaves is killed and replaced on
the next demand. Callers get an ``ExecResult`` for anything a program does, and a
``SandboxError`` only when the sandbox itself fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.package import PACKAGE_DIR
from toolbench.sandbox import isolation
from toolbench.sandbox._process import SandboxError, WorkerProcess
from toolbench.sandbox._protocol import INTERNAL, KINDS, ProtocolError, parse_result
from toolbench.sandbox.files import FILES_HOOK, FileCache
from toolbench.sandbox.host import HostHandler, answerer_for
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import NETWORK_FLAG, WorldFactory, factory_function, factory_ref

DEFAULT_LIMITS = Limits()
MAX_PROGRAM_CHARS = 100_000
GRACE_S = 1.0  # the worker's own timers and its template's kill get this long before ours

__all__ = ["KINDS", "ExecResult", "HostHandler", "SandboxError", "SandboxPool"]


@dataclass(frozen=True)
class ExecResult:
    ok: bool
    state: Any  # JSON data from world.snapshot() when ok, else None
    error: str | None  # one line, "TypeName: message" or "kind: explanation"
    kind: str  # "ok" | "rejected" | "error" | "timeout" | "memory" | "output_limit" | "worker_died"
    stdout: str = ""  # captured print() output, truncated
    duration_s: float = 0.0


WORKDIR_PREFIX = "toolbench-sandbox-"


def _remove_orphaned_workdirs() -> None:
    """Remove empty work dirs left by harness processes that were killed (kill -9 skips cleanup).

    Each dir is named after the pid of the process that made it; a dir whose process is gone is
    an orphan. Only empty dirs are removed, so nothing of anyone else's is ever deleted.
    """
    root = Path(tempfile.gettempdir())
    for folder in root.glob(f"{WORKDIR_PREFIX}*-*"):
        pid_text = folder.name[len(WORKDIR_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _process_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            folder.rmdir()  # fails, harmlessly, unless the dir is empty


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Resources:
    """Everything that must be released even if the pool is garbage-collected unclosed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[WorkerProcess] = set()
        self.workdir: str | None = None
        self.closed = False

    def get_workdir(self) -> str:
        with self.lock:
            if self.closed:
                raise SandboxError("the sandbox pool is closed")
            if self.workdir is None:
                _remove_orphaned_workdirs()
                self.workdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
                os.chmod(self.workdir, 0o555)  # programs cannot write here even if they got out
            return self.workdir

    def shutdown(self) -> None:
        with self.lock:
            self.closed = True
            workers, self.live = list(self.live), set()
            workdir, self.workdir = self.workdir, None
        for worker in workers:
            worker.kill()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


_START = object()  # what ``_reserve`` says when the caller may start a new worker
_Profile = tuple[bool, frozenset[str]]


class SandboxPool:
    """Runs programs in up to ``workers`` processes (default: one per CPU), started lazily.

    A default-sized pool adds a worker once a program has a ``host``: its waits on the harness
    leave a CPU idle (tabletop, 2 cores: idle ~1.8 -> ~0.9 ms a sample). A given size is kept.

    ``run`` is thread-safe and blocks; ``arun`` is the same for asyncio callers, in the event
    loop's own thread (a thread hand-off per program cost more harness CPU than the program's
    whole round trip). A program failure is an ``ExecResult`` with ``ok=False``, whatever the
    worker did or said; only sandbox failures (a worker that will not start, a broken world
    factory, a closed pool) raise ``SandboxError``.
    """

    def __init__(self, workers: int | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._host_spare = workers is None  # see the class docstring
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        self.limits = limits
        self._res = _Resources()
        self._cond = threading.Condition(self._res.lock)
        self._idle: list[WorkerProcess] = []
        # asyncio callers waiting for a worker, woken one at a time (any loop, any thread)
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self._starting = 0
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        self._files = FileCache()
        self._code_dirs: set[str] = {_package_root("toolbench")}
        self._seccomp: list[bool] = []
        self._network_used = False
        self._finalizer = weakref.finalize(self, self._res.shutdown)

    # -- public API -----------------------------------------------------------------------

    @property
    def isolation(self) -> dict[str, Any]:
        """What isolates this pool's workers, for run.json: level, missing layers, a line."""
        found = isolation.detect()
        seccomp = all(self._seccomp) if self._seccomp else None
        described = found.describe(seccomp)
        if self._network_used and found.namespaces:
            described["level"] = "reduced"
            described["missing"] = [*described["missing"], "namespaces for live-API programs"]
            described["summary"] = (
                "reduced: live-API programs run with the host's network and files "
                "(seccomp and the in-process policy still apply)"
            )
        return described

    def run(self, factory: WorldFactory, program: str) -> ExecResult:
        prepared = self._prepare(factory, program)
        if isinstance(prepared, ExecResult):
            return prepared
        payload, profile = prepared
        worker = self._acquire(profile)
        start = time.perf_counter()
        healthy = False
        try:
            files = self._file_messages(worker, factory)
            reply = worker.call(files, payload, self.limits.wall_s + GRACE_S)
            result, healthy = self._result(reply, start)
            return result
        except _Internal as exc:
            raise SandboxError(str(exc)) from None
        except ProtocolError as exc:
            return self._broke(exc, start)
        except (EOFError, OSError):
            return self._died(worker.exit_description(), start)
        finally:
            if not self._return(worker, healthy):
                worker.kill()

    async def arun(
        self, factory: WorldFactory, program: str, host: HostHandler | None = None
    ) -> ExecResult:
        """``run`` in the event loop's thread: the same messages, checks and limits (the
        worker's socket is watched with ``add_reader`` and the deadline is a loop timer), and
        a caller cancelled while waiting for a worker or mid-program leaves the pool whole
        (a worker caught mid-program is replaced: its late reply must not reach anyone).

        ``host`` answers the program's host calls while it waits (same worker: see host.py);
        each call is read strictly (``parse_host_call``) and counted against the limits."""
        prepared = self._prepare(factory, program)
        if isinstance(prepared, ExecResult):
            return prepared
        payload, profile = prepared
        if host is not None and self._host_spare:
            with self._cond:
                if self._host_spare:
                    self._host_spare = False
                    self.workers += 1
        worker = await self._aacquire(profile)
        start = time.perf_counter()
        healthy = False
        try:
            files = self._file_messages(worker, factory)
            answerer = None if host is None else answerer_for(host, self.limits.max_output_bytes)
            reply = await worker.acall(files, payload, self.limits.wall_s + GRACE_S, answerer)
            result, healthy = self._result(reply, start)
            return result
        except _Internal as exc:
            raise SandboxError(str(exc)) from None
        except ProtocolError as exc:
            return self._broke(exc, start)
        except (EOFError, OSError):
            return self._died(await worker.aexit_description(), start)
        finally:
            if not self._return(worker, healthy):
                # reaping can take a moment: not in the loop's thread, and not waited for
                asyncio.get_running_loop().run_in_executor(None, worker.kill)

    def run_many(self, factory: WorldFactory, programs: Sequence[str]) -> list[ExecResult]:
        """Run programs in parallel across the workers; results in the order given."""
        if len(programs) <= 1:
            return [self.run(factory, program) for program in programs]
        executor = self._get_executor()
        return list(executor.map(lambda program: self.run(factory, program), programs))

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._idle.clear()
            self._cond.notify_all()
            while self._waiters:  # each wakes up to find the pool closed
                self._wake_one()
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

    def _prepare(self, factory: WorldFactory, program: str) -> tuple[bytes, _Profile] | ExecResult:
        """(payload, worker profile), or the result of a program refused before it is sent."""
        ref = factory_ref(factory)  # microseconds; partials differ per sample, so no cache
        if not isinstance(program, str):
            raise TypeError("program must be a str")
        if len(program) > MAX_PROGRAM_CHARS:
            message = f"SyntaxError: program is longer than {MAX_PROGRAM_CHARS} characters"
            return ExecResult(False, None, message, "rejected")
        payload = (ref + "\0" + program).encode("utf-8", "surrogatepass")
        return payload, self._profile(factory)

    def _result(self, reply: bytes | None, start: float) -> tuple[ExecResult, bool]:
        """(the result, whether the worker may be reused): one that did not answer in time is
        replaced, since it may still be running the program."""
        duration = time.perf_counter() - start
        if reply is None:
            error = f"timeout: program ran longer than {self.limits.wall_s} s"
            return ExecResult(False, None, error, "timeout", duration_s=duration), False
        return self._parse(reply, duration), True

    def _broke(self, exc: ProtocolError, start: float) -> ExecResult:
        error = f"worker_died: the sandbox worker broke the protocol ({exc})"
        return ExecResult(False, None, error, "worker_died", duration_s=self._since(start))

    def _died(self, description: str, start: float) -> ExecResult:
        error = f"worker_died: the worker process {description}"
        return ExecResult(False, None, error, "worker_died", duration_s=self._since(start))

    def _parse(self, reply: bytes, duration: float) -> ExecResult:
        """The worker's reply read strictly; ``ProtocolError`` for anything off-schema."""
        parsed = parse_result(reply, self.limits.max_output_bytes)
        if parsed.kind == INTERNAL:  # the worker is replaced: it may not be telling the truth
            raise _Internal(f"sandbox worker: {parsed.error}")
        if parsed.kind == "ok":
            return ExecResult(True, parsed.state, None, "ok", parsed.stdout, duration)
        return ExecResult(False, None, parsed.error, parsed.kind, parsed.stdout, duration)

    def _profile(self, factory: WorldFactory) -> _Profile:
        """(network, code folders) a worker for this factory needs; new code folders retire
        the running workers, whose file system view lacks them."""
        module = sys.modules.get(factory_function(factory).__module__)
        network = getattr(module, NETWORK_FLAG, False) is True
        root = _package_root(getattr(module, "__name__", "toolbench"))
        with self._cond:
            if root not in self._code_dirs:
                self._code_dirs.add(root)
                for worker in self._idle:
                    self._res.live.discard(worker)
                    worker.kill()
                self._idle.clear()
            return network, frozenset(self._code_dirs)

    def _file_messages(self, worker: WorkerProcess, factory: WorldFactory) -> list[bytes]:
        """The data files this world reads that the worker does not have yet."""
        function = factory_function(factory)
        hook = getattr(sys.modules.get(function.__module__), FILES_HOOK, None)
        if not callable(hook):
            return []
        args = factory.args if isinstance(factory, functools.partial) else ()
        kwargs = factory.keywords if isinstance(factory, functools.partial) else {}
        messages = []
        for path in hook(*args, **kwargs):
            try:
                content, digest = self._files.get(path)
            except (OSError, ValueError) as exc:
                raise SandboxError(f"a world's data file cannot be read: {exc}") from None
            message = worker.file_message(path, content, digest)
            if message is not None:
                messages.append(message)
        return messages

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

    def _take_idle(self, profile: _Profile) -> WorkerProcess | None:
        """An idle worker of this profile; at capacity, an idle one of another is retired."""
        for i in range(len(self._idle) - 1, -1, -1):
            if self._idle[i].profile == profile:
                return self._idle.pop(i)
        if self._idle and len(self._res.live) + self._starting >= self.workers:
            other = self._idle.pop(0)
            self._res.live.discard(other)
            other.kill()
        return None

    def _reserve(self, profile: _Profile) -> WorkerProcess | object | None:
        """Under the lock: an idle worker, ``_START`` (a slot to start one in is reserved),
        or None (at capacity: wait for a release)."""
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        idle = self._take_idle(profile)
        if idle is not None:
            return idle
        if len(self._res.live) + self._starting < self.workers:
            self._starting += 1
            return _START
        return None

    def _acquire(self, profile: _Profile) -> WorkerProcess:
        with self._cond:
            while (got := self._reserve(profile)) is None:
                self._cond.wait()
        if isinstance(got, WorkerProcess):
            return got
        return self._launch(profile)

    async def _aacquire(self, profile: _Profile) -> WorkerProcess:
        """``_acquire`` for the event loop: waiting for a release is a future, starting a
        worker (seconds: interpreter start, handshake) runs in a thread."""
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                got = self._reserve(profile)
                if got is None:
                    waiter: asyncio.Future[None] = loop.create_future()
                    self._waiters.append((loop, waiter))
            if isinstance(got, WorkerProcess):
                return got
            if got is _START:
                return await self._astart(profile)
            try:
                await waiter
            except asyncio.CancelledError:
                with self._cond:
                    if (loop, waiter) in self._waiters:
                        self._waiters.remove((loop, waiter))
                    else:  # it was woken: pass the wake-up on, or a worker may sit idle
                        self._wake_one()
                raise

    async def _astart(self, profile: _Profile) -> WorkerProcess:
        """Start a worker in a thread; one started for a caller who was cancelled meanwhile
        goes to the idle list rather than being lost."""
        started = asyncio.get_running_loop().run_in_executor(None, self._launch, profile)
        try:
            return await asyncio.shield(started)
        except asyncio.CancelledError:
            started.add_done_callback(self._adopt)
            raise

    def _adopt(self, started: asyncio.Future[WorkerProcess]) -> None:
        if started.cancelled() or started.exception() is not None:
            return
        worker = started.result()
        if not self._return(worker, True):
            worker.kill()

    def _launch(self, profile: _Profile) -> WorkerProcess:
        """Start a worker in the slot ``_reserve`` reserved (blocks: run it in a thread)."""
        worker: WorkerProcess | None = None
        try:
            worker = self._start(profile)
        finally:
            with self._cond:
                self._starting -= 1
                if worker is not None and not self._closed:
                    self._res.live.add(worker)
                self._notify()
        assert worker is not None
        if self._closed:
            worker.kill()
            raise SandboxError("the sandbox pool is closed")
        return worker

    def _start(self, profile: _Profile) -> WorkerProcess:
        network, code_dirs = profile
        self._network_used = self._network_used or network
        try:
            found = isolation.detect()
        except isolation.IsolationUnavailable as exc:
            raise SandboxError(str(exc)) from None
        masked = isolation.masked_data_dirs(code_dirs) if found.namespaces else []
        worker = WorkerProcess(
            self.limits, self._res.get_workdir(), found, sorted(code_dirs), masked, network
        )
        worker.profile = profile
        seccomp = worker.facts.get("seccomp") is True
        with self._cond:
            self._seccomp.append(seccomp)
        isolation.warn_once(found, seccomp if found.level != "none" else None)
        return worker

    def _return(self, worker: WorkerProcess, healthy: bool) -> bool:
        """Give a worker back; False if it must now be killed (by the caller, outside the
        lock: reaping a process can take a moment)."""
        with self._cond:
            keep = healthy and not self._closed and worker in self._res.live
            if keep:
                self._idle.append(worker)
            else:
                self._res.live.discard(worker)
            self._notify()
        return keep

    def _notify(self) -> None:
        """Under the lock: a worker or a slot came free; wake one waiter of each kind (a
        waiter that finds nothing waits again, so a spare wake-up costs only a retry)."""
        self._cond.notify()
        self._wake_one()

    def _wake_one(self) -> None:
        """Under the lock: wake the first asyncio waiter still waiting."""
        while self._waiters:
            loop, waiter = self._waiters.popleft()
            if waiter.done():  # cancelled
                continue
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                waiter.set_result(None)
                return
            try:
                loop.call_soon_threadsafe(_wake, waiter)
                return
            except RuntimeError:  # that loop is closed: its waiter is gone with it
                continue


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Internal(Exception):
    """A worker reported that harness code (a world factory) failed."""


def _package_root(module_name: str) -> str:
    """The folder of a module's top-level package (or the module's own folder)."""
    top = module_name.partition(".")[0]
    module = sys.modules.get(top)
    path = getattr(module, "__file__", None) if module is not None else None
    if not path:
        return os.path.abspath(PACKAGE_DIR)
    folder = os.path.dirname(os.path.abspath(str(path)))
    return folder
