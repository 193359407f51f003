"""A run's work, built from its recipe: sandbox workers, the model, the loaded tasks with their
prompts and executed golds. The driver builds it (``runner.run.execute``) and so does every Ray
node's sample actor (``runner.ray_executor``), from the same pickled ``WorkRecipe``; it lives
here, below both, so neither imports the other for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.agents.registry import make_subject
from toolbench.config import RunConfig
from toolbench.core.capabilities import with_options
from toolbench.core.subject import Subject
from toolbench.core.task import LiveOptions, Resources, Task, prepare
from toolbench.errors import UserError
from toolbench.models.base import FitsData, Model, ModelOptions
from toolbench.models.reference.replay import ReplayModel, check_replay
from toolbench.models.spec import make_model
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.runner.capabilities import NeedsRoles
from toolbench.runner.engine import PreparedTask, SampleWork
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.memo import MemoizedSandbox, ProgramRunner
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import parse_task_list


def prompt_config_for(task: Task, config: RunConfig) -> PromptConfig:
    d = task.defaults
    return PromptConfig(
        mode=config.mode,
        retriever=config.retriever,
        top_k_api=d.top_k_api if config.top_k_api is None else config.top_k_api,
        top_k_example=d.top_k_example if config.top_k_example is None else config.top_k_example,
        max_tokens=d.max_tokens if config.max_tokens is None else config.max_tokens,
        temperature=config.temperature,
        seed=config.seed,
        # None: each task's stops for the mode; a list (--stop, or [] for --no-stop) replaces
        # the harness's stops of every task.
        stop=None if config.stop is None else tuple(config.stop),
        system=config.system_prompt,
    )


def prepare_tasks(
    config: RunConfig,
    sandbox: ProgramRunner,
    cache_dir: Path | None,
    tasks: Sequence[Task] | None = None,
    roles: Mapping[str, Model] | None = None,
) -> list[PreparedTask]:
    """Load every task's data and build its prompts, then execute the golds (a failing gold
    is a ``UserError`` naming file:line, raised before any run folder exists). ``tasks``:
    task objects to run instead of looking ``config.tasks`` up in the registry."""
    data_dir = Path(config.data_dir) if config.data_dir else None
    live = LiveOptions(cache_dir=cache_dir if config.use_cache else None) if config.live else None
    chosen = list(tasks) if tasks is not None else parse_task_list(",".join(config.tasks))
    tasks = with_run_options(chosen, config)
    loaded = [task.load(config.version, data_dir, live) for task in tasks]

    async def run_golds() -> None:
        for task, data in zip(tasks, loaded, strict=True):
            await prepare(task, data, sandbox)

    asyncio.run(run_golds())
    prepared = []
    for task, data in zip(tasks, loaded, strict=True):
        samples = data.samples[: config.limit] if config.limit else data.samples
        prompter = Prompter(data.context, prompt_config_for(task, config), cache_dir)
        prompter.prepare(samples)
        resources = Resources(
            data, sandbox, prompter, max_turns=config.max_turns, roles=dict(roles or {})
        )
        prepared.append(PreparedTask(task=task, resources=resources, samples=samples))
    return prepared


def with_run_options(tasks: Sequence[Task], config: RunConfig) -> list[Task]:
    """The tasks with the run's option values applied; options naming a task that is not in
    the run are refused (they would silently do nothing)."""
    names = {task.name for task in tasks}
    for name, values in config.task_options.items():
        if name not in names and values:
            option = next(iter(values))
            raise UserError(
                f"task option {name}.{option}: task {name} is not in this run; add it to the "
                "tasks or drop the option"
            )
    applied = [with_options(task, config.task_options.get(task.name, {})) for task in tasks]
    for task in applied:
        if not isinstance(task, NeedsRoles):
            continue
        for role, why in task.required_roles().items():
            if role not in config.roles:
                raise UserError(
                    f"task {task.name}: {why}, and the run has no {role!r} model; give one "
                    f"(--role {role}=SPEC)"
                )
    return applied


@dataclass
class WorkRecipe:
    """Everything a process needs to build a run's work itself: the driver builds it here,
    and each Ray node's sample actor builds the same from the same recipe (it is pickled to
    them, so task and model objects given in place of names must pickle)."""

    config: RunConfig
    options: ModelOptions
    cache_dir: Path | None
    sandbox_workers: int | None = None
    tasks: Sequence[Task] | None = None  # task objects instead of config.tasks' names
    subject: Subject | None = None  # a model or agent object instead of config.model's spec
    allow_missing: bool = False


@dataclass
class OpenWork:
    """A run's work, ready to solve, and what was learnt building it."""

    work: SampleWork
    roles: dict[str, Model]
    isolation: dict[str, Any]  # what keeps model-written programs in (the sandbox layers)
    model_notes: dict[str, Any] | None  # what a model that fits the data said (FitsData)


@contextlib.contextmanager
def open_work(recipe: WorkRecipe) -> Iterator[OpenWork]:
    """Sandbox workers, the model, the loaded and prepared tasks (golds executed): the run's
    work, solvable until the context ends (which stops the sandbox workers and releases the
    tasks' resources). Bad input raises ``UserError`` before anything is written."""
    config = recipe.config
    limits = Limits(wall_s=config.sandbox_wall_s, memory_mb=config.sandbox_memory_mb)
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(SandboxPool(workers=recipe.sandbox_workers, limits=limits))
        sandbox: ProgramRunner = pool
        if config.use_cache and recipe.cache_dir is not None:
            memo = MemoizedSandbox(pool, recipe.cache_dir / "executions.sqlite", limits)
            stack.callback(memo.close)
            sandbox = memo
        subject = recipe.subject or make_subject(config.model, recipe.options)
        # --model-arg (replicas too) is the evaluated model's; the roles' models run as given.
        single = recipe.options.without_model_args()
        roles = {role: make_model(spec, single) for role, spec in config.roles.items()}
        prepared = prepare_tasks(config, sandbox, recipe.cache_dir, recipe.tasks, roles)
        work = SampleWork(prepared, config.epochs, subject)
        if isinstance(work.model, ReplayModel):
            _check_replay(work.model, prepared, recipe.allow_missing)
        for task in prepared:  # e.g. a live task's scratch resources, released when the run ends
            stack.callback(task.data.close)
        notes = work.model.fit(prepared) if isinstance(work.model, FitsData) else None
        yield OpenWork(work, roles, pool.isolation, notes)


def _check_replay(model: ReplayModel, prepared: list[PreparedTask], allow_missing: bool) -> None:
    """A replay file that does not fit the data is refused before anything runs (exit 2);
    with --allow-missing the run goes on, samples without a prediction score as crashes, and
    one line on stderr says what was found."""
    known = {p.task.name: {s.id for s in p.data.samples} for p in prepared}
    wanted = {p.task.name: {s.id for s in p.samples} for p in prepared}
    problems = check_replay(model, known, wanted)
    if not problems:
        return
    text = "; ".join(problems)
    if not allow_missing:
        raise UserError(
            f"--model replay:{model.path}: {text}; fix the file, or pass --allow-missing to "
            "score samples without a prediction as crashes"
        )
    print(f"toolbench: warning: replay file {model.path}: {text}", file=sys.stderr)
