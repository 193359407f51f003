"""home_search: find homes by filling a Redfin-like search form through Python API calls."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.home_search.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
