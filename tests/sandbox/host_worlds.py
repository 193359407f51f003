"""World factories with host functions, for the host-call tests (workers import them by name).

``ask(question)`` is a miniature LMP: the harness answers with code, which runs in this same
program process in a scope of the world's names (``host.scope_for``) and hands back its
``ret_val``; that code may ``ask`` again (nesting). ``value(x)`` asks the harness for a plain
JSON value. ``raw(...)`` writes whatever bytes a test wants on the channel, standing in for a
program that took over its process.
"""

from __future__ import annotations

import os
from typing import Any

from toolbench.sandbox import host
from toolbench.sandbox.world import World


class _Log:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def record(self, value: Any) -> None:
        self.items.append(value)

    def snapshot(self) -> list[Any]:
        return list(self.items)


def lmp_world() -> World:
    log = _Log()
    names: dict[str, Any] = {"record": log.record}

    def ask(question: Any) -> Any:
        with host.nested():
            code = host.call("ask", str(question))
            scope = host.scope_for(names)
            host.execute(code, scope)
            return scope.get("ret_val")

    def value(x: Any) -> Any:
        return host.call("value", x)

    names.update(ask=ask, value=value)
    return World(namespace=dict(names), snapshot=log.snapshot)


def _raw(kind: str) -> None:
    """Hostile channel traffic written straight to the pipe (what a program that escaped the
    in-process layers could write)."""
    channel = host._channel
    assert channel is not None
    fd = channel.out_fd
    if kind == "huge":
        os.write(fd, host.CALL + host.LENGTH.pack(1 << 30))
        os.write(fd, b"x" * 4096)
    elif kind == "malformed":
        body = b"\xff\xfe not json"
        os.write(fd, host.CALL + host.LENGTH.pack(len(body)) + body)
    elif kind == "recursive":
        body = b"[" * 5000 + b"]" * 5000
        os.write(fd, host.CALL + host.LENGTH.pack(len(body)) + body)
    elif kind == "nan":
        body = b'["value", NaN]'
        os.write(fd, host.CALL + host.LENGTH.pack(len(body)) + body)
    elif kind == "badname":
        body = b'[["not", "a", "name"], 1]'
        os.write(fd, host.CALL + host.LENGTH.pack(len(body)) + body)
    elif kind == "flood":
        body = b'["value", 1]'
        for _ in range(1000):  # never reads an answer: more calls than the cap allows
            os.write(fd, host.CALL + host.LENGTH.pack(len(body)) + body)
    # then wait for an answer that should never matter
    os.read(channel.in_fd, 4)


def hostile_world() -> World:
    log = _Log()
    return World(namespace={"raw": _raw, "record": log.record}, snapshot=log.snapshot)


def counting_lmp_world() -> World:
    """``lmp_world`` plus ``compiles()``: how many programs this program process compiled
    itself (RestrictedPython compilations, counted by wrapping the code cache's compiler here,
    after the fork: the count dies with the process)."""
    from toolbench.sandbox import codecache

    counter = [0]
    original = codecache.compile_program

    def counting(source: str) -> Any:
        counter[0] += 1
        return original(source)

    codecache.compile_program = counting  # type: ignore[assignment]
    world = lmp_world()
    world.namespace["compiles"] = lambda: counter[0]
    return world
