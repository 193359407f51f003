"""tabletop: code-as-policies on a deterministic table, with nested model calls from the sandbox."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.tabletop.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
