"""The public API for scripts: run an evaluation, load a task's data, build a model.

Everything here is what the ``toolbench`` command does, as plain functions::

    import toolbench

    result = toolbench.run(["home_search"], "oracle", limit=5, out="runs/oracle")
    print(result.info["metrics"]["home_search"]["success_rate"])

    data = toolbench.load_task("booking")            # samples, docs, demonstrations
    model = toolbench.make_model("openai:gpt-4o-mini", base_url="http://localhost:8000/v1")

Tasks and models may also be objects (``toolbench.run(task=MyTask(), model=MyModel())``):
``docs/writing-a-task.md`` writes both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from toolbench.config import RunConfig
from toolbench.core.agent import Agent
from toolbench.core.subject import AgentSubject, ModelSubject, Subject
from toolbench.core.task import Task, TaskData
from toolbench.errors import UserError, did_you_mean
from toolbench.models import spec as model_spec
from toolbench.models.base import Model, ModelOptions
from toolbench.package import default_cache_dir
from toolbench.runner.lifecycle import RunResult
from toolbench.runner.run import execute
from toolbench.tasks import registry as task_registry

__all__ = ["default_cache_dir", "get_task", "load_task", "make_model", "run"]

#: What ``run`` takes as tasks: a name, "a,b", a task object, or a list of names and objects.
Tasks = str | Task | Sequence[str | Task]


def run(
    tasks: Tasks | None = None,
    model: str | Model | None = None,
    *,
    agent: Agent | None = None,
    model_args: Mapping[str, Any] | None = None,
    task: str | Task | None = None,
    out: str | Path | None = None,
    runs_dir: str | Path = "runs",
    cache_dir: str | Path | None = None,
    options: ModelOptions | None = None,
    console: Console | None = None,
    allow_missing: bool = False,
    **config: Any,
) -> RunResult:
    """Evaluate ``model`` (or ``agent``) on ``tasks`` (or one ``task``); the run folder,
    ``run.json`` and the session's counts come back. A task is a registered name or a task
    object. A model is a spec, as ``--model`` (an ``agent:`` spec too), or an object with the
    ``Model`` protocol, used as given (a spec gets the retries and response cache its
    registry entry says); ``agent`` is an object with the ``Agent`` protocol. ``model_args``
    are the spec's backend options, as ``--model-arg KEY=VALUE`` (checked by the backend's
    schema, in the runner, as on the command line). ``config`` takes ``RunConfig``'s fields
    (``limit``, ``epochs``, ``mode``, ``concurrency``, ``task_options``...). A folder holding
    the same configuration is resumed, as on the command line."""
    chosen = _tasks(tasks, task)
    subject = _subject(model, agent)
    spec = model if isinstance(model, str) else subject.name if subject is not None else ""
    run_config = _run_config([t.name for t in chosen], spec, config)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if options is None:
        use = run_config.use_cache
        options = ModelOptions(
            base_url=run_config.base_url, cache_path=cache / "responses.sqlite" if use else None
        )
    if model_args is not None:
        options = dataclasses.replace(options, model_args=dict(model_args))
    return execute(
        run_config,
        options,
        out=Path(out) if out is not None else None,
        runs_dir=Path(runs_dir),
        cache_dir=cache,
        console=console or Console(quiet=True),
        allow_missing=allow_missing,
        tasks=chosen,
        subject=subject,
    )


def _subject(model: str | Model | None, agent: Agent | None) -> Subject | None:
    """The object under test ``run`` was given (None for a spec, which the runner resolves):
    a model or an agent, by the keyword it came under."""
    if (model is None) == (agent is None):
        raise UserError(
            "toolbench.run: give a model (a spec such as 'oracle', or an object) or an agent "
            "object (one of them)"
        )
    if agent is not None:
        return AgentSubject(agent)
    return None if isinstance(model, str) else ModelSubject(model)  # type: ignore[arg-type]


#: Former ``RunConfig`` fields that are a backend's options now (``model_args`` keys).
_MOVED = {"hf_dtype": "dtype", "hf_chat_template": "chat_template", "model_replicas": "replicas"}


def _run_config(tasks: list[str], model: str, settings: dict[str, Any]) -> RunConfig:
    """``run``'s keyword settings as a ``RunConfig``: a name that is no field, or a value of
    the wrong kind, is a ``UserError`` naming it (a misspelt ``limt=3`` would otherwise be
    dropped, and the run would not be the one asked for)."""
    fields = set(RunConfig.model_fields) - {"tasks", "model", "model_args"}
    for name in settings:
        if name in _MOVED:  # settings of one backend, now that backend's own options
            raise UserError(
                f"toolbench.run: {name} is a backend option now: pass "
                f"model_args={{{_MOVED[name]!r}: ...}}"
            )
        if name not in fields:
            hint = did_you_mean(name, sorted(fields))
            raise UserError(f"toolbench.run: unknown setting {name!r}{hint}")
    try:
        return RunConfig(tasks=tasks, model=model, **settings)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        given = repr(error.get("input"))
        given = given if len(given) <= 80 else given[:77] + "..."
        raise UserError(f"toolbench.run: {where}={given}: {error['msg']}") from None


def _tasks(tasks: Tasks | None, task: str | Task | None) -> list[Task]:
    """The task objects ``run`` was given, names looked up in the registry ("a,b" is two),
    duplicates dropped (the first kept)."""
    if (tasks is None) == (task is None):
        raise UserError("toolbench.run: give tasks or task (one of them)")
    given = tasks if tasks is not None else task
    single = isinstance(given, str) or not isinstance(given, Sequence)
    items: list[Any] = [given] if single else list(given)  # type: ignore[arg-type]
    chosen: dict[str, Task] = {}
    for item in items:
        for one in task_registry.parse_task_list(item) if isinstance(item, str) else [item]:
            chosen.setdefault(one.name, one)
    if not chosen:
        raise UserError("toolbench.run: no task given; name one or pass a task object")
    return list(chosen.values())


def get_task(name: str) -> Task:
    """The registered task called ``name`` (``UserError`` with a suggestion if unknown)."""
    return task_registry.get_task(name)


def load_task(name: str, version: str = "v0", data_dir: str | Path | None = None) -> TaskData[Any]:
    """A task's samples, API docs and demonstrations, read and validated (golds not run)."""
    return get_task(name).load(version, Path(data_dir) if data_dir is not None else None)


def make_model(spec: str, **options: Any) -> Model:
    """A model from a spec (``openai:NAME``, ``hf:PATH``, ``oracle``...), with retries and the
    response cache as the command line sets them up; ``options`` are ``ModelOptions`` fields
    (``base_url``, ``api_key``, ``timeout_s``, ``cache_path``, ``model_args``...)."""
    return model_spec.make_model(spec, ModelOptions(**options))
