"""The one registry of tasks. Adding a task is one line here plus its folder."""

from __future__ import annotations

from toolbench.core.task import Task
from toolbench.errors import UserError, did_you_mean
from toolbench.tasks import (
    booking,
    google_sheets,
    home_search,
    open_weather,
    tabletop,
    the_cat_api,
    virtual_home,
    web_shop,
)

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        home_search.TASK,
        booking.TASK,
        open_weather.TASK,
        the_cat_api.TASK,
        google_sheets.TASK,
        virtual_home.TASK,
        web_shop.TASK,
        tabletop.TASK,
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise UserError(f"unknown task {name!r}{did_you_mean(name, TASKS)}") from None


def parse_task_list(text: str) -> list[Task]:
    """'home_search,booking' -> tasks, in the order given, without duplicates."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UserError("no task given; name one or more tasks, e.g. home_search,booking")
    return [get_task(name) for name in dict.fromkeys(names)]
