"""The public API for scripts: run an evaluation, load a task's data, build a model.

Everything here is what the ``toolbench`` command does, as plain functions::

    import toolbench

    result = toolbench.run(["home_search"], "oracle", limit=5, out="runs/oracle")
    print(result.info["metrics"]["home_search"]["success_rate"])

    data = toolbench.load_task("booking")            # samples, docs, demonstrations
    model = toolbench.make_model("openai:gpt-4o-mini", base_url="http://localhost:8000/v1")
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.config import RunConfig
from toolbench.core.task import Task, TaskData
from toolbench.models.base import Model, ModelOptions
from toolbench.runner.lifecycle import RunResult


def default_cache_dir() -> Path:
    """``$TOOLBENCH_CACHE_DIR``, else ``~/.cache/toolbench``: response cache, execution memo
    and embeddings."""
    env = os.environ.get("TOOLBENCH_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "toolbench"


def run(
    tasks: list[str] | str,
    model: str,
    *,
    out: str | Path | None = None,
    runs_dir: str | Path = "runs",
    cache_dir: str | Path | None = None,
    options: ModelOptions | None = None,
    console: Console | None = None,
    allow_missing: bool = False,
    **config: Any,
) -> RunResult:
    """Evaluate ``model`` (a spec, as ``--model``) on ``tasks``; the run folder, ``run.json``
    and the session's counts come back. ``config`` takes ``RunConfig``'s fields (``limit``,
    ``epochs``, ``mode``, ``concurrency``, ``top_k_api``...). A folder holding the same
    configuration is resumed, as on the command line."""
    from toolbench.runner.run import execute
    from toolbench.tasks.registry import parse_task_list

    names = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    resolved = [task.name for task in parse_task_list(",".join(names))]
    run_config = RunConfig(tasks=resolved, model=model, **config)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if options is None:
        use = run_config.use_cache
        options = ModelOptions(
            base_url=run_config.base_url, cache_path=cache / "responses.sqlite" if use else None
        )
    return execute(
        run_config,
        options,
        out=Path(out) if out is not None else None,
        runs_dir=Path(runs_dir),
        cache_dir=cache,
        console=console or Console(quiet=True),
        allow_missing=allow_missing,
    )


def get_task(name: str) -> Task:
    """The registered task called ``name`` (``UserError`` with a suggestion if unknown)."""
    from toolbench.tasks.registry import get_task as lookup

    return lookup(name)


def load_task(name: str, version: str = "v0", data_dir: str | Path | None = None) -> TaskData:
    """A task's samples, API docs and demonstrations, read and validated (golds not run)."""
    return get_task(name).load(version, Path(data_dir) if data_dir is not None else None)


def make_model(spec: str, **options: Any) -> Model:
    """A model from a spec (``openai:NAME``, ``hf:PATH``, ``oracle``...), with retries and the
    response cache as the command line sets them up; ``options`` are ``ModelOptions`` fields
    (``base_url``, ``api_key``, ``timeout_s``, ``cache_path``...)."""
    from toolbench.models.spec import make_model as build

    return build(spec, ModelOptions(**options))
