"""The event loop a run's work goes through: uvloop where it is installed, asyncio's own
otherwise (``TOOLBENCH_EVENT_LOOP=asyncio`` chooses asyncio's).

Why a different loop: at ``--concurrency 128`` against a 200 ms server the harness handles
~550 model calls a second, each an HTTP exchange, a sandbox round trip and a log write, and
asyncio's pure-Python loop (handles, selector, transports) is a good part of the CPU each call
costs. uvloop (libuv, the loop uvicorn uses) does the same work in C: on a shared 2-core
machine it saved ~0.1-0.2 ms of harness CPU per call (README, Speed). It is an
implementation of asyncio's loop API, so nothing above it changes: records, retries,
timeouts, Ctrl-C (``asyncio.Runner``'s handler) behave as before.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: ``asyncio`` forces asyncio's own loop (to compare, or to rule the loop out of a problem).
LOOP_ENV = "TOOLBENCH_EVENT_LOOP"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor, or None for asyncio's default (not installed, not wanted,
    or a Python without ``asyncio.Runner``)."""
    if os.environ.get(LOOP_ENV, "").strip().lower() == "asyncio" or sys.version_info < (3, 11):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop ``loop_factory`` picks."""
    factory = loop_factory()
    if factory is None or sys.version_info < (3, 11):
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
