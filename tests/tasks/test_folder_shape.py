"""Every built-in task folder has one shape (``docs/writing-a-task.md``, "Folder shape").

The same file name for the same role in every folder: the task object in ``definition.py``,
what the model reads in ``docs.py``, the data in ``data/``, a ``README.md``, and a task's own
agent world in ``agent_world.py``. The checks are functions so that they are also run on a
stray folder and a stray task, which they must reject.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbench.core.agent import HasAgentWorld
from toolbench.tasks import registry

TASKS_DIR = Path(registry.__file__).parent
REQUIRED = ("definition.py", "docs.py", "README.md", "data/")
#: Names that other folders once gave a role, and the name the role has now.
STRAY = {
    "agent.py": "agent_world.py",
    "api.py": "world.py",
    "store.py": "world.py",
    "simulator.py": "world.py",
    "prompts.py": "docs.py",
}


def folder_problems(folder: Path) -> list[str]:
    """What in ``folder`` breaks the shape: a required file missing, or a role's old name."""
    problems = []
    for name in REQUIRED:
        path = folder / name.rstrip("/")
        if not (path.is_dir() if name.endswith("/") else path.is_file()):
            problems.append(f"{folder.name}: no {name}")
    for name, instead in STRAY.items():
        if (folder / name).exists():
            problems.append(f"{folder.name}: {name} should be {instead}")
    return problems


def agent_world_problems(task: Any, package: str, folder: Path) -> list[str]:
    """A task's own agent world lives in ``<package>.agent_world``; a kind's world is the
    kind's (``toolbench.kinds``); a task without one has no ``agent_world.py``."""
    has_file = (folder / "agent_world.py").is_file()
    if not isinstance(task, HasAgentWorld):
        return [f"{package}: agent_world.py but no agent world"] if has_file else []
    method = type(task).agent_world
    if method.__module__.startswith("toolbench.kinds."):
        return []
    if not has_file:
        return [f"{package}: builds its agent world in {method.__module__}, not agent_world.py"]
    where = sys.modules[method.__module__].__dict__
    used = (where.get(name) for name in method.__code__.co_names)
    if not any(getattr(value, "__module__", None) == f"{package}.agent_world" for value in used):
        return [f"{package}: agent_world() builds nothing from {package}.agent_world"]
    return []


def builtin_packages() -> dict[str, str]:
    """Task name -> package, from the registry's built-in references."""
    return {
        name: ref.partition(":")[0].rpartition(".")[0]
        for name, ref in registry.BUILTIN.items()
        if isinstance(ref, str)
    }


def test_every_task_folder_is_a_builtin_task_and_every_builtin_a_folder() -> None:
    folders = {p.parent.name for p in TASKS_DIR.glob("*/__init__.py")}
    packages = builtin_packages()
    assert folders == set(packages)
    assert all(package == f"toolbench.tasks.{name}" for name, package in packages.items())


@pytest.mark.parametrize("name", sorted(builtin_packages()))
def test_the_folder_has_the_shape(name: str) -> None:
    assert folder_problems(TASKS_DIR / name) == []


@pytest.mark.parametrize("name", sorted(builtin_packages()))
def test_an_agent_world_of_its_own_is_in_agent_world_py(name: str) -> None:
    package = builtin_packages()[name]
    task = importlib.import_module(f"{package}.definition").TASK
    assert agent_world_problems(task, package, TASKS_DIR / name) == []


def test_a_stray_folder_is_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "stray"
    folder.mkdir()
    for name in ("__init__.py", "definition.py", "README.md", "agent.py", "prompts.py"):
        (folder / name).write_text("")
    assert folder_problems(folder) == [
        "stray: no docs.py",
        "stray: no data/",
        "stray: agent.py should be agent_world.py",
        "stray: prompts.py should be docs.py",
    ]


class _StrayWorld:
    """An agent world defined beside its task instead of in ``agent_world.py``."""


class _StrayTask:
    name = "stray"

    def agent_world(self, data: Any, sample: Any, resources: Any) -> Any:
        return _StrayWorld()


def test_a_stray_agent_world_is_rejected(tmp_path: Path) -> None:
    here = _StrayTask.__module__
    assert agent_world_problems(_StrayTask(), "stray", tmp_path) == [
        f"stray: builds its agent world in {here}, not agent_world.py"
    ]
    (tmp_path / "agent_world.py").write_text("")
    assert agent_world_problems(_StrayTask(), "stray", tmp_path) == [
        "stray: agent_world() builds nothing from stray.agent_world"
    ]
    assert agent_world_problems(object(), "stray", tmp_path) == [
        "stray: agent_world.py but no agent world"
    ]
