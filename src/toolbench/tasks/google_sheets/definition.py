"""The google_sheets task object (built on first use of its package's ``TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.tasks.google_sheets import docs, generator
from toolbench.tasks.google_sheets.live import live_worlds
from toolbench.tasks.google_sheets.task import SheetsTask
from toolbench.tasks.google_sheets.world import make_world

TASK = SheetsTask(
    name="google_sheets",
    summary="gspread/pandas code editing a worksheet (formulas evaluated, formats checked)",
    package_dir=Path(__file__).parent,
    world=make_world,
    defaults=TaskDefaults(top_k_api=10, top_k_example=3, max_tokens=256),
    generator=TaskGenerator.of(generator, docs),
    live_worlds=live_worlds,
)
