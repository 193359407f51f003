"""The web_shop task object (imported on first use of ``toolbench.tasks.web_shop.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults
from toolbench.tasks.web_shop.task import WebShopTask

TASK = WebShopTask(
    name="web_shop",
    summary="shopping episodes: search[...] / click[...] for up to 25 turns, purchase reward",
    package_dir=Path(__file__).parent,
    # The original's published settings: no API docs, three demonstrations, 128 tokens.
    defaults=TaskDefaults(top_k_api=0, top_k_example=3, max_tokens=128),
)
