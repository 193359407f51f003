"""Bodies of ``toolbench aware run | prompt | human``: evaluating models (and people) on
awareness datasets. Kept apart from dataset building so each file stays readable."""

from __future__ import annotations

import argparse
import getpass
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from toolbench.aware.evaluate.demos import DemoPool
from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.evaluate.items import build_items, evaluated, parse_modes, parse_shots
from toolbench.aware.evaluate.prompts import judge_messages
from toolbench.aware.evaluate.solve import Settings, requests_for
from toolbench.aware.evaluate.summary import render_aware
from toolbench.aware.evaluate.task import JUDGE, TASK
from toolbench.aware.schema import read_instances
from toolbench.cli.run import model_options
from toolbench.config import RunConfig
from toolbench.errors import UserError
from toolbench.models.spec import AWARENESS, FREE_TEXT, require
from toolbench.report.summary import LoadedRun
from toolbench.runner.run import execute

if TYPE_CHECKING:
    from toolbench.config import RunConfig

EXIT_INCOMPLETE = 3


def command_aware_eval(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    if args.aware_command == "run":
        return _run(args, console, default_cache)
    if args.aware_command == "prompt":
        return _prompt(args, console)
    return _human(args, console)


def _run(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    cache_dir = args.cache_dir or default_cache
    config = aware_run_config(args)
    result = execute(
        config,
        model_options(args, cache_dir),
        args.out,
        args.runs_dir,
        cache_dir,
        console,
        allow_missing=args.allow_missing,
        tasks=[TASK],
    )
    render_aware(LoadedRun(result.folder), console)
    calls = result.info["model_calls"]
    console.print(
        f"run folder: {result.folder}  (model calls this session: "
        f"{result.stats.model_calls - result.stats.cached_calls} live, "
        f"{result.stats.cached_calls} cached; all sessions: {calls['live']} live)"
    )
    if result.info["status"] == "incomplete":
        console.print("[yellow]some items hit infra errors; run the same command to retry[/yellow]")
        return EXIT_INCOMPLETE
    return 0


def aware_run_config(args: argparse.Namespace) -> RunConfig:
    """The run ``aware run`` asks for: the awareness task with the dataset and modes as its
    options, the judge as the run's ``judge`` role; the flags' mistakes are refused here,
    before any data is read."""
    modes = parse_modes(args.mode)
    shots = parse_shots(args.shots)
    for flag, given in (("--judge", args.judge), ("--judge-labels", args.judge_labels)):
        if given is not None and "explain" not in modes:  # it would be silently ignored
            raise UserError(f"{flag} grades explanations: add --mode explain, or drop {flag}")
    if "explain" in modes and not args.judge:
        raise UserError("--mode explain needs --judge SPEC (the model that grades explanations)")
    require(args.model, AWARENESS)  # 'baseline' would answer every item unparseably
    if args.judge:
        require(args.judge, FREE_TEXT, "--judge")
    options = {
        "dataset": str(args.dataset),
        "modes": ",".join(modes),
        "shots": ",".join(str(k) for k in shots),
        "seed": args.seed,
        "demos": str(args.demos) if args.demos else None,
        "judge_labels": str(args.judge_labels) if args.judge_labels else None,
        "include_pending": args.include_pending,
        "families": args.limit,
        "encoder": args.encoder,
    }
    return RunConfig(
        tasks=["aware"],
        model=args.model,
        base_url=args.base_url,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        concurrency=args.concurrency,
        use_cache=not args.no_cache,
        task_options={"aware": {k: v for k, v in options.items() if v is not None}},
        roles={JUDGE: args.judge} if args.judge else {},
    )


def _prompt(args: argparse.Namespace, console: Console) -> int:
    instances = evaluated(read_instances(args.dataset), include_pending=True)
    if not instances:
        raise UserError(f"{args.dataset}: the dataset has no instances to show")
    instance = (
        instances[0] if args.id is None else next((i for i in instances if i.id == args.id), None)
    )
    if instance is None:
        raise UserError(f"--id {args.id}: no such instance in {args.dataset}")
    pool_source = read_instances(args.demos) if args.demos else instances
    demos = DemoPool(evaluated(pool_source, args.include_pending), args.seed)
    mode = parse_modes(args.mode)
    items = [
        item
        for item in build_items(instances, mode, parse_shots(args.shots))
        if item.instance.id == instance.id
    ]
    if not items:
        raise UserError(f"--mode {args.mode}: instance {instance.id} is not evaluated in it")
    for item in items:
        for title, request in requests_for(item, demos, Settings(seed=args.seed)):
            console.rule(f"{item.task}  {item.id}  {title}")
            for message in request.messages or ():
                console.print(f"[bold]{message['role']}[/bold]", highlight=False)
                console.print(message["content"], markup=False, highlight=False)
            if request.tools:
                console.print("[bold]tools[/bold]")
                console.print(json.dumps(list(request.tools), indent=2), markup=False)
        if item.kind == "explain":
            console.rule(f"{item.id}  judge (with the model's explanation)")
            for message in judge_messages(item.instance, "<the model's explanation>"):
                console.print(f"[bold]{message['role']}[/bold]", highlight=False)
                console.print(message["content"], markup=False, highlight=False)
    return 0


def _human(args: argparse.Namespace, console: Console) -> int:
    session = HumanSession(
        dataset=args.dataset,
        db=args.db,
        n=args.n,
        balanced=args.balanced,
        seed=args.seed,
        include_pending=args.include_pending,
    )
    if args.report:
        session.render_results(console)
    else:
        # Scores are not shown to annotators: seeing a running accuracy could change how they
        # answer. Whoever runs the study reads them with --report.
        session.annotate(args.annotator or getpass.getuser(), console)
        console.print("answers saved; 'toolbench aware human ... --report' shows the results")
    return 0
