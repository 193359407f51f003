"""The virtual_home task object (imported on first use of ``toolbench.tasks.virtual_home.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.tasks.virtual_home import docs, generator
from toolbench.tasks.virtual_home.task import VirtualHomeTask

TASK = VirtualHomeTask(
    name="virtual_home",
    summary="household plans, one Agent.Action(object) per line (grounding, LCS, goals)",
    package_dir=Path(__file__).parent,
    defaults=TaskDefaults(top_k_api=10, top_k_example=3, max_tokens=128),
    generator=TaskGenerator.of(generator, docs),
)
