"""Every task ``toolbench`` can run, found by name without importing any of them.

Built-in tasks are ``name -> "module:attribute"`` references below: a task's module (and its
dependencies: pandas, formulas, the shop catalogue) is imported the first time that task is
asked for, so listing commands and ``--help`` stay fast. Other packages add tasks through the
``toolbench.tasks`` entry-point group::

    [project.entry-points."toolbench.tasks"]
    mytask = "mytask_pkg:TASK"          # a Task object, or a zero-argument callable making one

The entry point's name is the task's name (``task.name`` must equal it) and may not be a
built-in's. Scripts and tests may also add task objects in-process (``register``).
"""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any

from toolbench.errors import UserError, did_you_mean
from toolbench.plugins import installed
from toolbench.plugins import where as where_of

if TYPE_CHECKING:
    from toolbench.core.task import Task

#: The entry-point group other packages register their tasks in.
GROUP = "toolbench.tasks"

#: Built-in tasks in listing order: name -> "module:attribute" of the task object.
BUILTIN: dict[str, str] = {
    "home_search": "toolbench.tasks.home_search.definition:TASK",
    "booking": "toolbench.tasks.booking.definition:TASK",
    "open_weather": "toolbench.tasks.open_weather.definition:TASK",
    "the_cat_api": "toolbench.tasks.the_cat_api.definition:TASK",
    "google_sheets": "toolbench.tasks.google_sheets.definition:TASK",
    "virtual_home": "toolbench.tasks.virtual_home.definition:TASK",
    "web_shop": "toolbench.tasks.web_shop.definition:TASK",
    "tabletop": "toolbench.tasks.tabletop.definition:TASK",
    # The awareness evaluation (``toolbench aware run``): its data is a dataset file named by
    # its ``dataset`` option, not a task folder.
    "aware": "toolbench.aware.evaluate.task:TASK",
}

#: Task objects added in this process by ``register`` (scripts, tests); looked up first.
REGISTERED: dict[str, Task] = {}

# What a task object must have for the runner to drive it; checked on third-party objects
# so that a wrong entry point fails at lookup with its name, not deep inside a run.
_REQUIRED = ("name", "summary", "metrics", "defaults", "versions", "load", "prepare", "solve")


def register(task: Task) -> None:
    """Make ``task`` available by its name in this process (e.g. for ``toolbench.run`` or a
    test); a built-in's name is refused."""
    _check_shape(task, "register")
    if task.name in BUILTIN:
        raise UserError(f"task {task.name}: a built-in task has that name; choose another")
    REGISTERED[task.name] = task


def task_names() -> list[str]:
    """Every task's name: the built-ins in their order, then registered ones, then installed
    ones by name."""
    names = dict.fromkeys([*BUILTIN, *REGISTERED, *_installed()])
    return list(names)


def all_tasks() -> list[Task]:
    """Every task object, in ``task_names`` order (imports every task)."""
    return [get_task(name) for name in task_names()]


def get_task(name: str) -> Task:
    """The task called ``name``; ``UserError`` naming the nearest names if there is none."""
    if name in REGISTERED:
        return REGISTERED[name]
    if name in BUILTIN:
        return _builtin(name)
    installed = _installed()
    if name in installed:
        return _from_entry_point(installed[name])
    known = [*BUILTIN, *REGISTERED, *installed]
    raise UserError(f"unknown task {name!r}{did_you_mean(name, known)}")


def find_task(name: str) -> Task | None:
    """The task called ``name``, or None when no task has that name (reading a run folder
    written with a task that is not installed here)."""
    if name in REGISTERED or name in BUILTIN or name in _installed():
        return get_task(name)
    return None


def parse_task_list(text: str) -> list[Task]:
    """'home_search,booking' -> tasks, in the order given, without duplicates."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UserError("no task given; name one or more tasks, e.g. home_search,booking")
    return [get_task(name) for name in dict.fromkeys(names)]


@functools.cache
def _builtin(name: str) -> Task:
    module, _, attribute = BUILTIN[name].partition(":")
    task: Task = getattr(importlib.import_module(module), attribute)
    return task


def _installed() -> dict[str, EntryPoint]:
    return installed(GROUP, BUILTIN, "task")


@functools.cache
def _from_entry_point(point: EntryPoint) -> Task:
    """Load an installed task: the entry point's object is a task, or a zero-argument
    callable (a class, a function) that returns one."""
    where = where_of(point)
    try:
        loaded = point.load()
        task = loaded() if callable(loaded) and not _looks_like_task(loaded) else loaded
    except Exception as exc:  # third-party code: any failure is that package's, named
        raise UserError(
            f"{where}: cannot load the task ({type(exc).__name__}: {exc}); fix or uninstall "
            "that distribution"
        ) from None
    _check_shape(task, where)
    if task.name != point.name:
        raise UserError(
            f"{where}: the task it gives is named {task.name!r}; the entry point's name and "
            "the task's name must be the same"
        )
    return task


def _looks_like_task(value: Any) -> bool:
    return not isinstance(value, type) and all(hasattr(value, a) for a in _REQUIRED)


def _check_shape(value: Any, where: str) -> None:
    missing = [attribute for attribute in _REQUIRED if not hasattr(value, attribute)]
    if missing:
        raise UserError(
            f"{where}: {type(value).__name__} is not a task (it lacks {', '.join(missing)}); "
            "subclass toolbench.core.TaskBase and give it the Task protocol's members"
        )
