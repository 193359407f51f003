"""The sandbox worker process: runs one restricted program at a time, forever.

``pool.py`` starts this module in a fresh interpreter (never a fork of the harness) with an
empty environment and an empty, read-only working directory, and talks to it over one socket:

    parent -> worker   b"<module>:<factory>\\0<program source>"
    worker -> parent   b"r" once when ready; b"l" before and b"i" after importing a factory's
                       module for the first time (the parent allows extra time for that, and
                       the program's wall clock starts after it); then per program one reply:
                       b'["kind", "error" | null, "stdout"]\\n<state as JSON text>'

Only JSON text leaves the worker, so nothing the program builds is ever unpickled in the
parent. Limits live here in layers: rlimits for memory, files, forks and core dumps (set once);
CPU and wall timers per program that raise into Python code and keep re-firing if the program
swallows the exception; and the parent's kill for anything stuck in C code.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import signal
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from types import FrameType
from typing import Any

from toolbench.sandbox import audit, policy
from toolbench.sandbox._protocol import FAILED, IMPORTED, LOADING, READY
from toolbench.sandbox.codecache import CodeCache
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import PREPARE_HOOK, split_ref

_REFIRE_S = 0.05  # how soon an expired timer fires again if the program caught the first one
_FULL_GC_EVERY = 1000  # programs between full garbage collections
_MAX_DEPTH = 64  # nesting depth of a state the slow serializer still walks
_ENV_KEEP = {"LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING"}


class _Timeout(policy.SandboxInterrupt):
    pass


class _Timers:
    """Per-program CPU (ITIMER_PROF) and wall (ITIMER_REAL) limits.

    Python runs signal handlers between bytecodes, so the raised ``_Timeout`` stops any loop in
    Python code. Expiry is sticky: the timer re-fires every 50 ms and the result is a timeout
    however the program ends, so ``except BaseException: pass`` buys it nothing.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.armed = False
        self.expired: str | None = None
        signal.signal(signal.SIGPROF, self._fire)
        signal.signal(signal.SIGALRM, self._fire)

    def arm(self) -> None:
        self.expired = None
        self.armed = True
        signal.setitimer(signal.ITIMER_PROF, self.limits.cpu_s)
        signal.setitimer(signal.ITIMER_REAL, self.limits.wall_s)

    def disarm(self) -> None:
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)

    def message(self) -> str:
        if self.expired == "cpu":
            return f"timeout: program used more than {self.limits.cpu_s} s of CPU time"
        return f"timeout: program ran longer than {self.limits.wall_s} s"

    def _fire(self, signum: int, frame: FrameType | None) -> None:
        if not self.armed:
            return
        if self.expired is None:
            self.expired = "cpu" if signum == signal.SIGPROF else "wall"
        timer = signal.ITIMER_PROF if signum == signal.SIGPROF else signal.ITIMER_REAL
        signal.setitimer(timer, _REFIRE_S, _REFIRE_S)
        raise _Timeout(self.message())


def _harden(limits: Limits) -> None:
    """Process-wide limits, set once before any program runs; lowering hard limits is final."""
    for key in list(os.environ):  # the parent passes a clean env; this is belt and braces
        if key not in _ENV_KEEP:
            del os.environ[key]
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # file writes fail with EFBIG, not a crash
    megabytes = limits.memory_mb * 1024 * 1024
    for rlimit, value in (
        (resource.RLIMIT_AS, megabytes),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 32),
        (resource.RLIMIT_NPROC, 0),  # no fork(); root ignores this one
    ):
        try:
            resource.setrlimit(rlimit, (value, value))
        except (ValueError, OSError):
            _soft, hard = resource.getrlimit(rlimit)
            if hard == resource.RLIM_INFINITY or value < hard:
                resource.setrlimit(rlimit, (value, hard))
    warnings.simplefilter("ignore")  # SyntaxWarnings from program source would go nowhere


def _describe_value(value: Any) -> str:
    return f"<{type(value).__name__} object>"


def _plain(value: Any, depth: int) -> Any:
    """Exact JSON types only; anything else becomes '<Type object>' (keys too)."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return value
    if depth >= _MAX_DEPTH:
        return "<nested too deep>"
    if kind in (list, tuple):
        return [_plain(item, depth + 1) for item in value]
    if kind is dict:
        out = {}
        for key, item in value.items():
            if not (key is None or type(key) in (str, int, float, bool)):
                key = _describe_value(key)
            out[key] = _plain(item, depth + 1)
        return out
    return _describe_value(value)


def serialize_state(state: Any) -> str:
    """JSON text of a world state; non-JSON values become '<Type object>' instead of failing."""
    try:
        return json.dumps(state, default=_describe_value)
    except (TypeError, ValueError, RecursionError):  # odd keys, cycles, deep nesting
        return json.dumps(_plain(state, 0))


class Worker:
    def __init__(self, conn: Connection, limits: Limits) -> None:
        self.conn = conn
        self.limits = limits
        self.factories: dict[str, Callable[..., Any]] = {}
        self.code = CodeCache()
        self.runs = 0
        _harden(limits)
        audit.install()
        self.timers = _Timers(limits)
        # Collect cycles only where we choose: at the end of each program, under its timers,
        # so a hostile finalizer can never run (and hang) between programs.
        gc.disable()
        gc.freeze()

    def serve(self) -> None:
        while True:
            try:
                request = self.conn.recv_bytes()
            except (EOFError, OSError):
                return
            self.conn.send_bytes(self.handle(request))

    def handle(self, request: bytes) -> bytes:
        try:
            ref, _, source = request.decode("utf-8", "surrogatepass").partition("\0")
            name, args, kwargs = split_ref(ref)
            factory = self.factories.get(name) or self._load_factory(name)
            world = factory(*args, **kwargs)
            namespace = dict(world.namespace)
            allowed = frozenset(world.allowed_modules)
            writable = frozenset(world.writable_types)
            network = bool(world.network)
            snapshot = world.snapshot
            if any(type(k) is not str or k.startswith("_") for k in namespace):
                raise ValueError("world namespace names must not start with '_'")
        except Exception as exc:  # the harness's own code failed: not the program's fault
            return self._reply(
                "internal", f"world factory failed: {policy.describe_exception(exc)}"
            )
        del world
        output = policy.OutputBuffer(self.limits.max_output_bytes)
        try:
            self.timers.arm()
            try:
                with audit.network_allowed(network):
                    kind, error, state = self._execute(
                        source, namespace, allowed, writable, snapshot, output
                    )
            finally:
                namespace.clear()
                del snapshot
                # Under the timers, so finalizers of program garbage run (and stop) here. All of
                # a program's garbage is young; a full pass now and then catches the rest.
                self.runs += 1
                gc.collect(0 if self.runs % _FULL_GC_EVERY else 2)
        except _Timeout:  # fired again while we were formatting or cleaning up
            kind, error, state = "timeout", "", ""
        finally:
            self.timers.disarm()
        if self.timers.expired is not None:
            kind, error, state = "timeout", self.timers.message(), ""
        elif output.overflow:
            kind, error, state = "output_limit", self._print_limit_message(), ""
        return self._reply(kind, error, output.text(), state)

    def _execute(
        self,
        source: str,
        namespace: dict[str, Any],
        allowed: frozenset[str],
        writable: frozenset[type],
        snapshot: Callable[[], Any],
        output: policy.OutputBuffer,
    ) -> tuple[str, str | None, str]:
        codes, error = self.code.get(source)
        if codes is None:
            return "rejected", error, ""
        scope = policy.make_globals(namespace, allowed, output, writable)
        try:
            with audit.fence():
                for code in codes:
                    exec(code, scope)
        except MemoryError:
            scope.clear()  # free the program's memory before doing anything else
            return "memory", self._memory_message(), ""
        except policy.OutputLimitExceeded:
            return "output_limit", self._print_limit_message(), ""
        except _Timeout:
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit included
            return "error", policy.describe_exception(exc), ""
        finally:
            scope.clear()
        try:
            text = serialize_state(snapshot())
        except MemoryError:
            return "memory", self._memory_message(), ""
        except Exception as exc:
            return "error", f"world state could not be read: {policy.describe_exception(exc)}", ""
        if len(text) > self.limits.max_output_bytes:
            limit = self.limits.max_output_bytes
            return "output_limit", f"output_limit: world state is over {limit} bytes", ""
        return "ok", None, text

    def _print_limit_message(self) -> str:
        return f"output_limit: print output exceeded {self.limits.max_output_bytes} bytes"

    def _memory_message(self) -> str:
        return f"MemoryError: program exceeded the {self.limits.memory_mb} MB memory limit"

    def _load_factory(self, name: str) -> Callable[..., Any]:
        module_name, _, qualname = name.partition(":")
        self.conn.send_bytes(LOADING)
        module = importlib.import_module(module_name)
        prepare = getattr(module, PREPARE_HOOK, None)
        if callable(prepare):
            prepare()  # one-off imports and warm-up, outside every program's time limits
        obj: Any = module
        for part in qualname.split("."):
            obj = getattr(obj, part)
        self.factories[name] = obj
        gc.freeze()  # the freshly imported modules are permanent too
        self.conn.send_bytes(IMPORTED)
        return obj

    def _reply(self, kind: str, error: str | None, stdout: str = "", state: str = "") -> bytes:
        head = json.dumps([kind, error, stdout])
        return (head + "\n" + state).encode("utf-8", "surrogatepass")


def main(conn: Connection, config: dict[str, Any]) -> None:
    """Entry point called by the bootstrap command line in ``pool.py``."""
    try:
        worker = Worker(conn, Limits(**config["limits"]))
    except BaseException as exc:
        conn.send_bytes(FAILED + policy.describe_exception(exc).encode("utf-8", "replace"))
        os._exit(1)
    conn.send_bytes(READY)
    worker.serve()
    # Skip interpreter teardown: nothing of value is left, and it could run program code.
    os._exit(0)
