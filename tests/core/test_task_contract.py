"""The task contract stays small and every optional feature is a capability a task has because
it defines it (issue 38): the ``Task`` protocol's members, ``TaskBase`` giving no capability,
the built-in tasks' capabilities, no ``getattr`` probing of tasks or models in ``src``, and no
name of a higher layer in ``toolbench.tasks`` (import cycles: ``tests/test_import_cycles.py``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from toolbench.aware.sources.tasks import ShipsDataFolder, TwinSource
from toolbench.cli.data import Generates
from toolbench.cli.serve import Servable
from toolbench.core.agent import HasAgentWorld
from toolbench.core.capabilities import (
    Aggregates,
    BuildsFirstRequest,
    DataclassOptions,
    HasOptions,
    aggregate,
    option_defaults,
    resolved_options,
    with_options,
)
from toolbench.core.task import Prepares, Task, TaskBase, TaskData, TaskDefaults
from toolbench.errors import UserError
from toolbench.kinds.tool_calling import HasToolset
from toolbench.models.reference.baseline import HasBaselineReply
from toolbench.runner.capabilities import (
    AddsRunInfo,
    FixedSystemPrompt,
    KeepsModelNotes,
    NeedsRoles,
    ShowsHistory,
    Summarizes,
)
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Status

SRC = Path(__file__).parents[2] / "src" / "toolbench"

CAPABILITIES: tuple[type, ...] = (
    Prepares, Aggregates, HasOptions, BuildsFirstRequest, HasAgentWorld, HasToolset,
    NeedsRoles, AddsRunInfo, Summarizes, KeepsModelNotes, ShowsHistory, FixedSystemPrompt,
    TwinSource, ShipsDataFolder, Generates, Servable, HasBaselineReply,
)  # fmt: skip


@dataclass
class Bare(TaskBase):
    """The least a task can be: the contract's members, nothing else."""

    name: str = "bare"
    summary: str = "a task with no capability"
    metrics: tuple[str, ...] = ("success_rate", "f1")
    defaults: TaskDefaults = field(default_factory=TaskDefaults)

    def load(self, version: str, data_dir: Path | None, live: Any = None) -> TaskData[None]:
        raise NotImplementedError

    async def solve(self, state: Any, generate: Any, resources: Any) -> Outcome:
        raise NotImplementedError


def test_the_task_protocol_has_at_most_eight_members() -> None:
    members = {
        name
        for name in [*vars(Task), *Task.__annotations__]
        if not name.startswith("_") and name not in {"mro"}
    }
    assert members == {
        "name", "summary", "metrics", "defaults", "scoring_version", "versions", "load", "solve",
    }  # fmt: skip


def test_task_base_gives_no_capability() -> None:
    task = Bare()
    assert isinstance(task, Task)
    assert [c.__name__ for c in CAPABILITIES if isinstance(task, c)] == []
    assert (task.scoring_version, task.versions()) == ("2", ["v0"])


def test_without_a_capability_the_callers_defaults_hold() -> None:
    task = Bare()
    scored = [Outcome(Status.SCORED, True, {"f1": 1.0}), Outcome(Status.SCORED, False, {"f1": 0.0})]
    assert aggregate(task, scored) == {"success_rate": 0.5, "f1": 0.5}  # its metrics only
    assert option_defaults(task) == {} and resolved_options(task) == {}
    assert with_options(task, {}) is task
    with pytest.raises(UserError, match=r"task bare has no option 'x' \(its options: none\)"):
        with_options(task, {"x": 1})


@dataclass
class Optioned(DataclassOptions, Bare):
    level: int = 1
    option_defaults = MappingProxyType({"level": 1})

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return {"n": float(len(outcomes))}


def test_a_task_has_a_capability_by_defining_it() -> None:
    task = Optioned()
    assert isinstance(task, HasOptions) and isinstance(task, Aggregates)
    assert not isinstance(task, Prepares)
    changed = with_options(task, {"level": 3})
    assert resolved_options(changed) == {"level": 3} and resolved_options(task) == {"level": 1}
    assert aggregate(task, [Outcome(Status.SCORED)]) == {"n": 1.0}
    with pytest.raises(UserError, match="expected int"):
        with_options(task, {"level": "high"})


EXPECTED = {
    "home_search": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld",
                    "HasToolset", "ShipsDataFolder", "Generates"},
    "booking": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld", "HasToolset",
                "ShipsDataFolder", "Generates"},
    "open_weather": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld",
                     "ShipsDataFolder", "Generates", "Servable"},
    "the_cat_api": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld",
                    "ShipsDataFolder", "Generates", "Servable"},
    "google_sheets": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld",
                      "ShipsDataFolder", "Generates"},
    "virtual_home": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld",
                     "ShipsDataFolder", "Generates", "TwinSource"},
    "web_shop": {"Aggregates", "BuildsFirstRequest", "HasAgentWorld", "HasOptions",
                 "ShowsHistory", "ShipsDataFolder", "HasBaselineReply"},
    "tabletop": {"Prepares", "Aggregates", "BuildsFirstRequest", "HasAgentWorld", "HasOptions",
                 "ShipsDataFolder", "Generates", "HasBaselineReply"},
    "aware": {"Aggregates", "BuildsFirstRequest", "HasOptions", "NeedsRoles", "AddsRunInfo",
              "Summarizes", "KeepsModelNotes", "FixedSystemPrompt"},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_built_in_task_has_the_capabilities_it_defines(name: str) -> None:
    task = get_task(name)
    assert {c.__name__ for c in CAPABILITIES if isinstance(task, c)} == EXPECTED[name]


# Probing our tasks and models by attribute name is what the capabilities replace; torch and
# transformers objects are named ``module`` / ``hf_model`` so this reads only ours.
PROBE = re.compile(
    r"\b(getattr\((type\()?task\b|hasattr\(task\b|getattr\(model\b|hasattr\(model\b)"
)


def test_no_getattr_probing_of_tasks_or_models_in_src() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if PROBE.search(line)
    ]
    assert found == []


def test_the_grep_catches_a_probe() -> None:
    assert PROBE.search('own = getattr(type(task), "summarize", None)')
    assert PROBE.search('if hasattr(model, "fit"):')
    assert not PROBE.search('getattr(hf_model, "dtype", "float32")')


def test_the_tasks_layer_names_no_higher_layer() -> None:
    """No string import reaches past the import contract: the awareness task is given to the
    registry by the runner (``runner.builtins``), not named by it."""
    higher = re.compile(r"toolbench\.(aware|envs|agents|runner|report|api|cli)\b")
    found = [
        str(path.relative_to(SRC))
        for path in sorted((SRC / "tasks").rglob("*.py"))
        if higher.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
