"""virtual_home: household action plans, scored as the original and in a symbolic world."""

from pathlib import Path

from toolbench.tasks.base import TaskDefaults, TaskGenerator
from toolbench.tasks.virtual_home import docs, generator
from toolbench.tasks.virtual_home.task import VirtualHomeTask

TASK = VirtualHomeTask(
    name="virtual_home",
    summary="household plans, one Agent.Action(object) per line (grounding, LCS, goals)",
    package_dir=Path(__file__).parent,
    defaults=TaskDefaults(top_k_api=10, top_k_example=3, max_tokens=128),
    generator=TaskGenerator.of(generator, docs),
)
