"""virtual_home: household action plans, scored as the original and in a symbolic world."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.virtual_home.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
