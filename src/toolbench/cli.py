"""The ``toolbench`` command: run, prompt, report, data, list, serve, aware.

Errors the user can fix exit with code 2 and one line saying what and how; Ctrl-C leaves a
resumable run and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.table import Table

from toolbench import __version__
from toolbench.errors import UserError
from toolbench.tasks.service import SIMULATED_API_KEY

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus exit code 2), as for every other user error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type for whole numbers >= minimum, with a one-line message otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {minimum}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 2.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 2")
    return value


def _default_cache_dir() -> Path:
    env = os.environ.get("TOOLBENCH_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "toolbench"


def _add_prompt_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", dest="data_version", default="v0", help="data version (v0)")
    p.add_argument(
        "--data-dir", type=Path, help="a folder in the ToolBench layout <root>/<task>/<version>/"
    )
    p.add_argument("--mode", choices=["completion", "chat"], default="completion")
    p.add_argument("--retriever", choices=["bm25", "dense"], default="bm25")
    p.add_argument(
        "--top-k-api", type=_non_negative_int, help="API docs in the prompt (task default)"
    )
    p.add_argument("--top-k-example", type=_non_negative_int, help="demonstrations (task default)")
    p.add_argument("--max-tokens", type=_positive_int, help="generation limit (task default)")
    p.add_argument("--cache-dir", type=Path, default=None, help="response cache and embeddings")


def _add_report_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    report = sub.add_parser("report", help="metrics with 95%% CIs; paired difference of two runs")
    report.add_argument("runs", nargs="+", type=Path)
    report.add_argument("--json", action="store_true", help="print JSON instead of tables")
    report.add_argument(
        "--allow-modified",
        action="store_true",
        help="report a run whose log was modified after it was written (with a warning)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toolbench", description="Evaluate LLM tool use on simulated tools.")
    parser.add_argument("--version", action="version", version=f"toolbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="evaluate a model on one or more tasks")
    run.add_argument("tasks", help="comma-separated task names, e.g. home_search,booking")
    run.add_argument(
        "--model", required=True, help="baseline | oracle | replay:FILE | openai:MODEL | hf:PATH"
    )
    run.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:8000/v1")
    run.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    _add_prompt_flags(run)
    run.add_argument("--temperature", type=_temperature, default=0.0)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--concurrency", type=_positive_int, default=8)
    run.add_argument("--epochs", type=_positive_int, default=1)
    run.add_argument("--limit", type=_positive_int, help="only the first N samples of each task")
    run.add_argument("--out", type=Path, help="run folder (default runs/<tasks>-<model>-<time>)")
    run.add_argument("--runs-dir", type=Path, default=Path("runs"), help=argparse.SUPPRESS)
    run.add_argument(
        "--no-cache", action="store_true", help="do not read or write the response cache"
    )
    run.add_argument("--timeout", type=float, default=60.0, help="seconds per model request")
    run.add_argument("--max-retries", type=_non_negative_int, default=6)
    run.add_argument("--sandbox-workers", type=_positive_int, help="processes running programs")
    run.add_argument("--sandbox-timeout", type=float, default=2.0, help="seconds per program")
    run.add_argument("--hf-batch-size", type=_positive_int, default=8)
    run.add_argument(
        "--live",
        action="store_true",
        help="HTTP tasks: call the real APIs (keys from $OPEN_WEATHER_KEY / $THE_CAT_API_KEY)",
    )

    serve = sub.add_parser("serve", help="serve a simulated API over HTTP on localhost")
    serve.add_argument("task", help="open_weather or the_cat_api")
    serve.add_argument("--port", type=_int_at_least(0), default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument(
        "--api-key",
        help=f"the one API key the simulator accepts (default: {SIMULATED_API_KEY}); "
        "open_weather only, whose real API checks keys",
    )

    prompt = sub.add_parser("prompt", help="show the exact prompt of a sample")
    prompt.add_argument("task")
    prompt.add_argument("--sample", required=True, help="sample id (line number for original data)")
    _add_prompt_flags(prompt)

    _add_report_parser(sub)

    data = sub.add_parser("data", help="generate our datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True, parser_class=_Parser)
    gen = data_sub.add_parser("generate", help="regenerate a task's data from its seeded generator")
    gen.add_argument("task")
    gen.add_argument("--split", choices=["test", "train"], default="test")
    gen.add_argument("--n", type=_positive_int, help="number of samples (task default for test)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", type=Path, required=True, help="folder to write")

    from toolbench.cli_aware import add_aware_parser

    add_aware_parser(sub, _Parser)

    lister = sub.add_parser("list", help="list tasks or models")
    lister.add_argument("what", choices=["tasks", "models"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Piped output (CI logs, files) gets a wide table instead of rich's 80-column default.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        if args.command == "run":
            from toolbench.cli_run import command_run

            return command_run(args, console, _default_cache_dir())
        if args.command == "prompt":
            from toolbench.cli_run import command_prompt

            return command_prompt(args, console, _default_cache_dir())
        if args.command == "report":
            return command_report(args, console)
        if args.command == "data":
            from toolbench.cli_data import command_generate

            return command_generate(args, console)
        if args.command == "list":
            return command_list(args, console)
        if args.command == "aware":
            from toolbench.cli_aware import command_aware

            return command_aware(args, console, _default_cache_dir())
        if args.command == "serve":
            return command_serve(args, console)
    except UserError as exc:
        print(f"toolbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolbench: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    return EXIT_USAGE


def command_report(args: argparse.Namespace, console: Console) -> int:
    from toolbench.aware.evaluate import summary as aware
    from toolbench.report import summary as tables

    runs = tables.load_runs(args.runs, args.allow_modified)
    kinds = [run.info.get("kind", "tasks") for run in runs]
    if len(runs) == 2 and kinds[0] != kinds[1]:
        raise UserError(
            f"cannot compare {runs[0].folder} ({kinds[0]}) with {runs[1].folder} ({kinds[1]}): "
            "a paired difference needs two runs of the same kind"
        )
    if args.json:
        result = tables.report_json([r for r, k in zip(runs, kinds, strict=True) if k != "aware"])
        for run, kind in zip(runs, kinds, strict=True):
            if kind == "aware":
                result["runs"][str(run.folder)] = aware.aware_json(run)
        if len(runs) == 2 and kinds[0] == "aware":
            result["difference"] = aware.aware_comparison_json(runs[0], runs[1])
        print(json.dumps({**result, **tables.checks_json(runs)}, indent=2))
        return 0
    for run, kind in zip(runs, kinds, strict=True):
        tables.render_checks(run, console)
        (aware.render_aware if kind == "aware" else tables.render_summary)(run, console)
    if len(runs) == 2:
        compare = aware.render_aware_comparison if kinds[0] == "aware" else tables.render_comparison
        compare(runs[0], runs[1], console)
    return 0


def command_serve(args: argparse.Namespace, console: Console) -> int:
    """Serve a simulator so other agent frameworks can call it like the real API."""
    import uvicorn

    from toolbench.tasks.http_exec import serving_app
    from toolbench.tasks.registry import get_task

    task = get_task(args.task)
    service = getattr(task, "service", None)
    if service is None:
        raise UserError(f"task {task.name} has no HTTP service to serve (try open_weather)")
    app, key = serving_app(service), SIMULATED_API_KEY
    if args.api_key is not None:
        app, key = _app_accepting(service, task.name, args.api_key), args.api_key
    console.print(
        f"serving the simulated {task.name} API for host(s) {', '.join(sorted(service.hosts))} "
        f"on http://{args.host}:{args.port}  (API key: {key}; Ctrl-C stops)",
        markup=False,
        highlight=False,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _app_accepting(service: Any, task: str, key: str) -> Any:
    """The service bound to one world that accepts ``key`` (and no other key)."""
    from toolbench.tasks.http_exec import bind_world

    world_accepting = getattr(service, "world_accepting", None)
    if world_accepting is None:
        raise UserError(f"--api-key: the {task} simulator checks no API key; drop the flag")
    if not key or not key.isprintable() or any(ch.isspace() for ch in key) or len(key) > 256:
        raise UserError(
            "--api-key: give 1 to 256 printable characters without spaces, e.g. --api-key abc123"
        )
    world = world_accepting(key)
    return bind_world(service.app, lambda: world)


def command_list(args: argparse.Namespace, console: Console) -> int:
    table = Table()
    if args.what == "tasks":
        from toolbench.tasks.registry import TASKS

        for column in ("task", "versions", "metrics", "what the model writes"):
            table.add_column(column)
        for task in TASKS.values():
            table.add_row(
                task.name, ", ".join(task.versions()), ", ".join(task.metrics), task.summary
            )
    else:
        from toolbench.models.spec import KNOWN_MODELS

        table.add_column("model spec")
        table.add_column("what it is")
        for spec, description in KNOWN_MODELS:
            table.add_row(spec, description)
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
