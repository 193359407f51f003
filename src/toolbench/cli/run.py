"""Bodies of ``toolbench run`` and ``toolbench prompt`` (kept apart so --help stays fast)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.agents.registry import backend_keys
from toolbench.aware.evaluate.summary import render_aware
from toolbench.cli import argtypes
from toolbench.config import RunConfig
from toolbench.core.capabilities import BuildsFirstRequest, option_defaults
from toolbench.core.task import Task
from toolbench.errors import UserError
from toolbench.kinds.tool_calling import HasToolset
from toolbench.models.base import ModelOptions
from toolbench.prompts.builder import Mode, Prompter
from toolbench.report.endpoints import endpoint_lines
from toolbench.report.summary import LoadedRun
from toolbench.report.tables import finished_run_grid
from toolbench.report.tokens import tokens_line
from toolbench.runner.capabilities import ShowsHistory
from toolbench.runner.run import RunResult, execute, prompt_config_for
from toolbench.runner.validate import check_history, check_mode, check_system_prompt
from toolbench.tables.grid import render_rich
from toolbench.tasks.registry import get_task, parse_task_list

# A finished run whose infra errors remain (rerun the same command to retry them).
EXIT_INCOMPLETE = 3


def prompt_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The RunConfig fields set by the prompt flags that ``run`` and ``prompt`` share."""
    return {
        "version": args.data_version,
        "mode": Mode(args.mode),
        "retriever": args.retriever,
        "top_k_api": args.top_k_api,
        "top_k_example": args.top_k_example,
        "max_tokens": args.max_tokens,
        "stop": stop_setting(args),
        "system_prompt": args.system_prompt,
    }


def stop_setting(args: argparse.Namespace) -> list[str] | None:
    """``--stop`` / ``--no-stop``: the run's stop sequences, or None for the defaults."""
    if args.no_stop and args.stop:
        raise UserError("--stop and --no-stop: give one of them")
    if args.no_stop:
        return []
    return list(args.stop) if args.stop else None


def task_options_from(args: argparse.Namespace, tasks: list[Task]) -> dict[str, dict[str, Any]]:
    """The task options the run's flags set: each ``--task-option TASK.NAME=VALUE``, and the
    shorthands ``--history K`` (the episode tasks that show earlier pages) and
    ``--fix-corner-name`` (the task that has that option, tabletop). Names and values are
    checked by the task itself (``with_options``) when the run applies them."""
    options: dict[str, dict[str, Any]] = {}
    for task_name, option, value in args.task_option:
        options.setdefault(task_name, {})[option] = value
    for task in tasks:
        if args.history and isinstance(task, ShowsHistory):
            options.setdefault(task.name, {})["history"] = args.history
    if args.fix_corner_name:
        fixable = [task for task in tasks if "fix_corner_name" in option_defaults(task)]
        if not fixable:
            raise UserError(
                "--fix-corner-name is for tabletop: add tabletop to the tasks or drop it"
            )
        for task in fixable:
            options.setdefault(task.name, {})["fix_corner_name"] = True
    return options


def endpoints_of(args: argparse.Namespace) -> list[str]:
    """The run's endpoints: each ``--base-url`` (one for commands that take one), then the
    lines of ``--base-urls-file``; duplicates dropped, order kept."""
    given = args.base_url
    urls = list(given) if isinstance(given, list) else [given] if given else []
    path = getattr(args, "base_urls_file", None)
    if path is not None:
        urls.extend(read_endpoints_file(path))
    return list(dict.fromkeys(urls))


def read_endpoints_file(path: Path) -> list[str]:
    """``--base-urls-file``: one URL per line; blank lines and ``#`` comments skipped; a bad
    line is refused naming file:line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--base-urls-file {path}: unreadable ({exc})") from None
    urls = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            urls.append(argtypes.url(line))
        except argparse.ArgumentTypeError as exc:
            raise UserError(f"{path}:{number}: {exc}") from None
    if not urls:
        raise UserError(f"--base-urls-file {path}: no URL in it; write one per line")
    return urls


def endpoint_identity(urls: list[str]) -> str | None:
    """The server's identity in the fingerprint and the response cache: the URL, or for a
    pool the URLs sorted and joined by spaces (which replica answers never matters)."""
    return " ".join(sorted(urls)) if urls else None


#: The backend flags kept as aliases of ``--model-arg KEY=VALUE``: flag's dest -> KEY. A given
#: one sets that option of a backend that has it; a backend without it ignores it, as before
#: (``--model-replicas`` excepted: a backend that cannot be replicated refuses it).
ALIASES = {
    "hf_batch_size": "batch_size",
    "hf_device": "device",
    "hf_dtype": "dtype",
    "hf_chat_template": "chat_template",
    "agent_timeout": "timeout",
    "agent_network": "network",
    "agent_memory": "memory",
    "agent_env": "env",
    "max_response_bytes": "max_response_bytes",
}


def model_args_from(args: argparse.Namespace) -> dict[str, Any]:
    """The backend options of ``run``'s flags: the aliases given, then each ``--model-arg``
    (which wins). Nothing is checked here: the runner checks them against the backend's
    schema, for the command line and ``toolbench.run`` alike."""
    keys = backend_keys(args.model)
    given: dict[str, Any] = {}
    for dest, key in ALIASES.items():
        value = vars(args)[dest]
        if value not in (None, []) and key in keys:
            given[key] = value
    if args.model_replicas is not None:
        given["replicas"] = args.model_replicas
        if args.ray_address is not None and "ray_address" in keys:
            given["ray_address"] = args.ray_address
    given.update(dict(args.model_arg))
    return given


def model_options(
    args: argparse.Namespace, cache_dir: Path, model_args: dict[str, Any] | None = None
) -> ModelOptions:
    """Backend settings from the model flags every model-calling command shares, and the
    backend's own options (``model_args``: ``run``'s ``model_args_from``)."""
    urls = endpoints_of(args)
    return ModelOptions(
        base_url=urls[0] if urls else None,
        base_urls=tuple(urls) if len(urls) > 1 else (),
        api_key=args.api_key,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        retry_budget_s=getattr(args, "retry_budget", None),
        cache_path=None if args.no_cache else cache_dir / "responses.sqlite",
        model_args=model_args or {},
    )


def command_run(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    tasks = parse_task_list(args.tasks)  # fail fast on unknown names, before anything else
    check_history(tasks, args.history)  # a flag's own check; the run's are in execute
    config = RunConfig(
        tasks=[t.name for t in tasks],
        model=args.model,
        data_dir=str(args.data_dir) if args.data_dir else None,
        base_url=endpoint_identity(endpoints_of(args)),
        **prompt_settings(args),
        temperature=args.temperature,
        seed=args.seed,
        epochs=args.epochs,
        limit=args.limit,
        concurrency=args.concurrency,
        sandbox_wall_s=args.sandbox_timeout,
        use_cache=not args.no_cache,
        live=args.live,
        max_turns=args.max_turns,
        task_options=task_options_from(args, tasks),
        roles=dict(args.role),
        executor=args.executor,
        ray_address=args.ray_address,
    )
    cache_dir = args.cache_dir or default_cache
    options = model_options(args, cache_dir, model_args_from(args))
    result = execute(
        config,
        options,
        out=args.out,
        runs_dir=args.runs_dir,
        cache_dir=cache_dir,
        console=console,
        sandbox_workers=args.sandbox_workers,
        allow_missing=args.allow_missing,
    )
    print_summary(result, console)
    return EXIT_INCOMPLETE if result.info["status"] == "incomplete" else 0


def print_summary(result: RunResult, console: Console) -> None:
    info = result.info
    if info.get("kind") == "aware":  # the awareness tables, as `report` prints them
        render_aware(LoadedRun(result.folder), console)
    else:
        title = f"{info['config']['model']}  —  {result.folder}"
        render_rich(finished_run_grid(title, info), console)
    stats = result.stats
    rate = f"{stats.done / stats.elapsed_s:.1f} samples/s" if stats.elapsed_s else "-"
    console.print(
        f"status: {info['status']}   this session: {stats.done} samples, {rate} "
        "(solving only, loading excluded), "
        f"model calls {stats.model_calls} ({stats.cached_calls} from cache)"
    )
    tokens = tokens_line(info)  # the run's totals over all its sessions
    if tokens is not None:
        console.print(tokens, markup=False, highlight=False, soft_wrap=True)
    for line in endpoint_lines(info):  # --base-url repeated: what each endpoint did
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if info["status"] == "incomplete" and "stopped" not in info:  # else the runner said why
        console.print("infra errors remain: run the same command again to retry them")


def command_prompt(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    task = get_task(args.task)
    check_mode([task], args.mode)
    check_system_prompt([task], args.mode, args.system_prompt)
    config = RunConfig(tasks=[task.name], model="-", **prompt_settings(args))
    data = task.load(args.data_version, args.data_dir)  # reads only: no gold is executed
    by_id = {s.id: s for s in data.samples}
    if args.sample not in by_id:
        raise UserError(
            f"--sample {args.sample}: no such sample in {data.source} "
            f"(ids run {data.samples[0].id} .. {data.samples[-1].id})"
        )
    prompter = Prompter(
        data.context, prompt_config_for(task, config), args.cache_dir or default_cache
    )
    # The task's first model call, built by the code its solve loop sends it with.
    if not isinstance(task, BuildsFirstRequest):
        raise UserError(f"task {task.name} builds no prompt without solving (no first_request)")
    request = task.first_request(data, by_id[args.sample], 0, prompter)
    if request.prompt is not None:
        console.out(request.prompt, end="", highlight=False)
    else:
        for message in request.messages or ():
            console.rule(message["role"])
            console.out(message["content"], highlight=False)
    if args.mode == Mode.TOOLS.value and isinstance(task, HasToolset):
        console.rule("tools")
        console.out(json.dumps(list(task.toolset.openai()), indent=2), highlight=False)
    # What ends the reply, as sent: repr quotes each stop so a "\n" or a space shows.
    if request.prompt is not None and not request.prompt.endswith("\n"):
        console.out("")  # the rule on a line of its own, after a prompt that ends mid-line
    console.rule("generation")
    stops = ", ".join(repr(stop) for stop in request.stop) or "none"
    console.out(f"max_tokens: {request.max_tokens}\nstop: {stops}", highlight=False)
    return 0
