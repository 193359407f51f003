"""Run model-written Python programs against simulated APIs, safely and fast.

Programs are hostile input: they run only in pooled worker processes, compiled with
RestrictedPython, under memory/CPU/wall/output limits, and only JSON comes back.
"""

from typing import TYPE_CHECKING, Any

from toolbench.sandbox.host import HostHandler, HostRefused
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import ToolError, World, WorldFactory

if TYPE_CHECKING:
    from toolbench.sandbox.pool import ExecResult, SandboxError, SandboxPool

_POOL_NAMES = ("ExecResult", "SandboxError", "SandboxPool")

__all__ = [
    "ExecResult",
    "HostHandler",
    "HostRefused",
    "Limits",
    "SandboxError",
    "SandboxPool",
    "ToolError",
    "World",
    "WorldFactory",
]


def __getattr__(name: str) -> Any:
    """The pool (asyncio, threads, subprocesses) on first use: worker templates import this
    package for its world and policy modules, and every page they hold makes each fork dearer."""
    if name in _POOL_NAMES:
        from toolbench.sandbox import pool  # deferred: on first use, as the docstring says

        return getattr(pool, name)
    raise AttributeError(f"module 'toolbench.sandbox' has no attribute {name!r}")
