"""Every task ``toolbench`` can run, found by name without importing any of them.

Built-in tasks are ``name -> "module:attribute"`` references below: a task's module (and its
dependencies: pandas, formulas, the shop catalogue) is imported the first time that task is
asked for, so listing commands and ``--help`` stay fast. A built-in task that lives in a
layer above this one (the awareness evaluation) is not named here: the layer that may import
it adds it with ``provide`` (the runner's ``builtins``, run whenever the runner package is
imported, as every run, report, listing and the Python API do), as a zero-argument loader,
so this module never reaches past the import contract. Other packages add tasks through the
``toolbench.tasks`` entry-point group::

    [project.entry-points."toolbench.tasks"]
    mytask = "mytask_pkg:TASK"          # a Task object, or a zero-argument callable making one

The entry point's name is the task's name (``task.name`` must equal it) and may not be a
built-in's. Scripts and tests may also add task objects in-process (``register``).

An installed task that cannot be used (its import fails or exits, its object is not a task,
it takes a built-in's name) is left out of ``task_names``/``all_tasks`` and reported by
``problems`` (one line each, for ``toolbench list tasks``); every other task works as before,
and asking for the broken one by name is a ``UserError`` saying why (``toolbench.plugins``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any

from toolbench.errors import UserError, did_you_mean
from toolbench.plugins import (
    Installed,
    PluginError,
    call_plugin,
    cannot_load,
    installed,
    problem_lines,
    unusable,
)
from toolbench.plugins import where as where_of

if TYPE_CHECKING:
    from toolbench.core.task import Task

#: The entry-point group other packages register their tasks in.
GROUP = "toolbench.tasks"

#: Built-in tasks in listing order: name -> "module:attribute" of the task object, or (for a
#: built-in of a higher layer, added by ``provide``) a zero-argument loader of it.
BUILTIN: dict[str, str | Callable[[], Task]] = {
    "home_search": "toolbench.tasks.home_search.definition:TASK",
    "booking": "toolbench.tasks.booking.definition:TASK",
    "open_weather": "toolbench.tasks.open_weather.definition:TASK",
    "the_cat_api": "toolbench.tasks.the_cat_api.definition:TASK",
    "google_sheets": "toolbench.tasks.google_sheets.definition:TASK",
    "virtual_home": "toolbench.tasks.virtual_home.definition:TASK",
    "web_shop": "toolbench.tasks.web_shop.definition:TASK",
    "tabletop": "toolbench.tasks.tabletop.definition:TASK",
}

#: Tasks with a command of their own, whose data is a file no default can name: left out of
#: ``all`` and of the names offered for a misspelt one (``run aware`` with its ``dataset``
#: option still runs it). Filled by ``provide``.
OWN_COMMAND: dict[str, str] = {}

#: The task list that means every task a plain ``toolbench run`` can run.
ALL = "all"

#: Task objects added in this process by ``register`` (scripts, tests); looked up first.
REGISTERED: dict[str, Task] = {}

# What a task object must have for the runner to drive it (the ``Task`` contract's members);
# checked on third-party objects so that a wrong entry point fails at lookup with its name,
# not deep inside a run.
_REQUIRED = (
    "name", "summary", "metrics", "defaults", "scoring_version", "versions", "load", "solve",
)  # fmt: skip


def provide(name: str, loader: Callable[[], Task], own_command: str | None = None) -> None:
    """Add the built-in task ``name`` of a layer above this one, listed after the others:
    ``loader`` imports and returns it the first time it is asked for. ``own_command``: the
    command that runs it, for a task whose data no default can name (left out of ``all``)."""
    BUILTIN.setdefault(name, loader)
    if own_command is not None:
        OWN_COMMAND.setdefault(name, own_command)


def register(task: Task) -> None:
    """Make ``task`` available by its name in this process (e.g. for ``toolbench.run`` or a
    test); a built-in's name is refused."""
    missing = _missing(task)
    if missing:
        raise UserError(f"register: {_not_a_task(task, missing)}")
    if task.name in BUILTIN:
        raise UserError(f"task {task.name}: a built-in task has that name; choose another")
    REGISTERED[task.name] = task


def task_names() -> list[str]:
    """Every task's name: the built-ins in their order, then registered ones, then installed
    ones by name (not those set aside: a built-in's name, a name two distributions use)."""
    names = dict.fromkeys([*BUILTIN, *REGISTERED, *_installed().points])
    return list(names)


def all_tasks() -> list[Task]:
    """Every task object that can be used, in ``task_names`` order (imports every task); an
    installed one that does not load is left out (``problems`` says why)."""
    tasks = []
    for name in task_names():
        try:
            tasks.append(get_task(name))
        except PluginError:
            continue
    return tasks


def problems() -> list[str]:
    """Why each installed task that cannot be used is left out: one line each, naming its
    entry point, its distribution and the fix (imports every installed task)."""
    return problem_lines(_installed(), _from_entry_point)


def installed_from(name: str) -> str | None:
    """``entry point NAME = VALUE (GROUP, distribution DIST)`` of an installed task, or None
    for a built-in or registered one (what a listing names when the task misbehaves)."""
    if name in BUILTIN or name in REGISTERED:
        return None
    point = _installed().points.get(name)
    return where_of(point) if point is not None else None


def get_task(name: str) -> Task:
    """The task called ``name``; ``UserError`` naming the nearest names if there is none, or
    why an installed one of that name cannot be used."""
    if name in REGISTERED:
        return REGISTERED[name]
    if name in BUILTIN:
        return _builtin(name)
    found = _installed()
    task = found.find(name, _from_entry_point)
    if task is not None:
        return task
    known = [n for n in [*BUILTIN, *REGISTERED, *found.points] if n not in OWN_COMMAND]
    raise UserError(f"unknown task {name!r}{did_you_mean(name, [ALL, *known])}")


def find_task(name: str) -> Task | None:
    """The task called ``name``, or None when no task has that name (reading a run folder
    written with a task that is not installed here)."""
    if name in REGISTERED or name in BUILTIN or name in _installed().points:
        return get_task(name)
    return None


def parse_task_list(text: str) -> list[Task]:
    """'home_search,booking' -> tasks, in the order given, without duplicates; ``all`` is
    every task that can be used and has no command of its own (``OWN_COMMAND``)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UserError("no task given; name one or more tasks, e.g. home_search,booking")
    chosen: dict[str, Task] = {}
    for name in names:
        found = [t for t in all_tasks() if t.name not in OWN_COMMAND] if name == ALL else None
        for task in found if found is not None else [get_task(name)]:
            chosen.setdefault(task.name, task)
    return list(chosen.values())


@functools.cache
def _builtin(name: str) -> Task:
    where = BUILTIN[name]
    if callable(where):
        return where()
    module, _, attribute = where.partition(":")
    task: Task = getattr(importlib.import_module(module), attribute)
    return task


def _installed() -> Installed:
    return installed(GROUP, BUILTIN, "task")


@functools.cache
def _from_entry_point(point: EntryPoint) -> Task | PluginError:
    """Load an installed task once: the entry point's object is a task, or a zero-argument
    callable (a class, a function) that returns one. What goes wrong (the import fails or
    exits, the object is no task) is that package's, returned as its one-line error."""
    try:
        loaded = call_plugin(point.load)
        task = call_plugin(lambda: loaded() if _is_factory(loaded) else loaded)
    except PluginError as exc:
        return cannot_load(point, "task", exc)
    try:
        problem = call_plugin(lambda: _problem(point, task))
    except PluginError as exc:  # reading the object ran its code, which failed
        return unusable(point, f"its task cannot be read ({exc})")
    return unusable(point, problem) if problem else task


def _is_factory(value: Any) -> bool:
    return callable(value) and not _looks_like_task(value)


def _problem(point: EntryPoint, task: Any) -> str | None:
    missing = _missing(task)
    if missing:
        return _not_a_task(task, missing)
    if task.name != point.name:
        return (
            f"the task it gives is named {task.name!r}; the entry point's name and the task's "
            "name must be the same"
        )
    return None


def _looks_like_task(value: Any) -> bool:
    return not isinstance(value, type) and not _missing(value)


def _missing(value: Any) -> list[str]:
    return [attribute for attribute in _REQUIRED if not hasattr(value, attribute)]


def _not_a_task(value: Any, missing: list[str]) -> str:
    return (
        f"{type(value).__name__} is not a task (it lacks {', '.join(missing)}); subclass "
        "toolbench.core.TaskBase and give it the Task protocol's members"
    )
