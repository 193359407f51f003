"""The home_search task object (imported on first use of ``toolbench.tasks.home_search.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.kinds.program_task import ProgramTask
from toolbench.tasks.home_search import docs, generator
from toolbench.tasks.home_search.tools import TOOLSET
from toolbench.tasks.home_search.world import make_world

TASK = ProgramTask(
    name="home_search",
    summary="Python calls on a home-search API (location, buy/rent, home types, criteria)",
    world=make_world,
    package_dir=Path(__file__).parent,
    defaults=TaskDefaults(top_k_api=15, top_k_example=3, max_tokens=256),
    generator=TaskGenerator.of(generator, docs),
    toolset=TOOLSET,
)
