"""The booking task object (imported on first use of ``toolbench.tasks.booking.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.kinds.program_task import ProgramTask
from toolbench.tasks.booking import docs, generator
from toolbench.tasks.booking.tools import TOOLSET
from toolbench.tasks.booking.world import make_world

TASK = ProgramTask(
    name="booking",
    summary="Python calls on a trip-booking API (tickets, hotels, both; Loc and Date values)",
    world=make_world,
    package_dir=Path(__file__).parent,
    defaults=TaskDefaults(top_k_api=15, top_k_example=3, max_tokens=384),
    generator=TaskGenerator.of(generator, docs),
    toolset=TOOLSET,
)
