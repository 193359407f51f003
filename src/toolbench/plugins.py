"""Finding what other installed distributions register: tasks and models by entry point.

Both registries (``toolbench.tasks.registry`` for the group ``toolbench.tasks``,
``toolbench.models.registry`` for ``toolbench.models``) list a group's entry points the same
way: by name, refusing a name a built-in has or two distributions share, and naming the entry
point and its distribution in every error, since the fix is in that package.
"""

from __future__ import annotations

from collections.abc import Collection
from importlib.metadata import EntryPoint, entry_points

from toolbench.errors import UserError


def installed(group: str, builtin: Collection[str], kind: str) -> dict[str, EntryPoint]:
    """The group's entry points by name; one taking a built-in's name, or a name two
    distributions use, is a ``UserError`` (``kind`` is "task" or "model", for the message)."""
    found: dict[str, EntryPoint] = {}
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        if point.name in builtin:
            raise UserError(
                f"{where(point)}: a built-in {kind} is called {point.name!r}; the installed "
                f"{kind} needs another name (or uninstall the distribution)"
            )
        if point.name in found and found[point.name].value != point.value:
            raise UserError(
                f"{where(point)}: {kind} {point.name!r} is also registered by "
                f"{where(found[point.name])}; uninstall one of them"
            )
        found[point.name] = point
    return found


def where(point: EntryPoint) -> str:
    """``entry point NAME = VALUE (GROUP, distribution DIST)``: what a user must fix."""
    dist = point.dist.name if point.dist is not None else "an unknown distribution"
    return f"entry point {point.name} = {point.value} ({point.group}, distribution {dist})"
