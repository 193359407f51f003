"""The task registry: built-ins found without importing them, installed tasks through the
``toolbench.tasks`` entry points, and a broken or clashing installed task refused by name."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.errors import UserError
from toolbench.tasks import registry

EIGHT = [
    "home_search", "booking", "open_weather", "the_cat_api",
    "google_sheets", "virtual_home", "web_shop", "tabletop",
]  # fmt: skip

TASK_MODULE = """
from toolbench.core import TaskBase, TaskDefaults

class Plugged(TaskBase):
    name = "{name}"
    summary = "a plugged-in task"
    metrics = ("success_rate",)
    defaults = TaskDefaults()
    def versions(self): return ["v0"]
    def load(self, version, data_dir, live=None): raise NotImplementedError
    async def prepare(self, data, sandbox): return None
    async def solve(self, state, generate, resources): raise NotImplementedError
    def aggregate(self, outcomes): return {{}}

TASK = Plugged()
"""


def install(root: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    """A distribution as pip leaves it on a path: its modules and a ``dist-info`` folder with
    the entry points (what ``importlib.metadata`` reads)."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, text in modules.items():
        (root / f"{name}.py").write_text(text)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    registry._from_entry_point.cache_clear()
    yield root
    registry._from_entry_point.cache_clear()
    for name in [m for m in sys.modules if m.startswith("plug_")]:
        del sys.modules[name]


def test_importing_the_registry_imports_no_task_and_no_pandas() -> None:
    code = (
        "import sys, toolbench.tasks.registry as r\n"
        "loaded = [m for m in sys.modules if m.startswith('toolbench.tasks.') or m == 'pandas']\n"
        "assert loaded == ['toolbench.tasks.registry'], loaded\n"
        "print(len(r.task_names()))\n"
        "assert not [m for m in sys.modules if m.startswith('toolbench.tasks.booking')]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 8


def test_the_eight_built_ins_come_first_in_order() -> None:
    assert registry.task_names()[:8] == EIGHT
    assert [task.name for task in registry.all_tasks()][:8] == EIGHT
    assert registry.get_task("booking") is registry.get_task("booking")


def test_an_unknown_name_is_a_user_error_with_a_suggestion() -> None:
    with pytest.raises(UserError, match=r"unknown task 'boking'.*booking"):
        registry.get_task("boking")
    assert registry.find_task("boking") is None


def test_an_installed_task_is_found_by_its_entry_point(site: Path) -> None:
    install(site, "plug-one", "[toolbench.tasks]\nplugged = plug_one:TASK\n",
            {"plug_one": TASK_MODULE.format(name="plugged")})  # fmt: skip
    install(site, "plug-two", "[toolbench.tasks]\nmade = plug_two:Plugged\n",
            {"plug_two": TASK_MODULE.format(name="made")})  # fmt: skip
    installed = registry.task_names()[len(registry.BUILTIN) :]
    assert installed == ["made", "plugged"]  # installed ones by name, after the built-ins
    assert registry.get_task("plugged").summary == "a plugged-in task"
    assert registry.get_task("made").name == "made"  # a class: called with no argument
    assert [task.name for task in registry.parse_task_list("made,booking")] == ["made", "booking"]


def test_a_broken_entry_point_names_its_distribution(site: Path) -> None:
    install(site, "plug-broken", "[toolbench.tasks]\nbroken = plug_broken:TASK\n",
            {"plug_broken": "raise ImportError('needs numpy 9')\n"})  # fmt: skip
    with pytest.raises(UserError) as caught:
        registry.get_task("broken")
    text = str(caught.value)
    assert "entry point broken = plug_broken:TASK" in text and "plug-broken" in text
    assert "needs numpy 9" in text and "\n" not in text


def test_an_object_that_is_not_a_task_or_has_another_name_is_refused(site: Path) -> None:
    install(site, "plug-odd", "[toolbench.tasks]\nodd = plug_odd:TASK\nother = plug_odd:OTHER\n",
            {"plug_odd": TASK_MODULE.format(name="renamed") + "OTHER = 3\n"})  # fmt: skip
    with pytest.raises(UserError, match=r"named 'renamed'.*must be the same"):
        registry.get_task("odd")
    with pytest.raises(UserError, match=r"plug-odd.*is not a task"):
        registry.get_task("other")


def test_a_built_in_name_taken_by_an_installed_task_is_left_out_and_named(site: Path) -> None:
    install(site, "plug-clash", "[toolbench.tasks]\nbooking = plug_clash:TASK\n",
            {"plug_clash": TASK_MODULE.format(name="booking")})  # fmt: skip
    assert registry.task_names().count("booking") == 1  # issue 36: a warning, not an error
    (problem,) = registry.problems()
    assert re.search(r"plug-clash.*built-in task is called 'booking'", problem)
    assert registry.get_task("booking").summary != "a plugged-in task"


def test_register_adds_an_object_but_not_over_a_built_in(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(site, "plug-script", "", {"plug_script": TASK_MODULE.format(name="scripted")})
    from plug_script import TASK, Plugged

    monkeypatch.setattr(registry, "REGISTERED", {})
    registry.register(TASK)
    assert registry.get_task("scripted") is TASK
    clash = Plugged()
    clash.name = "booking"
    with pytest.raises(UserError, match="built-in task has that name"):
        registry.register(clash)


def test_list_tasks_shows_every_built_in(cli: Callable[..., CliResult]) -> None:
    code, out, _ = cli("list", "tasks")
    assert code == 0
    listed = {line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 2}
    assert {*EIGHT, "aware"} <= listed
