"""Running one restricted program inside a worker process (a template's program process).

``_template.py`` decides *where* a program runs (a fresh fork, or the shared process of worlds
that need no libraries); this module is what then happens there: build the world, run the
program under its timers and the audit fence, read the world's state and encode the reply.

The fence covers all program code until the reply is encoded: the program itself, the
finalizers of its garbage (collected under the fence), the world's snapshot (which may call
back into program objects), exception formatting (``str(exc)`` runs program code) and the
state's serialization. Limits live here in layers: rlimits for memory, files, forks and core
dumps (set once per worker); CPU and wall timers per program that raise into Python code and
keep re-firing if the program swallows the exception; and the template's and then the parent's
kill for anything stuck in C code.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import signal
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from toolbench.sandbox import audit, host, policy
from toolbench.sandbox._protocol import INTERNAL, MAX_INT_DIGITS, MAX_STATE_DEPTH, encode_result
from toolbench.sandbox.codecache import CodeCache
from toolbench.sandbox.limits import Limits

_REFIRE_S = 0.05  # how soon an expired timer fires again if the program caught the first one
_FULL_GC_EVERY = 1000  # programs between full garbage collections (shared process)
_ENV_KEEP = {"LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING"}
_ENV_KEEP |= {"HOME", "TMPDIR", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}


class _Timeout(policy.SandboxInterrupt):
    pass


class Timers:
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


def harden(limits: Limits) -> None:
    """Process-wide limits, set once before any program runs; lowering hard limits is final."""
    for key in list(os.environ):  # the parent passes a clean env; this is belt and braces
        if key not in _ENV_KEEP:
            del os.environ[key]
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # fd 0 was the parent's socket: the worker talks over a dup of it
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


MAX_STATE_NODES = 200_000  # values in one state; a self-referencing list would be infinite


class _StateTooLarge(Exception):
    pass


class _Plain:
    """Exact JSON types only; anything else becomes '<Type object>' (keys too); non-finite
    floats and huge integers become strings, and nesting is cut at the parent's depth cap, so
    the reply is strict, bounded JSON whatever the world holds (cycles included)."""

    def __init__(self) -> None:
        self.nodes = 0

    def __call__(self, value: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_STATE_NODES:
            raise _StateTooLarge
        kind = type(value)
        if value is None or kind in (str, bool):
            return value
        if kind is float:
            return value if math.isfinite(value) else f"<float {value!r}>"
        if kind is int:
            return value if value.bit_length() < MAX_INT_DIGITS * 3 else "<int too large>"
        if depth >= MAX_STATE_DEPTH - 1:
            return "<nested too deep>"
        if kind in (list, tuple):
            return [self(item, depth + 1) for item in value]
        if kind is dict:
            out = {}
            for key, item in value.items():
                if not (key is None or type(key) in (str, int, float, bool)):
                    key = _describe_value(key)
                elif type(key) is float and not math.isfinite(key):
                    key = f"<float {key!r}>"
                out[key] = self(item, depth + 1)
            return out
        return _describe_value(value)


def serialize_state(state: Any) -> str:
    """Strict JSON text of a world state (see ``_Plain``); ValueError if it is too large."""
    try:
        return json.dumps(_Plain()(state), allow_nan=False)
    except _StateTooLarge:
        raise ValueError(f"world state has more than {MAX_STATE_NODES} values") from None


@dataclass
class Built:
    """A freshly built world, unpacked so nothing else of it stays referenced."""

    namespace: dict[str, Any]
    allowed: frozenset[str]
    writable: frozenset[type]
    network: bool
    snapshot: Callable[[], Any]


def build_world(factory: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Built:
    """Trusted harness code: the world for one program (exceptions: the factory failed)."""
    world = factory(*args, **kwargs)
    namespace = dict(world.namespace)
    if any(type(k) is not str or k.startswith("_") for k in namespace):
        raise ValueError("world namespace names must not start with '_'")
    return Built(
        namespace,
        frozenset(world.allowed_modules),
        frozenset(world.writable_types),
        bool(world.network),
        world.snapshot,
    )


def internal_reply(exc: BaseException) -> bytes:
    return encode_result(INTERNAL, f"world factory failed: {policy.describe_exception(exc)}")


class Executor:
    """Runs programs in this process, one at a time."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.code = CodeCache()
        self.timers = Timers(limits)
        self.runs = 0

    def run(self, world: Built, source: str, collect: bool = True) -> bytes:
        """The encoded reply for one program on a fresh world. Everything runs under the
        timers; program code only under the fence (compiling is harness code, and needs code
        objects the fence refuses)."""
        output = policy.OutputBuffer(self.limits.max_output_bytes)
        try:
            self.timers.arm()
            try:
                kind, error, state = self._compile_and_execute(source, world, output)
                if collect:  # finalizers of the program's garbage run (and stop) here
                    self.runs += 1
                    with audit.armed():
                        gc.collect(0 if self.runs % _FULL_GC_EVERY else 2)
            except _Timeout:  # fired again while we were formatting or cleaning up
                kind, error, state = "timeout", "", ""
            finally:
                self.timers.disarm()
        finally:
            audit.disarm()
        if self.timers.expired is not None:
            kind, error, state = "timeout", self.timers.message(), ""
        elif output.overflow:
            kind, error, state = "output_limit", self._print_limit_message(), ""
        return encode_result(kind, error, output.text(), state)

    def _compile_and_execute(
        self, source: str, world: Built, output: policy.OutputBuffer
    ) -> tuple[str, str | None, str]:
        codes, error = self.code.get(source)
        if codes is None:
            return "rejected", error, ""
        with audit.armed(), audit.network_allowed(world.network):
            return self._execute(codes, world, output)

    def _execute(
        self, codes: tuple[Any, ...], world: Built, output: policy.OutputBuffer
    ) -> tuple[str, str | None, str]:
        scope = policy.make_globals(world.namespace, world.allowed, output, world.writable)
        world.namespace.clear()
        host.enter_program(scope)  # sub-programs the world runs share these guards
        try:
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
        return self._state(world)

    def _state(self, world: Built) -> tuple[str, str | None, str]:
        try:
            text = serialize_state(world.snapshot())
        except MemoryError:
            return "memory", self._memory_message(), ""
        except _Timeout:
            raise
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
