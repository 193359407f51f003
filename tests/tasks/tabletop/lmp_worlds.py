"""A sandbox world for the LMP runtime tests that needs nothing of the table: the runtime of
``lmp.py`` over a small fixed scope (numpy and ``record``), so the LMP machinery (host calls,
nesting, fgen, scoping) is tested on its own. Workers import it by name."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolbench.sandbox.world import World
from toolbench.tasks.tabletop.lmp import TOP_LMP, Runtime


def runtime_world() -> World:
    log: list[Any] = []

    def record(value: Any) -> None:
        log.append(value.tolist() if isinstance(value, np.ndarray) else value)

    runtime = Runtime({"np": np, "record": record})

    def tabletop_ui(query: Any, context: Any = "") -> None:
        runtime.call(TOP_LMP, query, context, {})

    return World(
        namespace={TOP_LMP: tabletop_ui},
        snapshot=lambda: {"log": list(log), "variable": sorted(runtime.variable)},
        allowed_modules=frozenset({"numpy"}),
    )
