"""the_cat_api: curl requests to a simulated, stateful The Cat API (images, breeds, favourites,
votes)."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.the_cat_api.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
