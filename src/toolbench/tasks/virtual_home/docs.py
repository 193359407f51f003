"""API docs and demonstrations for virtual_home, written for this project.

``FUNCTIONS`` holds one doc per action (file name = action name): a '# ...' line saying what
the action does and listing every object it accepts (the same lists as
``valid_object_lists.json``), then the call. ``EXAMPLES`` are two demonstrations per chore
kind, drawn by the generator from a stream of their own, none of them a test query.
"""

from __future__ import annotations

from toolbench.tasks.virtual_home.generator import demonstrations
from toolbench.tasks.virtual_home.vocab import ACTIONS, valid_object_lists


def _doc(name: str) -> str:
    action = next(a for a in ACTIONS if a.name == name)
    entry = valid_object_lists()[f"Agent.{name}"]
    if not entry:
        return f"# {action.doc}; it takes no object.\nAgent.{name}()"
    if len(entry) == 2:
        return (
            f"# {action.doc}; 'object1' can only be one of {entry['object1']} and 'object2' "
            f"one of {entry['object2']}.\nAgent.{name}(object1, object2)"
        )
    return f"# {action.doc}; 'object' can only be one of {entry['object']}.\nAgent.{name}(object)"


FUNCTIONS: dict[str, str] = {action.name: _doc(action.name) for action in ACTIONS}
EXAMPLES: list[tuple[str, str]] = demonstrations()
