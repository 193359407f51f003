"""The virtual_home task: load and check the data, run the golds in the household, score.

``load`` reads test.jsonl, functions/, examples/ and valid_object_lists.json and refuses a
gold line that fails grounding (exit 2 naming file:line, before any model call; the
original asserted mid-run). ``prepare`` runs every gold in its scene (ours are stored with
the record; an original-layout record gets one derived from its golds) and checks it meets
the record's goals. ``score`` grounds the reply and computes the original's LCS numbers,
then runs it in the household for ``executable_in_world`` and ``goal_success``.

A reply is model output: one over ``MAX_PLAN_CHARS`` is refused (the sample's model error,
saying so), and scoring a long one runs off the event loop with the runner's deadline
(``runner.solve.off_loop``), so no reply can hold up the other samples of a run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.agent import AgentWorld
from toolbench.core.solve import Generate, SampleState, off_loop
from toolbench.core.task import LiveOptions, Resources, TaskData, TaskDefaults, TaskGenerator
from toolbench.errors import UserError
from toolbench.kinds.folder import OfflineFolderTask, load_folder
from toolbench.kinds.single_turn import QueryPrompt, solve_single_turn
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.virtual_home import metrics
from toolbench.tasks.virtual_home.agent_world import VirtualHomeWorld
from toolbench.tasks.virtual_home.derive import derive_scene
from toolbench.tasks.virtual_home.goals import check_goal_syntax, derive_goals, unmet
from toolbench.tasks.virtual_home.grounding import (
    check_labels,
    ground,
    ground_labels,
    read_allow_lists,
    score_grounded,
)
from toolbench.tasks.virtual_home.household import Runtime
from toolbench.tasks.virtual_home.needed import needed_actions
from toolbench.tasks.virtual_home.world import Scene, run_plan
from toolbench.types import Outcome, Sample, Status

ALLOW_FILE = "valid_object_lists.json"
# A plan longer than this is refused unread: the longest gold plan is well under 1,000
# characters, and the original's 256-token replies could not reach a tenth of this.
MAX_PLAN_CHARS = 100_000


@dataclass(frozen=True)
class WorldGold:
    """A sample's household and goals; ``scene`` None when the world metrics are undefined
    for it (a derived scene its own gold cannot run in), with ``why``."""

    scene: Scene | None
    goals: tuple[str, ...] = ()
    why: str = ""


@dataclass
class VirtualHomeTask(QueryPrompt, OfflineFolderTask):
    name: str
    summary: str
    package_dir: Path = field()
    generator: TaskGenerator = field()  # ``toolbench data generate`` (``cli.data.Generates``)
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = metrics.METRICS

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[Runtime]:
        self.refuse_live(live)
        folder = load_folder(self.name, self.package_dir, version, data_dir)
        allow_path = Path(folder.source) / ALLOW_FILE
        if not allow_path.is_file():
            allow_path = self.package_dir / "data" / version / ALLOW_FILE
        allow = read_allow_lists(allow_path)
        data = folder.with_runtime(Runtime(allow))
        for sample in data.samples:
            check_labels(sample.labels, allow, sample.source)
            data.runtime.scenes[sample.id] = _scene_of(sample)
            data.runtime.labels[sample.id] = ground_labels(sample.labels, allow)
        digest = hashlib.sha256((data.digest + "\0").encode() + allow_path.read_bytes())
        data.digest = digest.hexdigest()[:16]
        return data

    async def prepare(self, data: TaskData[Runtime], sandbox: ProgramRunner) -> None:
        """Run the golds in their scenes; pure Python and fast, so no thread is needed."""
        runtime = data.runtime
        for sample in data.samples:
            data.gold[sample.id] = [_world_gold(sample, runtime)]

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        return await solve_single_turn(self, state, generate, resources)

    def extract_action(self, text: str) -> str:
        """The reply as it is: the original scored the whole (stripped) output, so echoed
        headers, prose and code fences count against it."""
        return text.strip()

    async def score(
        self, data: TaskData[Runtime], sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome:
        if len(action) > MAX_PLAN_CHARS:
            return Outcome(
                status=Status.MODEL_ERROR,
                message=f"the plan is {len(action):,} characters; virtual_home reads plans of "
                f"at most {MAX_PLAN_CHARS:,}",
                details={"plan_chars": len(action)},
            )
        return await off_loop(score_sample, data, sample, action, size=len(action))

    def agent_world(
        self, data: TaskData[Runtime], sample: Sample, resources: Resources[Runtime]
    ) -> AgentWorld:
        return VirtualHomeWorld(self, data, sample, resources)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return metrics.aggregate(outcomes)

    def needed_apis(self, sample: Sample) -> list[list[str]]:
        """For tool-removal twins: groups of API docs the chore cannot do without (see
        ``needed``); none for a record without a stored scene and goals."""
        scene, goals = _scene_of(sample), sample.fields.get("goal")
        if scene is None or not isinstance(goals, list):
            return []
        return [list(group) for group in needed_actions(goals, scene)]


def _scene_of(sample: Sample) -> Scene | None:
    raw = sample.fields.get("scene")
    goals = sample.fields.get("goal")
    if goals is not None:
        bad = check_goal_syntax(goals) if isinstance(goals, list) else str(goals)
        if bad is not None:
            raise UserError(f"{sample.source}: 'goal' entry {bad!r} is not a goal predicate")
    if raw is None:
        return None
    try:
        return Scene.from_json(raw)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise UserError(f"{sample.source}: bad 'scene' ({exc}); regenerate the record") from None


def _world_gold(sample: Sample, runtime: Runtime) -> WorldGold:
    """Run each gold; on our scenes a failure is a data error naming file:line."""
    scene = runtime.scenes.get(sample.id)
    derived = scene is None
    if scene is None:
        scene = derive_scene(sample.labels, runtime.allow)
    stated = sample.fields.get("goal")
    goals: list[str] | None = list(stated) if isinstance(stated, list) else None
    for index in range(len(sample.labels)):
        result = run_plan(scene, runtime.labels[sample.id][index])
        problem = (
            f"line {result.failed_line} {result.line!r}: {result.reason}" if not result.ok else ""
        )
        if not problem and goals is None:
            goals = derive_goals(result.state)
        if not problem and goals is not None and unmet(goals, result.state):
            problem = f"goals not met: {', '.join(unmet(goals, result.state))}"
        if not problem:
            continue
        if derived and index == 0:
            return WorldGold(None, why=f"gold plan 1 does not run in the derived scene: {problem}")
        if derived:
            continue  # any further gold of original data is not ours to fix
        raise UserError(f"{sample.source}: gold plan {index + 1} fails in the household, {problem}")
    return WorldGold(scene, tuple(goals or ()))


def score_sample(data: TaskData[Runtime], sample: Sample, action: str) -> Outcome:
    """The original's three numbers, then the household run."""
    runtime = data.runtime
    labels = runtime.labels.get(sample.id)
    if labels is None:
        labels = ground_labels(sample.labels, runtime.allow)
    lcs = score_grounded(ground(action, runtime.allow), labels)
    grounded = lcs.grounded
    values: dict[str, float] = {
        "executability_rate": 1.0 if grounded.executable else 0.0,
        "lcs_score": lcs.score,
    }
    if grounded.executable:
        values["lcs_score_if_executable"] = lcs.score
    details: dict[str, Any] = {"closest_label": lcs.closest_label}
    if grounded.non_executable:
        details["non_executable_lines"] = list(grounded.non_executable)
    gold: WorldGold = data.gold[sample.id][0]
    success = grounded.executable and lcs.score == 1.0
    message = ""
    if gold.scene is None:
        details["world"] = {"undefined": gold.why}
    else:
        world, message = _run_world(gold, grounded.lines, grounded.non_executable)
        details["world"] = world
        values["executable_in_world"] = 1.0 if world["executable"] else 0.0
        values["goal_success"] = 1.0 if world["goal_success"] else 0.0
        success = bool(world["goal_success"])
    return Outcome(
        status=Status.SCORED, success=success, metrics=values, message=message, details=details
    )


def _run_world(
    gold: WorldGold, lines: Sequence[str], non_executable: Sequence[str]
) -> tuple[dict[str, Any], str]:
    """(the record's ``world`` details, one-line reason for a failure or '')."""
    assert gold.scene is not None
    if non_executable:
        bad = non_executable[0]
        number = lines.index(bad) + 1 if bad in lines else 0
        reason = "fails grounding against valid_object_lists.json"
        world = {"executable": False, "goal_success": False, "failed_line": number,
                 "line": bad, "reason": reason}  # fmt: skip
        return world, f"line {number} {bad!r} {reason}"
    result = run_plan(gold.scene, lines)
    if not result.ok:
        world = {"executable": False, "goal_success": False, "failed_line": result.failed_line,
                 "line": result.line, "reason": result.reason}  # fmt: skip
        return world, f"line {result.failed_line} {result.line!r}: {result.reason}"
    missing = unmet(gold.goals, result.state)
    if not missing:  # the record stays small: a success needs no list of nothing
        return {"executable": True, "goal_success": True}, ""
    world = {"executable": True, "goal_success": False, "unmet_goals": missing}
    return world, f"goals not met: {', '.join(missing)}"
