"""A pool of reusable worker processes that run model-written programs.

Programs are hostile input, so they never run in the harness process: each goes to a worker
process (``_process.py`` starts it, ``_worker.py`` is what runs inside), and only the program
text goes out and JSON text comes back. Workers are reused for thousands of programs, which is
what makes the sandbox fast; one that times out, dies or misbehaves is killed and replaced on
the next demand. Callers get an ``ExecResult`` for anything a program does, and a
``SandboxError`` only when the sandbox itself fails.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.sandbox import isolation
from toolbench.sandbox._process import SandboxError, WorkerProcess
from toolbench.sandbox._protocol import INTERNAL, KINDS, ProtocolError, parse_result
from toolbench.sandbox.files import FILES_HOOK, FileCache
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import NETWORK_FLAG, WorldFactory, factory_function, factory_ref

DEFAULT_LIMITS = Limits()
MAX_PROGRAM_CHARS = 100_000
GRACE_S = 1.0  # the worker's own timers and its template's kill get this long before ours

__all__ = ["KINDS", "ExecResult", "SandboxError", "SandboxPool"]


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


class SandboxPool:
    """Runs programs in up to ``workers`` processes (default: one per CPU), started lazily.

    ``run`` is thread-safe and blocks; ``arun`` is the same for asyncio callers. A program
    failure is an ``ExecResult`` with ``ok=False``, whatever the worker did or said; only
    sandbox failures (a worker that will not start, a broken world factory, a closed pool)
    raise ``SandboxError``.
    """

    def __init__(self, workers: int | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        self.limits = limits
        self._res = _Resources()
        self._cond = threading.Condition(self._res.lock)
        self._idle: list[WorkerProcess] = []
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
        ref = factory_ref(factory)  # microseconds; partials differ per sample, so no cache
        if not isinstance(program, str):
            raise TypeError("program must be a str")
        if len(program) > MAX_PROGRAM_CHARS:
            message = f"SyntaxError: program is longer than {MAX_PROGRAM_CHARS} characters"
            return ExecResult(False, None, message, "rejected")
        payload = (ref + "\0" + program).encode("utf-8", "surrogatepass")
        profile = self._profile(factory)
        worker = self._acquire(profile)
        start = time.perf_counter()
        healthy = False
        try:
            self._send_files(worker, factory)
            reply = worker.call(payload, self.limits.wall_s + GRACE_S)
            duration = time.perf_counter() - start
            if reply is None:
                error = f"timeout: program ran longer than {self.limits.wall_s} s"
                return ExecResult(False, None, error, "timeout", duration_s=duration)
            result = self._parse(reply, duration)
            healthy = True
            return result
        except _Internal as exc:
            raise SandboxError(str(exc)) from None
        except ProtocolError as exc:
            error = f"worker_died: the sandbox worker broke the protocol ({exc})"
            return ExecResult(False, None, error, "worker_died", duration_s=self._since(start))
        except (EOFError, OSError):
            error = f"worker_died: the worker process {worker.exit_description()}"
            return ExecResult(False, None, error, "worker_died", duration_s=self._since(start))
        finally:
            self._release(worker, healthy)

    async def arun(self, factory: WorldFactory, program: str) -> ExecResult:
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._get_executor(), self.run, factory, program)

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

    def _parse(self, reply: bytes, duration: float) -> ExecResult:
        """The worker's reply read strictly; ``ProtocolError`` for anything off-schema."""
        parsed = parse_result(reply, self.limits.max_output_bytes)
        if parsed.kind == INTERNAL:  # the worker is replaced: it may not be telling the truth
            raise _Internal(f"sandbox worker: {parsed.error}")
        if parsed.kind == "ok":
            return ExecResult(True, parsed.state, None, "ok", parsed.stdout, duration)
        return ExecResult(False, None, parsed.error, parsed.kind, parsed.stdout, duration)

    def _profile(self, factory: WorldFactory) -> tuple[bool, frozenset[str]]:
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

    def _send_files(self, worker: WorkerProcess, factory: WorldFactory) -> None:
        function = factory_function(factory)
        hook = getattr(sys.modules.get(function.__module__), FILES_HOOK, None)
        if not callable(hook):
            return
        args = factory.args if isinstance(factory, functools.partial) else ()
        kwargs = factory.keywords if isinstance(factory, functools.partial) else {}
        for path in hook(*args, **kwargs):
            try:
                content, digest = self._files.get(path)
            except (OSError, ValueError) as exc:
                raise SandboxError(f"a world's data file cannot be read: {exc}") from None
            worker.send_file(path, content, digest)

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

    def _take_idle(self, profile: tuple[bool, frozenset[str]]) -> WorkerProcess | None:
        """An idle worker of this profile; at capacity, an idle one of another is retired."""
        for i in range(len(self._idle) - 1, -1, -1):
            if self._idle[i].profile == profile:
                return self._idle.pop(i)
        if self._idle and len(self._res.live) + self._starting >= self.workers:
            other = self._idle.pop(0)
            self._res.live.discard(other)
            other.kill()
        return None

    def _acquire(self, profile: tuple[bool, frozenset[str]]) -> WorkerProcess:
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                idle = self._take_idle(profile)
                if idle is not None:
                    return idle
                if len(self._res.live) + self._starting < self.workers:
                    self._starting += 1
                    break
                self._cond.wait()
        worker: WorkerProcess | None = None
        try:
            worker = self._start(profile)
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

    def _start(self, profile: tuple[bool, frozenset[str]]) -> WorkerProcess:
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

    def _release(self, worker: WorkerProcess, healthy: bool) -> None:
        with self._cond:
            keep = healthy and not self._closed and worker in self._res.live
            if keep:
                self._idle.append(worker)
            else:
                self._res.live.discard(worker)
            self._cond.notify()
        if not keep:
            worker.kill()


class _Internal(Exception):
    """A worker reported that harness code (a world factory) failed."""


def _package_root(module_name: str) -> str:
    """The folder of a module's top-level package (or the module's own folder)."""
    top = module_name.partition(".")[0]
    module = sys.modules.get(top)
    path = getattr(module, "__file__", None) if module is not None else None
    if not path:
        import toolbench

        path = toolbench.__file__
    folder = os.path.dirname(os.path.abspath(str(path)))
    return folder
