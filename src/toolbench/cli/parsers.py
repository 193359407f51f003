"""The flags of ``toolbench report``, ``show`` and ``web_shop``.

They live apart from the commands' bodies (``report.py``, ``show.py``, ``web_shop.py``) so that
building the parser, which every invocation (``--help`` too) does, loads none of what those
commands need to run; ``main.py`` imports a command's module only when that command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolbench.cli import argtypes


def add_report_parser(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="metrics with 95%% CIs; paired differences; HTML report; CSV/Markdown exports",
    )
    report.add_argument(
        "runs", nargs="+", type=argtypes.PathArg("folder"), help="one or more run folders"
    )
    report.add_argument("--json", action="store_true", help="print JSON instead of tables")
    report.add_argument(
        "--allow-modified",
        action="store_true",
        help="report a run whose log was modified after it was written (with a warning)",
    )
    report.add_argument(
        "--reference",
        type=argtypes.PathArg("folder"),
        help="the run paired differences are taken against (one of RUNS; default: the first)",
    )
    report.add_argument(
        "--html",
        type=argtypes.PathArg("new_file"),
        metavar="FILE",
        help="write one self-contained HTML report here",
    )
    report.add_argument(
        "--csv", type=argtypes.PathArg("new_file"), metavar="FILE", help="write every table as CSV"
    )
    report.add_argument(
        "--markdown",
        type=argtypes.PathArg("new_file"),
        metavar="FILE",
        help="write every table as Markdown",
    )


def add_show_parser(sub: Any) -> None:
    show = sub.add_parser(
        "show", help="a run's samples: query, prompt, prediction, gold, state diff, steps"
    )
    show.add_argument("run", type=argtypes.PathArg("folder"), help="run folder")
    show.add_argument("--failed", action="store_true", help="only samples that did not succeed")
    show.add_argument("--task", help="only this task's samples")
    show.add_argument("--id", dest="sample_id", help="only this sample id")
    show.add_argument("--epoch", type=argtypes.non_negative_int, help="only this epoch")
    show.add_argument(
        "--limit",
        type=argtypes.non_negative_int,
        default=10,
        help="show at most this many samples (0: all)",
    )
    show.add_argument("--no-prompt", action="store_true", help="leave the prompt out")
    show.add_argument(
        "--allow-modified", action="store_true", help="show a run whose log was modified"
    )


def add_web_shop_parser(sub: argparse._SubParsersAction[Any], parser_class: type) -> None:
    shop = sub.add_parser("web_shop", help="web_shop for people: record a person's episodes")
    shop_sub = shop.add_subparsers(
        dest="web_shop_command", required=True, parser_class=parser_class
    )
    human = shop_sub.add_parser(
        "human", help="serve the store to a person and record their episodes as a run"
    )
    human.add_argument(
        "--n", type=argtypes.positive_int, default=50, help="goals to shop (the first N test ids)"
    )
    human.add_argument("--port", type=argtypes.port, default=8000, help="TCP port (0: any free)")
    human.add_argument("--host", default="127.0.0.1", help="address to listen on")
    human.add_argument("--version", dest="data_version", choices=["v0", "v1"], default="v0",
                       help="data version: its test ids and the page layout recorded")  # fmt: skip
    human.add_argument(
        "--name",
        help="who is shopping; the run's model is human:<name> (default: your user name)",
    )
    human.add_argument(
        "--out",
        type=argtypes.PathArg("new_folder"),
        help="run folder (default: runs/web_shop-human-<name>-<time>)",
    )
    human.add_argument(
        "--runs-dir", type=argtypes.PathArg("new_folder"), default=Path("runs"),
        help=argparse.SUPPRESS,
    )  # fmt: skip
