"""The contract between a task's simulator and the sandbox.

A task gives the sandbox a *world factory*: a module-level function (so it pickles by reference
into worker processes) that builds a fresh simulated world. The program runs with exactly
``namespace`` in scope; afterwards ``snapshot()`` returns the world's final state as plain JSON
data, which is all that ever leaves the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class ToolError(Exception):
    """A simulated API refused a call (bad value, wrong call order). The program crashed."""


@dataclass
class World:
    namespace: dict[str, Any]
    snapshot: Callable[[], Any]
    # Modules a program may import in this world (e.g. pandas for spreadsheets). Empty: none.
    # Caution: an allowed library brings its own I/O entry points (pandas.read_csv/read_pickle,
    # DataFrame.to_csv, numpy.load ...), which the RestrictedPython policy does not fence off.
    # A world that allows one must also deny those entry points (or run under OS isolation).
    allowed_modules: frozenset[str] = field(default_factory=frozenset)


WorldFactory = Callable[[], World]
