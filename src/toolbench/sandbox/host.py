"""Host calls: a running program asks the harness for something and waits for the answer.

Some worlds need the harness in the middle of a program: tabletop's programs call
``parse_obj_name(...)``, which is itself a model call whose answer (more code) must run *here*,
in the same program process, with the program's scope. This module is the program process's
end of that channel, for the world's trusted code (never for the program: it is not in scope):

* ``call(name, payload)`` sends one JSON request up the existing pipes (program process ->
  template -> parent, which awaits the model through the runner's ``generate`` and answers)
  and blocks until the answer comes back. The program's CPU and wall timers are paused for the
  wait and resumed with what was left, so waiting on a model costs the program nothing, and a
  spin after the answer is still stopped on time.
* ``execute(source, scope)`` compiles code under the same RestrictedPython policy as the
  program and runs it in ``scope`` (made by ``scope_for``: this run's guards and print buffer),
  in this process: the sub-program needs no other worker, so nothing can deadlock when every
  worker is busy with a program that waits on the host.
* ``nested()`` counts how deep host-driven code is nested; ``Limits.max_host_depth`` caps it and
  ``Limits.max_host_calls`` caps the calls of one program (the parent counts them too: it trusts
  nothing a worker says).

Worlds that run in the shared program process (``SANDBOX_SHARED``) have no channel: ``call``
raises ``HostError`` there.
"""

from __future__ import annotations

import json
import os
import signal
import struct
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toolbench.sandbox import audit
from toolbench.sandbox._protocol import encode_answer, encode_code_answer, parse_host_call
from toolbench.sandbox.limits import Limits

CALL = b"H"  # program process -> template: CALL + length + JSON [name, payload]
# template -> program process, per call: length + JSON answer, then length + the marshalled
# code objects compiled for a ``Code`` answer (length 0: none)
LENGTH = struct.Struct("!I")
# The guard entries a sub-program's scope needs (the builtins dict carries the rest).
GUARD_NAMES = ("__builtins__", "__name__", "__metaclass__", "_write_", "_print_")


@dataclass(frozen=True)
class Code:
    """A host handler's answer that is source the world will run: the world gets ``text``, as
    for a plain string answer. The worker's template first compiles ``sources`` (what the world
    will pass to ``compile_source``; by default ``text`` itself) with its code cache and hands
    the program process the code objects: a source is compiled once per worker instead of once
    per program (a forked program process's compilations die with it)."""

    text: str
    sources: tuple[str, ...] | None = None


class HostRefused(Exception):
    """Raised by a parent-side host handler to refuse one call (a bad argument): the program
    gets ``HostError`` with this message and ends as an error; the worker is fine."""


class HostError(Exception):
    """A host call failed: no channel, over a limit, or the harness refused it. It reaches the
    program as an ordinary exception, so the program ends as an error."""


class _Channel:
    """One program's end of the channel; set up by the template right after the fork."""

    def __init__(self, out_fd: int, in_fd: int, limits: Limits, timers: Any) -> None:
        self.out_fd = out_fd
        self.in_fd = in_fd
        self.limits = limits
        self.timers = timers
        self.calls = 0
        self.depth = 0
        self.guards: dict[str, Any] = {}
        self.code: Any = None  # the executor's CodeCache


_channel: _Channel | None = None


def bind(out_fd: int, in_fd: int, limits: Limits, timers: Any, code: Any) -> None:
    """Template side, in a fresh program process: open the channel for this program."""
    global _channel
    _channel = _Channel(out_fd, in_fd, limits, timers)
    _channel.code = code


def enter_program(scope: dict[str, Any]) -> None:
    """The executor is about to run the program in ``scope``: remember its guards, which
    every sub-program's scope shares (same print buffer, same class registry)."""
    if _channel is not None:
        _channel.guards = {name: scope[name] for name in GUARD_NAMES if name in scope}


def _require() -> _Channel:
    if _channel is None:
        raise HostError("host calls are not available for this world")
    return _channel


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            raise HostError("the harness closed the host channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


@contextmanager
def _paused(channel: _Channel) -> Iterator[None]:
    """Stop the program's CPU and wall timers for a wait on the host; resume with the rest.

    A timer that already expired stays expired (its sticky re-fire is the executor's), so a
    program cannot reset its budget by calling the host."""
    real, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    prof, _ = signal.setitimer(signal.ITIMER_PROF, 0)
    try:
        yield
    finally:
        # A remaining of 0 means the timer was not running; keep it off.
        if real > 0:
            signal.setitimer(signal.ITIMER_REAL, real)
        if prof > 0:
            signal.setitimer(signal.ITIMER_PROF, prof)


def call(name: str, payload: Any) -> Any:
    """Ask the harness; the answer's value, or ``HostError`` with the harness's reason."""
    channel = _require()
    if channel.timers.expired is not None:
        raise HostError("the program is over its time limit")
    if channel.calls >= channel.limits.max_host_calls:
        raise HostError(f"more than {channel.limits.max_host_calls} host calls in one program")
    channel.calls += 1
    try:
        body = json.dumps([name, payload], allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise HostError(f"a host call's arguments must be JSON values ({exc})") from None
    if len(body) > channel.limits.max_output_bytes:
        raise HostError(f"a host call is over {channel.limits.max_output_bytes} bytes")
    with _paused(channel):
        _write_all(channel.out_fd, CALL + LENGTH.pack(len(body)) + body)
        (size,) = LENGTH.unpack(_read_exactly(channel.in_fd, LENGTH.size))
        answer = json.loads(_read_exactly(channel.in_fd, size))
        (size,) = LENGTH.unpack(_read_exactly(channel.in_fd, LENGTH.size))
        if size:  # code objects the template compiled for this answer (it is trusted)
            compiled = _read_exactly(channel.in_fd, size)
            with audit.lifted():
                channel.code.install(compiled)
    if not isinstance(answer, dict):
        raise HostError("the host sent a malformed answer")
    if "error" in answer:
        raise HostError(str(answer["error"]))
    return answer.get("ok")


@contextmanager
def nested() -> Iterator[int]:
    """One level of host-driven nesting (a sub-program running); the depth inside it."""
    channel = _require()
    if channel.depth >= channel.limits.max_host_depth:
        raise HostError(f"host calls nested more than {channel.limits.max_host_depth} deep")
    channel.depth += 1
    try:
        yield channel.depth
    finally:
        channel.depth -= 1


def scope_for(names: dict[str, Any]) -> dict[str, Any]:
    """A fresh scope for a sub-program: ``names`` plus this run's guards. Names starting with
    ``_`` are dropped: a global ``_getattr_`` (say, a keyword argument a program passed as
    ``**{'_getattr_': f}``) would shadow the guard RestrictedPython's code looks up there
    before the builtins."""
    channel = _require()
    scope = {key: value for key, value in names.items() if not key.startswith("_")}
    scope.update(channel.guards)
    return scope


def compile_source(source: str) -> tuple[Any, ...]:
    """``source`` compiled under the sandbox policy (code objects to run in order); a source
    the policy refuses raises ``SyntaxError`` with the reason."""
    channel = _require()
    if not isinstance(source, str):
        raise HostError("a sub-program must be text")
    with audit.lifted():  # compiling is harness code; the fence refuses new code objects
        codes, error = channel.code.get(source)
    if codes is None:
        reason = (error or "the sub-program could not be compiled").removeprefix("SyntaxError: ")
        raise SyntaxError(reason)
    return codes


def run(codes: tuple[Any, ...], scope: dict[str, Any]) -> None:
    """Run code from ``compile_source`` in ``scope`` (globals and locals at once)."""
    for code in codes:
        exec(code, scope)


def execute(source: str, scope: dict[str, Any]) -> None:
    """Compile ``source`` under the sandbox policy and run it in ``scope``."""
    run(compile_source(source), scope)


# -- the parent's side -------------------------------------------------------------------------

# The harness's answer to host calls: (name, JSON payload) -> JSON answer, or ``Code`` for
# source the world will run. It may raise ``HostRefused`` to fail the one call; anything else it
# raises ends the program (its worker is replaced) and propagates to ``SandboxPool.arun``'s
# caller.
HostHandler = Callable[[str, Any], Awaitable[Any]]


def answerer_for(host: HostHandler, max_bytes: int) -> Callable[[bytes], Awaitable[bytes]]:
    """The parent's reading of one host call (strict: ``parse_host_call``) and its answer."""

    async def answer(body: bytes) -> bytes:
        name, payload = parse_host_call(body, max_bytes)
        try:
            value = await host(name, payload)
        except HostRefused as exc:
            return encode_answer(error=str(exc) or "the host refused the call")
        if isinstance(value, Code):
            sources = (value.text,) if value.sources is None else value.sources
            return encode_code_answer(value.text, sources)
        return encode_answer(value)

    return answer
