"""The flags of ``toolbench aware build | verify | export | stats | run | prompt | human``.

Every flag has a help line and a type that refuses bad values while the command line is read
(see ``argtypes``); the command bodies live in ``aware.py`` and ``aware_eval.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolbench.cli import argtypes
from toolbench.models.registry import AWARENESS, BUILTIN, FREE_TEXT
from toolbench.types import DEFAULT_MAX_TOKENS

_DATASET_HELP = "awareness dataset (JSONL, as written by 'toolbench aware build')"
_PENDING_HELP = (
    "also use instances still pending review (by default only accepted ones are: unreviewed "
    "twins may not be incomplete at all)"
)


def add_aware_parser(sub: argparse._SubParsersAction[Any], parser_class: type) -> None:
    aware = sub.add_parser("aware", help="incomplete-condition awareness datasets")
    aware_sub = aware.add_subparsers(dest="aware_command", required=True, parser_class=parser_class)
    _add_build(aware_sub)

    verify = aware_sub.add_parser("verify", help="review incomplete instances in the terminal")
    verify.add_argument("dataset", type=argtypes.PathArg("file"), help=_DATASET_HELP)
    verify.add_argument("--reviewer", help="your name (default: $TOOLBENCH_REVIEWER, else login)")
    verify.add_argument(
        "--db",
        type=argtypes.PathArg("new_file"),
        help="decision store (default: <dataset>.review.sqlite)",
    )
    verify.add_argument("--all", action="store_true", help="also show auto-rejected instances")
    _web_flags(verify, 8765, "review in a browser instead (reviewers type their names there)")

    export = aware_sub.add_parser("export", help="write review decisions into the dataset")
    export.add_argument("dataset", type=argtypes.PathArg("file"), help=_DATASET_HELP)
    export.add_argument(
        "--out", type=argtypes.PathArg("new_file"), help="write here instead of in place"
    )
    export.add_argument(
        "--db",
        type=argtypes.PathArg("file"),
        help="decision store to read (default: <dataset>.review.sqlite)",
    )

    stats = aware_sub.add_parser("stats", help="dataset statistics (the paper's Table 1)")
    stats.add_argument(
        "datasets", type=argtypes.PathArg("file"), nargs="+", help="one or more datasets"
    )
    _add_run(aware_sub)
    _add_prompt(aware_sub)
    _add_human(aware_sub)


def _add_build(aware_sub: argparse._SubParsersAction[Any]) -> None:
    build = aware_sub.add_parser("build", help="build a dataset of complete/incomplete pairs")
    build.add_argument(
        "--source",
        action="append",
        required=True,
        help="apibank:PATH | toolbench:PATH | bfcl:PATH | task:NAME (repeat to mix)",
    )
    build.add_argument(
        "--manipulation",
        default="none",
        help="api_replacement, utterance_removal, slot_removal, tool_removal "
        "(comma-separated for several; default none = import as is)",
    )
    build.add_argument(
        "--out", type=argtypes.PathArg("new_file"), required=True, help="dataset file to write"
    )
    build.add_argument("--seed", type=argtypes.seed, default=0, help="seed of every random pick")
    build.add_argument(
        "--model",
        help=f"rewriting model for utterance_removal: {_models_for(FREE_TEXT)}",
    )
    build.add_argument(
        "--removal-kind",
        choices=("missing_argument", "unclear_request"),
        default="missing_argument",
        help="utterance_removal: a clear request missing an argument, or a request made unclear",
    )
    build.add_argument(
        "--verify-model",
        help=f"api_replacement: a judge model ({_models_for(FREE_TEXT)}) asked "
        "whether an offered API still serves the request; twins it judges servable are rebuilt "
        "from the next-ranked candidate",
    )
    _model_flags(build)
    build.add_argument(
        "--concurrency", type=argtypes.positive_int, default=4, help="model calls at once"
    )
    build.add_argument(
        "--encoder", help="sentence-transformers model folder (default: all-MiniLM-L6-v2)"
    )
    build.add_argument(
        "--pool",
        type=argtypes.PathArg("path"),
        action="append",
        default=[],
        help="extra StableToolBench-shaped file/folder whose APIs join the replacement pool",
    )
    build.add_argument(
        "--rank", type=argtypes.positive_int, default=1, help="take the R-th most similar API"
    )
    build.add_argument(
        "--choose-from",
        type=argtypes.positive_int,
        default=1,
        help="pick (seeded) among K ranks from --rank",
    )
    build.add_argument(
        "--min-similarity",
        type=argtypes.similarity,
        help="api_replacement: skip candidates less similar than this (-1 to 1)",
    )
    build.add_argument(
        "--max-similarity",
        type=argtypes.similarity,
        help="api_replacement: skip candidates more similar than this (-1 to 1)",
    )
    build.add_argument(
        "--similarity-ceiling",
        type=_ceiling,
        default=0.90,
        help="api_replacement pre-verification: turn down candidates at least this similar "
        "(default 0.90; 'none' turns the check off)",
    )


def _ceiling(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    return argtypes.similarity(text)


def _web_flags(p: argparse.ArgumentParser, port: int, what: str) -> None:
    p.add_argument("--web", action="store_true", help=f"{what}; Ctrl-C stops the server")
    p.add_argument(
        "--port", type=argtypes.port, default=port, help="--web: port (0: any free port)"
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="--web: address to listen on (other machines can reach anything but loopback)",
    )


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url",
        type=argtypes.url,
        help="OpenAI-compatible server for --model openai:NAME, e.g. http://localhost:8000/v1",
    )
    p.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the caches")
    p.add_argument(
        "--cache-dir",
        type=argtypes.PathArg("new_folder"),
        help="response and embedding cache folder "
        "(default: $TOOLBENCH_CACHE_DIR, else ~/.cache/toolbench)",
    )
    p.add_argument(
        "--timeout", type=argtypes.seconds, default=60.0, help="seconds per model request"
    )
    p.add_argument(
        "--max-retries",
        type=argtypes.non_negative_int,
        default=6,
        help="retries of a request that failed with 429/5xx/timeout, with backoff",
    )
    p.add_argument(
        "--retry-budget",
        type=argtypes.seconds,
        help="seconds one request may spend on all its attempts and waits (default: 3x "
        "--timeout, at least 60)",
    )


def _add_run(aware_sub: argparse._SubParsersAction[Any]) -> None:
    run = aware_sub.add_parser("run", help="evaluate a model on an awareness dataset")
    run.add_argument("dataset", type=argtypes.PathArg("file"), help=_DATASET_HELP)
    run.add_argument(
        "--model",
        required=True,
        help=f"{_models_for(AWARENESS)} (see toolbench list models)",
    )
    run.add_argument(
        "--mode",
        default="explicit",
        help="explicit, implicit, tools, feedback, explain (comma-separated for several)",
    )
    run.add_argument(
        "--shots", default="0", help="explicit-mode demonstrations, even numbers, e.g. 0,4"
    )
    run.add_argument(
        "--demos",
        type=argtypes.PathArg("file"),
        help="dataset to draw demonstrations from (default: the evaluated dataset)",
    )
    run.add_argument(
        "--judge",
        help=f"model that grades explanations (--mode explain): {_models_for(FREE_TEXT)}",
    )
    run.add_argument(
        "--judge-labels",
        type=argtypes.PathArg("file"),
        help='JSONL of {"id", "correct"} hand labels of explanations',
    )
    run.add_argument("--include-pending", action="store_true", help=_PENDING_HELP)
    run.add_argument(
        "--seed", type=argtypes.seed, default=0, help="request seed and demonstration choice"
    )
    run.add_argument(
        "--max-tokens",
        type=argtypes.positive_int,
        default=DEFAULT_MAX_TOKENS,
        help="generation limit",
    )
    run.add_argument(
        "--temperature", type=argtypes.temperature, default=0.0, help="sampling temperature"
    )
    run.add_argument(
        "--limit",
        type=argtypes.positive_int,
        help="only the first N complete/incomplete families",
    )
    run.add_argument(
        "--concurrency", type=argtypes.positive_int, default=8, help="items answered at once"
    )
    run.add_argument(
        "--encoder",
        help="sentence-transformers folder for --model similarity (default: all-MiniLM-L6-v2)",
    )
    run.add_argument(
        "--allow-missing",
        action="store_true",
        help="replay: run even if the file lacks items (scored as model errors), names unknown "
        "ids or repeats keys",
    )
    run.add_argument(
        "--out",
        type=argtypes.PathArg("new_folder"),
        help="run folder (default: a new one under --runs-dir)",
    )
    run.add_argument(
        "--runs-dir",
        type=argtypes.PathArg("new_folder"),
        default=Path("runs"),
        help="where new run folders go",
    )
    _model_flags(run)


def _add_prompt(aware_sub: argparse._SubParsersAction[Any]) -> None:
    prompt = aware_sub.add_parser("prompt", help="show the exact messages a model is sent")
    prompt.add_argument("dataset", type=argtypes.PathArg("file"), help=_DATASET_HELP)
    prompt.add_argument("--id", help="instance id (default: the first instance)")
    prompt.add_argument(
        "--mode",
        default="explicit",
        help="explicit, implicit, tools, feedback, explain (comma-separated for several)",
    )
    prompt.add_argument(
        "--shots", default="0", help="explicit-mode demonstrations, even numbers, e.g. 0,4"
    )
    prompt.add_argument(
        "--demos",
        type=argtypes.PathArg("file"),
        help="dataset to draw demonstrations from (default: the dataset shown)",
    )
    prompt.add_argument(
        "--seed", type=argtypes.seed, default=0, help="demonstration choice, as in aware run"
    )
    prompt.add_argument(
        "--include-pending",
        action="store_true",
        help="also draw demonstrations from instances pending review",
    )


def _add_human(aware_sub: argparse._SubParsersAction[Any]) -> None:
    human = aware_sub.add_parser("human", help="answer instances yourself: the human baseline")
    human.add_argument("dataset", type=argtypes.PathArg("file"), help=_DATASET_HELP)
    human.add_argument("--n", type=argtypes.positive_int, default=180, help="instances to present")
    human.add_argument("--balanced", action="store_true", help="half complete, half incomplete")
    human.add_argument("--annotator", help="your name (default: the login name)")
    human.add_argument(
        "--seed", type=argtypes.seed, default=0, help="which instances, in which order"
    )
    human.add_argument(
        "--db",
        type=argtypes.PathArg("new_file"),
        help="answer store (default: <dataset>.human.sqlite)",
    )
    human.add_argument("--include-pending", action="store_true", help=_PENDING_HELP)
    human.add_argument("--report", action="store_true", help="only print the results so far")
    _web_flags(human, 8766, "ask in a browser instead (annotators type their names there)")


def _models_for(question: str) -> str:
    """The built-in models that answer ``question``, for a flag's help (kept in step with the
    registry, so the help cannot name fewer than there are)."""
    return ", ".join(m.spec for m in BUILTIN if question in m.answers)
