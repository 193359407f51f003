"""The ``toolbench`` command: run, prompt, report, data, list, serve, aware.

Errors the user can fix exit with code 2 and one line saying what and how; Ctrl-C leaves a
resumable run and says so.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from rich.console import Console

from toolbench import __version__
from toolbench.agents.registry import builtin_subjects
from toolbench.cli import argtypes
from toolbench.cli.aware_parser import add_aware_parser
from toolbench.cli.parsers import add_report_parser, add_show_parser, add_web_shop_parser
from toolbench.cli.usage import EXIT_USAGE
from toolbench.cli.usage import Parser as _Parser
from toolbench.errors import UserError
from toolbench.kinds.service import SIMULATED_API_KEY
from toolbench.models.registry import TOOL_TASKS
from toolbench.package import default_cache_dir
from toolbench.runner.invocation import set_arguments
from toolbench.sandbox import isolation
from toolbench.sandbox.limits import DEFAULT_WALL_S

# Each command's module and the function that runs it. main() imports the module only when its
# command runs (_dispatch, the one place): building the parser (--help too) and any one command
# then load none of the other commands' dependencies (report's HTML and plots, Starlette and
# uvicorn, the aware pipeline, the MCP SDK...).
_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("toolbench.cli.run", "command_run"),
    "prompt": ("toolbench.cli.run", "command_prompt"),
    "report": ("toolbench.cli.report", "command_report"),
    "show": ("toolbench.cli.show", "command_show"),
    "data": ("toolbench.cli.data", "command_generate"),
    "list": ("toolbench.cli.listing", "command_list"),
    "aware": ("toolbench.cli.aware", "command_aware"),
    "web_shop": ("toolbench.cli.web_shop", "command_web_shop"),
    "serve": ("toolbench.cli.serve", "command_serve"),
}
# The commands whose function takes the cache folder as its third argument.
_USES_CACHE = frozenset({"run", "prompt", "show", "aware", "web_shop"})


def _cache_dir(args: argparse.Namespace, *, check: bool = True) -> Path:
    """The cache folder (--cache-dir, else $TOOLBENCH_CACHE_DIR, else ~/.cache/toolbench),
    created and proved writable before any work, so an unusable one is one line naming where
    it came from instead of a traceback from deep inside the cache (``check=False``: the
    command may not write it)."""
    flag = getattr(args, "cache_dir", None)
    if flag is not None:
        path, source = flag, "--cache-dir"
    else:
        path = default_cache_dir()
        source = "$TOOLBENCH_CACHE_DIR" if os.environ.get("TOOLBENCH_CACHE_DIR") else "cache"
    if not check:
        return path
    fix = "give a folder you can write"
    if flag is None:
        fix += " in --cache-dir or $TOOLBENCH_CACHE_DIR"
    return argtypes.writable_folder(path, source, fix)


def _check_environment(args: argparse.Namespace) -> None:
    """Settings read from the environment are checked up front like flags: a typo is refused
    before any work, not found (as a traceback) at the end of a run."""
    if isolation.requested() == "full" and args.command == "run":
        isolation.detect()  # probes once (cached for the run); missing layer: one line


def _add_prompt_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", dest="data_version", default="v0", help="data version")
    p.add_argument(
        "--data-dir",
        type=argtypes.PathArg("folder"),
        help="a folder in the ToolBench layout <root>/<task>/<version>/ (default: the task's "
        "own data)",
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
        "--top-k-api", type=argtypes.non_negative_int, help="API docs in the prompt (task default)"
    )
    p.add_argument(
        "--top-k-example", type=argtypes.non_negative_int, help="demonstrations (task default)"
    )
    p.add_argument(
        "--max-tokens", type=argtypes.positive_int, help="generation limit (task default)"
    )
    p.add_argument(
        "--stop",
        type=argtypes.stop_sequence,
        action="append",
        metavar="TEXT",
        help="a stop sequence for every request instead of the task's and mode's own "
        "(repeatable; \\n is a newline); 'toolbench prompt' shows the defaults",
    )
    p.add_argument("--no-stop", action="store_true", help="send no stop sequences at all")
    p.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="chat and tools modes: the instruction (system message) instead of the task's own",
    )
    p.add_argument(
        "--cache-dir",
        type=argtypes.PathArg("new_folder"),
        help="response cache, execution memo and embeddings "
        "(default: $TOOLBENCH_CACHE_DIR, else ~/.cache/toolbench)",
    )


def _add_run_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser("run", help="evaluate a model on one or more tasks")
    run.add_argument("tasks", help="comma-separated task names, e.g. home_search,booking")
    run.add_argument(
        "--model",
        required=True,
        help=" | ".join(m.spec for m in builtin_subjects() if TOOL_TASKS in m.answers)
        + " (toolbench list models says what each is, installed models too)",
    )
    run.add_argument(
        "--model-arg",
        type=argtypes.model_arg,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the model's backend (repeatable), e.g. dtype=bfloat16 for hf:, "
        "timeout=60 for agent:; 'toolbench list models' names each backend's options. The "
        "--hf-*, --agent-* and --model-replicas flags are aliases of these",
    )
    run.add_argument(
        "--base-url",
        type=argtypes.url,
        action="append",
        help="OpenAI-compatible server, e.g. http://localhost:8000/v1; repeat it for several "
        "endpoints serving the model (requests go to the least busy)",
    )
    run.add_argument(
        "--base-urls-file",
        type=argtypes.PathArg("file"),
        metavar="FILE",
        help="endpoints serving the model, one URL per line (# comments), with any --base-url",
    )
    run.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    _add_prompt_flags(run)
    run.add_argument(
        "--temperature", type=argtypes.temperature, default=0.0, help="sampling temperature"
    )
    run.add_argument(
        "--seed", type=argtypes.seed, default=0, help="request seed (epoch e sends seed + e)"
    )
    run.add_argument(
        "--concurrency", type=argtypes.positive_int, default=8, help="samples solved at once"
    )
    run.add_argument(
        "--epochs", type=argtypes.positive_int, default=1, help="repetitions of each sample"
    )
    run.add_argument(
        "--limit", type=argtypes.positive_int, help="only the first N samples of each task"
    )
    run.add_argument(
        "--out",
        type=argtypes.PathArg("new_folder"),
        help="run folder (default: runs/<tasks>-<model>-<time>)",
    )
    run.add_argument(
        "--runs-dir", type=argtypes.PathArg("new_folder"), default=Path("runs"),
        help=argparse.SUPPRESS,
    )  # fmt: skip
    run.add_argument(
        "--no-cache", action="store_true", help="do not read or write the response cache"
    )
    run.add_argument(
        "--timeout", type=argtypes.seconds, default=60.0, help="seconds per model request"
    )
    run.add_argument(
        "--max-response-bytes",
        type=argtypes.positive_int,
        metavar="N",
        help="openai: bytes of one model server reply read at most, after decompression (16 "
        "MiB); a longer reply is that sample's infra error (alias of --model-arg "
        "max_response_bytes=N)",
    )
    run.add_argument(
        "--agent-timeout",
        type=argtypes.seconds,
        metavar="SECONDS",
        help="agent:COMMAND: wall time of one attempt before everything it started is killed "
        "(300; alias of --model-arg timeout=SECONDS)",
    )
    run.add_argument(
        "--agent-network",
        choices=("host", "none"),
        help="agent:COMMAND: host (default: it may call remote model APIs) or none (only its "
        "sample's MCP endpoint); alias of --model-arg network=...",
    )
    run.add_argument(
        "--agent-memory",
        type=argtypes.non_negative_int,
        metavar="MB",
        help="agent:COMMAND: address space of each of its processes (8192; 0: unlimited; "
        "alias of --model-arg memory=MB)",
    )
    run.add_argument(
        "--agent-env",
        action="append",
        default=[],
        metavar="NAME",
        help="agent:COMMAND: pass this variable of your environment to the agent (repeatable; "
        "*_API_KEY, *_BASE_URL, PATH, proxies and locale pass anyway; alias of --model-arg "
        "env=A,B)",
    )
    run.add_argument(
        "--max-retries",
        type=argtypes.non_negative_int,
        default=6,
        help="retries of a request that failed with 429/5xx/timeout, with backoff",
    )
    run.add_argument(
        "--retry-budget",
        type=argtypes.seconds,
        help="seconds one request may spend on all its attempts and waits (default: 3x "
        "--timeout, at least 60)",
    )
    run.add_argument(
        "--max-turns",
        type=argtypes.positive_int,
        default=10,
        help="model calls a multi-turn solve loop (tool calling, episodes) may make per sample "
        "(web_shop episodes keep the original's 25 steps)",
    )
    run.add_argument(
        "--history",
        type=argtypes.non_negative_int,
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
        "--task-option",
        type=argtypes.task_option,
        action="append",
        default=[],
        metavar="TASK.NAME=VALUE",
        help="set one of a task's options (repeatable; VALUE is JSON or text), e.g. "
        "web_shop.history=2; 'toolbench list tasks' names each task's options",
    )
    run.add_argument(
        "--role",
        type=argtypes.role,
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="a further model a task needs, by role (repeatable), e.g. judge=openai:gpt-4o-mini "
        "for the aware task's explain mode",
    )
    run.add_argument(
        "--allow-missing",
        action="store_true",
        help="replay: run even if the file lacks samples (scored as crashes), names unknown "
        "ids or repeats keys",
    )
    run.add_argument(
        "--sandbox-workers",
        type=argtypes.positive_int,
        help="processes running programs (default: one per CPU)",
    )
    run.add_argument(
        "--sandbox-timeout",
        type=argtypes.seconds,
        default=DEFAULT_WALL_S,
        help="seconds per program",
    )
    run.add_argument(
        "--hf-batch-size",
        type=argtypes.positive_int,
        help="hf: prompts per generate call (8; alias of --model-arg batch_size=N)",
    )
    run.add_argument(
        "--hf-device",
        type=argtypes.hf_device,
        help="hf: where the model runs: auto (a GPU when there is one), cpu, mps, cuda[:N] "
        "(alias of --model-arg device=...)",
    )
    run.add_argument(
        "--hf-chat-template",
        type=argtypes.PathArg("file"),
        help="hf: a Jinja chat template file to use instead of the tokenizer's own (alias of "
        "--model-arg chat_template=FILE)",
    )
    run.add_argument(
        "--hf-dtype",
        choices=["auto", "float32", "bfloat16", "float16"],
        help="hf: weight dtype (auto: the checkpoint's on a GPU, float32 on the CPU; alias of "
        "--model-arg dtype=...)",
    )
    run.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where samples are solved: this process, or across a Ray cluster's nodes "
        "(pip install 'toolbench[ray]')",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="the Ray cluster: auto, HOST:PORT or ray://HOST:PORT (default: $RAY_ADDRESS, "
        "else a local cluster started for the run)",
    )
    run.add_argument(
        "--model-replicas",
        type=argtypes.positive_int,
        metavar="N",
        help="hf: serve the model as N Ray actors (on GPUs where the cluster has them; alias "
        "of --model-arg replicas=N)",
    )
    run.add_argument(
        "--live",
        action="store_true",
        help="HTTP tasks: call the real APIs (keys from $OPEN_WEATHER_KEY / $THE_CAT_API_KEY)",
    )


def _add_serve_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    serve = sub.add_parser(
        "serve", help="serve a simulated API over HTTP on localhost, or a task's world over MCP"
    )
    serve.add_argument("task", help="open_weather, the_cat_api or web_shop; with --mcp any task")
    serve.add_argument("--port", type=argtypes.port, default=8000, help="TCP port (0: any free)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument(
        "--api-key",
        help=f"the one API key the simulator accepts (default: {SIMULATED_API_KEY}); "
        "open_weather only, whose real API checks keys",
    )
    serve.add_argument(
        "--version",
        dest="data_version",
        help="data version (default: v0); web_shop: the page layout of the observations (v0, v1)",
    )
    serve.add_argument(
        "--mcp",
        action="store_true",
        help="serve one sample's fresh world as MCP tools, for an agent to solve",
    )
    serve.add_argument("--sample", help="--mcp: the id of the sample to serve (default: the first)")
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        help="--mcp: stdio (the default; the session on stdin/stdout) or streamable HTTP at "
        "http://HOST:PORT/mcp",
    )
    serve.add_argument(
        "--verdict",
        type=argtypes.PathArg("new_file"),
        help="--mcp: when the server stops, write the task's verdict of the world (JSON) here",
    )
    serve.add_argument(
        "--log",
        type=argtypes.PathArg("new_file"),
        help="--mcp: append the libraries' own reports (tracebacks included) to this file",
    )
    serve.add_argument(
        "--data-dir",
        type=argtypes.PathArg("folder"),
        help="--mcp: a folder in the ToolBench layout <root>/<task>/<version>/ (default: the "
        "task's own data)",
    )


def _add_data_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    data = sub.add_parser("data", help="generate our datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True, parser_class=_Parser)
    gen = data_sub.add_parser("generate", help="regenerate a task's data from its seeded generator")
    gen.add_argument("task", help="a task with a data generator (see toolbench list tasks)")
    gen.add_argument(
        "--split",
        choices=["test", "train"],
        default="test",
        help="test: the ToolBench layout (samples, API docs, demonstrations); train: "
        "prompt/completion pairs for fine-tuning",
    )
    gen.add_argument(
        "--n", type=argtypes.positive_int, help="number of samples (task default for test)"
    )
    gen.add_argument("--seed", type=argtypes.seed, default=0, help="generator seed")
    gen.add_argument(
        "--out", type=argtypes.PathArg("new_folder"), required=True, help="folder to write"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toolbench", description="Evaluate LLM tool use on simulated tools.")
    parser.add_argument("--version", action="version", version=f"toolbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    _add_run_parser(sub)
    _add_serve_parser(sub)

    prompt = sub.add_parser("prompt", help="show the exact prompt of a sample")
    prompt.add_argument("task", help="task name (see toolbench list tasks)")
    prompt.add_argument("--sample", required=True, help="sample id (line number for original data)")
    _add_prompt_flags(prompt)

    add_report_parser(sub)
    add_show_parser(sub)
    _add_data_parser(sub)
    add_aware_parser(sub, _Parser)
    add_web_shop_parser(sub, _Parser)

    lister = sub.add_parser("list", help="list tasks or models")
    lister.add_argument("what", choices=["tasks", "models"], help="what to list")
    for each in all_parsers(parser):
        _values_are_never_empty(each)
    return parser


def all_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every subcommand's parser below it, each once."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from all_parsers(child)


def _values_are_never_empty(parser: argparse.ArgumentParser) -> None:
    """A flag that takes free text gets ``argtypes.text``: an empty value ('--model ""', an
    unset shell variable) is refused by name rather than read as a name, path or spec."""
    for action in parser._actions:
        if action.nargs == 0 or action.type is not None or action.choices is not None:
            continue
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        action.type = argtypes.text


def main(argv: Sequence[str] | None = None) -> int:
    set_arguments(sys.argv[1:] if argv is None else argv)  # what run.json records
    args = build_parser().parse_args(argv)
    console = _console()
    try:
        _check_environment(args)
        return _dispatch(args, console)
    except UserError as exc:
        print(f"toolbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolbench: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _dispatch(args: argparse.Namespace, console: Console) -> int:
    """Run the command: its module is imported here, now that it runs (see ``_COMMANDS``)."""
    if args.command not in _COMMANDS:
        return EXIT_USAGE
    module, function = _COMMANDS[args.command]
    command = getattr(importlib.import_module(module), function)
    if args.command not in _USES_CACHE:
        return int(command(args, console))
    # Only aware build and run write the cache; the other aware commands may not need one.
    check = args.command != "aware" or args.aware_command in ("build", "run")
    return int(command(args, console, _cache_dir(args, check=check)))


def _console() -> Console:
    """The terminal's width; piped output (CI logs, files) gets $COLUMNS when it is a sane
    number, else 160 columns instead of rich's 80-column default."""
    if sys.stdout.isatty():
        return Console()
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and 40 <= int(columns) <= 1000 else 160
    return Console(width=width)


def _reader_went_away() -> int:
    """``toolbench report --json | head``: the reader closed the pipe; stop quietly. Python
    would otherwise print a traceback, and again when it flushes stdout at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0
