"""The ``toolbench`` command: run, prompt, report, data, list, serve, aware.

Errors the user can fix exit with code 2 and one line saying what and how; Ctrl-C leaves a
resumable run and says so.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from toolbench import __version__
from toolbench.errors import UserError
from toolbench.tasks.service import SIMULATED_API_KEY

EXIT_USAGE = 2


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows every default (a flag's help says what it is; the default follows)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus exit code 2), as for every other user
    error, and --help shows each flag's default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

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
    from toolbench.api import default_cache_dir

    return default_cache_dir()


def _add_prompt_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", dest="data_version", default="v0", help="data version (v0)")
    p.add_argument(
        "--data-dir", type=Path, help="a folder in the ToolBench layout <root>/<task>/<version>/"
    )
    p.add_argument(
        "--mode",
        choices=["completion", "chat", "tools"],
        default="completion",
        help="prompt as the original (completion), as chat messages, or as chat messages with "
        "the API as native function tools (home_search, booking)",
    )
    p.add_argument(
        "--retriever", choices=["bm25", "dense"], default="bm25", help="how docs are picked"
    )
    p.add_argument(
        "--top-k-api", type=_non_negative_int, help="API docs in the prompt (task default)"
    )
    p.add_argument("--top-k-example", type=_non_negative_int, help="demonstrations (task default)")
    p.add_argument("--max-tokens", type=_positive_int, help="generation limit (task default)")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="response cache, execution memo and embeddings "
        "(default: $TOOLBENCH_CACHE_DIR, else ~/.cache/toolbench)",
    )


def _add_run_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser("run", help="evaluate a model on one or more tasks")
    run.add_argument("tasks", help="comma-separated task names, e.g. home_search,booking")
    run.add_argument(
        "--model", required=True, help="baseline | oracle | replay:FILE | openai:MODEL | hf:PATH"
    )
    run.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:8000/v1")
    run.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    _add_prompt_flags(run)
    run.add_argument("--temperature", type=_temperature, default=0.0, help="sampling temperature")
    run.add_argument("--seed", type=int, default=0, help="request seed (epoch e sends seed + e)")
    run.add_argument("--concurrency", type=_positive_int, default=8, help="samples solved at once")
    run.add_argument("--epochs", type=_positive_int, default=1, help="repetitions of each sample")
    run.add_argument("--limit", type=_positive_int, help="only the first N samples of each task")
    run.add_argument("--out", type=Path, help="run folder (default runs/<tasks>-<model>-<time>)")
    run.add_argument("--runs-dir", type=Path, default=Path("runs"), help=argparse.SUPPRESS)
    run.add_argument(
        "--no-cache", action="store_true", help="do not read or write the response cache"
    )
    run.add_argument("--timeout", type=float, default=60.0, help="seconds per model request")
    run.add_argument(
        "--max-retries",
        type=_non_negative_int,
        default=6,
        help="retries of a request that failed with 429/5xx/timeout, with backoff",
    )
    run.add_argument(
        "--max-turns",
        type=_positive_int,
        default=10,
        help="model calls a multi-turn solve loop (tool calling, episodes) may make per sample "
        "(web_shop episodes keep the original's 25 steps)",
    )
    run.add_argument(
        "--history",
        type=_non_negative_int,
        default=0,
        metavar="K",
        help="episodes (web_shop): also show the last K actions and pages in each turn's prompt "
        "(default 0: only the current page, as the original)",
    )
    run.add_argument(
        "--fix-corner-name",
        action="store_true",
        help="tabletop: get_corner_name returns 'bottom right corner' (the original's misspelt "
        "'botom right corner', which no other function accepts, is the default)",
    )
    run.add_argument(
        "--allow-missing",
        action="store_true",
        help="replay: run even if the file lacks samples (scored as crashes), names unknown "
        "ids or repeats keys",
    )
    run.add_argument("--sandbox-workers", type=_positive_int, help="processes running programs")
    run.add_argument("--sandbox-timeout", type=float, default=2.0, help="seconds per program")
    run.add_argument(
        "--hf-batch-size", type=_positive_int, default=8, help="hf: prompts per generate call"
    )
    run.add_argument(
        "--live",
        action="store_true",
        help="HTTP tasks: call the real APIs (keys from $OPEN_WEATHER_KEY / $THE_CAT_API_KEY)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toolbench", description="Evaluate LLM tool use on simulated tools.")
    parser.add_argument("--version", action="version", version=f"toolbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    _add_run_parser(sub)

    serve = sub.add_parser("serve", help="serve a simulated API over HTTP on localhost")
    serve.add_argument("task", help="open_weather, the_cat_api or web_shop")
    serve.add_argument("--port", type=_int_at_least(0), default=8000, help="TCP port")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument(
        "--api-key",
        help=f"the one API key the simulator accepts (default: {SIMULATED_API_KEY}); "
        "open_weather only, whose real API checks keys",
    )
    serve.add_argument(
        "--version",
        dest="data_version",
        choices=["v0", "v1"],
        help="web_shop: the page layout of the observations (None: v0)",
    )

    prompt = sub.add_parser("prompt", help="show the exact prompt of a sample")
    prompt.add_argument("task")
    prompt.add_argument("--sample", required=True, help="sample id (line number for original data)")
    _add_prompt_flags(prompt)

    from toolbench.cli.report import add_report_parser
    from toolbench.cli.show import add_show_parser

    add_report_parser(sub)
    add_show_parser(sub)

    data = sub.add_parser("data", help="generate our datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True, parser_class=_Parser)
    gen = data_sub.add_parser("generate", help="regenerate a task's data from its seeded generator")
    gen.add_argument("task")
    gen.add_argument("--split", choices=["test", "train"], default="test")
    gen.add_argument("--n", type=_positive_int, help="number of samples (task default for test)")
    gen.add_argument("--seed", type=int, default=0, help="generator seed")
    gen.add_argument("--out", type=Path, required=True, help="folder to write")

    from toolbench.cli.aware import add_aware_parser

    add_aware_parser(sub, _Parser)

    from toolbench.cli.web_shop import add_web_shop_parser

    add_web_shop_parser(sub, _Parser, _int_at_least)

    lister = sub.add_parser("list", help="list tasks or models")
    lister.add_argument("what", choices=["tasks", "models"], help="what to list")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Piped output (CI logs, files) gets a wide table instead of rich's 80-column default.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        if args.command == "run":
            from toolbench.cli.run import command_run

            return command_run(args, console, _default_cache_dir())
        if args.command == "prompt":
            from toolbench.cli.run import command_prompt

            return command_prompt(args, console, _default_cache_dir())
        if args.command == "report":
            from toolbench.cli.report import command_report

            return command_report(args, console)
        if args.command == "show":
            from toolbench.cli.show import command_show

            return command_show(args, console, _default_cache_dir())
        if args.command == "data":
            from toolbench.cli.data import command_generate

            return command_generate(args, console)
        if args.command == "list":
            from toolbench.cli.listing import command_list

            return command_list(args, console)
        if args.command == "aware":
            from toolbench.cli.aware import command_aware

            return command_aware(args, console, _default_cache_dir())
        if args.command == "web_shop":
            from toolbench.cli.web_shop import command_web_shop

            return command_web_shop(args, console, _default_cache_dir())
        if args.command == "serve":
            from toolbench.cli.serve import command_serve

            return command_serve(args, console)
    except UserError as exc:
        print(f"toolbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolbench: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()
    return EXIT_USAGE


def _reader_went_away() -> int:
    """``toolbench report --json | head``: the reader closed the pipe; stop quietly. Python
    would otherwise print a traceback, and again when it flushes stdout at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0
