"""The tabletop task object (imported on first use of ``toolbench.tasks.tabletop.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.tasks.tabletop import generator
from toolbench.tasks.tabletop.task import TabletopTask

TASK = TabletopTask(
    name="tabletop",
    summary="robot-arm programs whose LMP calls ask the model again (success, strict, crashes)",
    package_dir=Path(__file__).parent,
    # The original's commands: no retrieved docs or demonstrations, 256 new tokens.
    defaults=TaskDefaults(top_k_api=0, top_k_example=0, max_tokens=256),
    generator=TaskGenerator(
        generate=generator.generate,
        functions={},
        examples=(),
        default_test_size=generator.DEFAULT_TEST_SIZE,
    ),
)
