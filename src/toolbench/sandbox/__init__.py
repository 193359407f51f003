"""Run model-written Python programs against simulated APIs, safely and fast.

Programs are hostile input: they run only in pooled worker processes, compiled with
RestrictedPython, under memory/CPU/wall/output limits, and only JSON comes back.
"""

from toolbench.sandbox.host import HostHandler, HostRefused
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.pool import ExecResult, SandboxError, SandboxPool
from toolbench.sandbox.world import ToolError, World, WorldFactory

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
