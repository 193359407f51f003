"""World factories for the sandbox tests.

They are module-level functions in an importable module because workers import factories by
name. Their namespaces hold *trusted* helpers (they stand in for simulator code), which lets a
test look inside a worker (``probe_world``) or make one hang or die on cue.
"""

from __future__ import annotations

import os
import resource
import signal
import time
from typing import Any

from toolbench.sandbox.world import World


class _Recorder:
    def __init__(self) -> None:
        self._values: list[Any] = []

    def record(self, value: Any) -> None:
        self._values.append(value)

    def snapshot(self) -> list[Any]:
        return list(self._values)


def record_world() -> World:
    """``record(x)`` appends x to the state: for checking how odd values are serialized."""
    recorder = _Recorder()
    return World(namespace={"record": recorder.record}, snapshot=recorder.snapshot)


def modules_world() -> World:
    """Like ``record_world`` but programs may import json and math."""
    recorder = _Recorder()
    return World(
        namespace={"record": recorder.record},
        snapshot=recorder.snapshot,
        allowed_modules=frozenset({"json", "math"}),
    )


def _worker_facts() -> dict[str, Any]:
    limits = {
        name: resource.getrlimit(getattr(resource, f"RLIMIT_{name.upper()}"))[0]
        for name in ("as", "fsize", "core", "nofile")
    }
    return {
        "env": sorted(os.environ),
        "cwd": os.getcwd(),
        "cwd_entries": os.listdir("."),
        "cwd_writable": os.access(".", os.W_OK),
        "limits": limits,
        "pid": os.getpid(),
        "sid": os.getsid(0),
    }


def probe_world() -> World:
    """The state is a description of the program process, taken when the world is built
    (trusted code, before the program runs: the snapshot itself runs under the fence)."""
    facts = _worker_facts()
    return World(namespace={}, snapshot=lambda: facts)


def _hang() -> None:
    # Stands in for C code that never checks for signals: only the parent's kill ends it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGPROF})
    time.sleep(60)


def _exit() -> None:
    os._exit(3)


def _segfault() -> None:
    signal.raise_signal(signal.SIGSEGV)  # not os.kill: the audit fence refuses that in programs


def trouble_world() -> World:
    """``hang()``, ``exit()`` and ``segfault()`` break the worker in the ways C code can."""
    facts = _worker_facts()
    return World(
        namespace={"hang": _hang, "exit": _exit, "segfault": _segfault},
        snapshot=lambda: facts,
    )


def broken_world() -> World:
    raise RuntimeError("this factory is broken")


def _run_unrestricted(source: str) -> dict[str, Any]:
    """Stands in for a program that broke every in-process layer: real builtins, no audit
    fence. Only the OS isolation is left between it and the machine."""
    import builtins

    from toolbench.sandbox import audit

    audit.disarm()
    scope: dict[str, Any] = {"__builtins__": builtins, "report": {}}
    exec(source, scope)  # test-only: this is the simulated escape
    report: dict[str, Any] = scope["report"]
    return report


def escape_world() -> World:
    """``escape(source)`` runs ``source`` with real builtins; its ``report`` is the state."""
    box: dict[str, Any] = {}

    def escape(source: str) -> None:
        box.update(_run_unrestricted(source))

    return World(namespace={"escape": escape}, snapshot=lambda: dict(box))
