"""The contract between a task's simulator and the sandbox.

A task gives the sandbox a *world factory*: a module-level function (so a worker can import it by
name), or a ``functools.partial`` of one whose arguments are JSON values (for worlds that differ
per sample, such as which worksheet of a workbook a program starts on). The worker builds a fresh
world per program; the program runs with exactly ``namespace`` in scope; afterwards
``snapshot()`` returns the world's final state as plain JSON data, which is all that ever leaves
the worker.

A factory's module may set ``DETERMINISTIC = False`` (its worlds talk to a live service), so
the execution memo never remembers its results, and may define ``prepare_sandbox_worker()``: a
worker calls it once, right after importing the module and before any program runs, to pay
one-off costs (imports, warm-up) outside the programs' time limits and to disarm library
features programs must not reach.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class ToolError(Exception):
    """A simulated API refused a call (bad value, wrong call order). The program crashed."""


@dataclass
class World:
    namespace: dict[str, Any]
    snapshot: Callable[[], Any]
    # Exact names of the modules a program may import or reach as attributes (e.g. "pandas";
    # its submodules only if listed too). Empty: none. An allowed library brings its own I/O
    # entry points (pandas.read_csv, numpy.load ...): the world's ``prepare_sandbox_worker``
    # disarms them, and the worker's audit hook refuses file, network and process access anyway.
    allowed_modules: frozenset[str] = field(default_factory=frozenset)
    # Types whose attributes and items programs may set (exact types): plain value holders such
    # as DataFrames, never simulator objects, whose state must change only through their API.
    writable_types: frozenset[type] = field(default_factory=frozenset)
    # Live worlds drive a real API from inside the program: sockets allowed, files still not.
    network: bool = False


WorldFactory = Callable[[], World]

PREPARE_HOOK = "prepare_sandbox_worker"
# prime_sandbox_worker(*args, **kwargs): once per distinct factory arguments, in the worker's
# template before programs fork from it (e.g. parse the workbook a world copies). No side
# effects outside the process: it runs for live worlds' arguments too.
PRIME_HOOK = "prime_sandbox_worker"
# A module-level ``SANDBOX_SHARED = True``: the module's worlds use no libraries, are rebuilt
# from scratch and reach nothing mutable, so their programs may share a program process (a
# fork per program costs more than such a program). Everything else gets a fresh fork.
SHARED_FLAG = "SANDBOX_SHARED"
# A module-level ``SANDBOX_NETWORK = True``: its worlds talk to a live service, so its programs
# run in workers that keep the host's network (and may open sockets); files stay hidden.
NETWORK_FLAG = "SANDBOX_NETWORK"
_ARGS_MARK = "?"  # never part of a module name or qualname


def factory_function(factory: WorldFactory) -> Callable[..., World]:
    """The module-level function behind a factory (the factory itself, or a partial's func)."""
    return factory.func if isinstance(factory, functools.partial) else factory


def factory_ref(factory: WorldFactory) -> str:
    """'module:qualname', plus '?<JSON [args, kwargs]>' for a partial: all a worker needs."""
    func = factory_function(factory)
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        raise ValueError(
            f"world factory {factory!r} must be a module-level function in an importable module"
        )
    ref = f"{module}:{qualname}"
    if isinstance(factory, functools.partial):
        try:
            ref += _ARGS_MARK + json.dumps([list(factory.args), factory.keywords], sort_keys=True)
        except (TypeError, ValueError):
            raise ValueError(
                f"world factory {factory!r}: partial arguments must be JSON values"
            ) from None
    return ref


def split_ref(ref: str) -> tuple[str, list[Any], dict[str, Any]]:
    """Inverse of ``factory_ref``: ('module:qualname', args, kwargs)."""
    name, mark, encoded = ref.partition(_ARGS_MARK)
    if not mark:
        return name, [], {}
    args, kwargs = json.loads(encoded)
    return name, list(args), dict(kwargs)
