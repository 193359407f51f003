"""booking: search trip tickets and hotels through Python API calls with Loc/Date values."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.booking.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
