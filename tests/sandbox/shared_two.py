"""A world module whose programs share a program process (``SANDBOX_SHARED``), for the tests
that an escaped program's leftovers never reach another module's programs."""

from __future__ import annotations

from tests.sandbox import worlds
from toolbench.sandbox.world import World

SANDBOX_SHARED = True


def escape_world() -> World:
    """``escape(source)``: real builtins, as in ``worlds.escape_world``."""
    return worlds.escape_world()
