"""A new task with an agent world, in a package of its own that touches no toolbench file
(issue 38): written into a temporary folder with a ``dist-info`` naming it in the
``toolbench.tasks`` entry points, as pip leaves an installed distribution, and run end to end
through the command line by a model (``oracle``) and by agents (``agent:oracle``, and
``agent:replay:FILE`` with a wrong plan), each scored by the task's one judge.

The package is the worked example of ``docs/writing-a-task.md`` ("A task an agent can solve"):
the test checks that the page shows this very code, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.core.agent import HasAgentWorld
from toolbench.core.task import Task
from toolbench.tasks import registry

pytest.importorskip("mcp")

DOC = Path(__file__).parents[2] / "docs" / "writing-a-task.md"

LIGHTS = '''\
"""lights: turn on the lamps a request names; a plan line per lamp, or a tool call per lamp."""

from toolbench import core
from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable

ROOMS = ("hall", "kitchen", "study", "porch")
GOALS = {"a": ("hall",), "b": ("kitchen", "porch"), "c": ("study", "hall", "kitchen")}
SWITCH = ToolSpec("switch_on", "Turn on the lamp of one room.", {
    "type": "object", "required": ["room"], "additionalProperties": False,
    "properties": {"room": {"type": "string", "enum": list(ROOMS)}}})


def rooms_of(plan):
    """The task's native action, one ``on ROOM`` line per lamp, as the rooms it turns on."""
    rooms = []
    for line in filter(None, map(str.strip, plan.splitlines())):
        word, _, room = line.partition(" ")
        if word != "on" or room not in ROOMS:
            raise Untranslatable(f"not a plan line: {line[:40]!r}")
        rooms.append(room)
    return rooms


def judge(sample, lit):
    """The one scorer, for a model's plan and an agent's world alike: the lamps that are on."""
    wanted = set(rooms_of(sample.labels[0]))
    extra = float(len(lit - wanted))
    return core.Outcome(core.Status.SCORED, lit == wanted, {"extra_lamps": extra})


def failed(message):
    return core.Outcome(core.Status.MODEL_ERROR, False, {"extra_lamps": 0.0}, message)


class LightsWorld:
    """One sample's house as tools; ``score`` is the task's judge, handed in."""

    tools = (SWITCH,)

    def __init__(self, sample, score):
        self.sample, self.score, self.lit = sample, score, set()

    @property
    def request(self):
        return self.sample.query

    async def call(self, name, arguments):
        room = arguments.get("room") if isinstance(arguments, dict) else None
        if name != "switch_on" or room not in ROOMS:
            return ToolReply(f"switch_on takes a room, one of {', '.join(ROOMS)}", True)
        self.lit.add(room)
        return ToolReply(f"the {room} lamp is on")

    async def outcome(self):
        return self.score(self.sample, self.lit)

    def failed(self, message):
        return failed(message)

    async def translate(self, action):
        return [ToolCall("switch_on", {"room": room}) for room in rooms_of(action)]

    async def gold_calls(self):
        return await self.translate(self.sample.labels[0])

    async def close(self):
        return None


class LightsTask(core.TaskBase):
    name = "lights"
    summary = "turn on the named lamps (one 'on ROOM' line each)"
    metrics = ("success_rate", "extra_lamps")
    defaults = core.TaskDefaults(max_tokens=32)

    def load(self, version, data_dir, live=None):
        samples = [
            core.Sample(key, self.name, "Turn on the lamps of: " + ", ".join(rooms),
                        labels=("\\n".join(f"on {room}" for room in rooms),))
            for key, rooms in GOALS.items()
        ]
        return core.TaskData(self.name, version, samples, core.TaskContext((), ()), __name__, "v0")

    def first_request(self, data, sample, epoch, prompter):
        return core.GenerationRequest(prompt=f"{sample.query}\\nPlan:\\n", max_tokens=32)

    async def solve(self, state, generate, resources):
        request = self.first_request(resources.data, state.sample, state.epoch, None)
        state.prediction = (await generate(request)).text
        try:
            return judge(state.sample, set(rooms_of(state.prediction)))
        except Untranslatable as exc:
            return failed(str(exc))

    def agent_world(self, data, sample, resources):  # HasAgentWorld: agents can solve it
        return LightsWorld(sample, judge)


TASK = LightsTask()
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``lights_pkg`` on the path with the ``dist-info`` pip would write for it."""
    site = tmp_path / "site"
    (site / "lights_pkg").mkdir(parents=True)
    (site / "lights_pkg" / "__init__.py").write_text(LIGHTS)
    info = site / "lights_pkg-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lights-pkg\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[toolbench.tasks]\nlights = lights_pkg:TASK\n")
    monkeypatch.syspath_prepend(str(site))
    registry._from_entry_point.cache_clear()
    yield site
    registry._from_entry_point.cache_clear()
    for name in [m for m in sys.modules if m.startswith("lights_pkg")]:
        del sys.modules[name]


def run(cli: Callable[..., CliResult], out: Path, model: str) -> list[dict]:
    code, stdout, stderr = cli("run", "lights", "--model", model, "--no-cache", "--out", str(out))
    assert code == 0, stdout + stderr
    info, records = read_run(out)
    assert info["status"] == "complete" and len(records) == 3
    return records


def test_the_installed_task_is_a_task_with_an_agent_world(installed: Path) -> None:
    task = registry.get_task("lights")
    assert isinstance(task, Task) and isinstance(task, HasAgentWorld)
    assert "lights" in registry.task_names()


def test_a_model_and_an_agent_solve_it_through_the_command_line(
    installed: Path, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    for model in ("oracle", "agent:oracle"):
        out = tmp_path / model.replace(":", "-")
        records = run(cli, out, model)
        assert all(r["status"] == "scored" and r["success"] for r in records), records
        info = json.loads((out / "run.json").read_text())
        assert info["metrics"]["lights"] == {"success_rate": 1.0, "extra_lamps": 0.0}
    agent_records = read_run(tmp_path / "agent-oracle")[1]
    by_id = {r["id"]: r for r in agent_records}
    calls = [s for s in by_id["c"]["trace"] if s.get("step") == "tool"]
    assert [json.loads(s["arguments"])["room"] for s in calls] == ["study", "hall", "kitchen"]
    assert by_id["c"]["details"]["agent"]["tool_calls"] == 3


def test_the_agent_world_is_judged_by_the_tasks_scorer(
    installed: Path, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A replayed plan: right for a, one lamp too many for b, not a plan at all for c."""
    plans = {"a": "on hall", "b": "on kitchen\non porch\non study", "c": "lights please"}
    replay = tmp_path / "plans.jsonl"
    replay.write_text(
        "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in plans.items())
    )
    by_id = {r["id"]: r for r in run(cli, tmp_path / "replayed", f"agent:replay:{replay}")}
    assert by_id["a"]["success"] is True
    assert by_id["b"]["success"] is False and by_id["b"]["metrics"]["extra_lamps"] == 1.0
    assert by_id["c"]["success"] is False  # no call made: the untouched house is judged
    info = json.loads((tmp_path / "replayed" / "run.json").read_text())
    assert info["metrics"]["lights"]["success_rate"] == pytest.approx(1 / 3)


def test_the_guide_shows_this_package() -> None:
    """``docs/writing-a-task.md`` shows the package's code, line for line."""
    text = DOC.read_text(encoding="utf-8")
    shown = re.search(r"<!-- lights_pkg -->\n```python\n(.*?)```", text, re.S)
    assert shown is not None, "the guide's lights_pkg block is missing"
    assert shown.group(1) == LIGHTS
