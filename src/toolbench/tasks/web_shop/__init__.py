"""web_shop: multi-turn shopping episodes in a simulated store (WebShop, offline).

The store API (``world.py``: ``Store.load()``, ``store.new_session(goal)``, ``session.step``)
is what the text task, the HTML server and the gymnasium env drive.
"""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.web_shop.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
