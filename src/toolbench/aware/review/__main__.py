"""``python -m toolbench.aware.review``: review a dataset in the terminal, or export decisions.

    python -m toolbench.aware.review review DATASET --reviewer NAME [--db PATH] [--all]
    python -m toolbench.aware.review export DATASET [--out PATH] [--db PATH]

A stand-alone entry so the review works (and can be driven by scripts and tests in a separate
process) independently of the main CLI. User errors print one line and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from toolbench.aware.review.export import export_decisions
from toolbench.aware.review.terminal import run_review
from toolbench.errors import UserError

EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m toolbench.aware.review")
    commands = parser.add_subparsers(dest="command", required=True)
    review = commands.add_parser("review", help="review instances one at a time")
    review.add_argument("dataset", type=Path)
    review.add_argument("--reviewer", required=True, help="your name, stored with each decision")
    review.add_argument("--db", type=Path, help="decisions file (<dataset>.review.sqlite)")
    review.add_argument(
        "--all",
        action="store_true",
        help="also show instances the file already marks as decided (e.g. auto-rejected)",
    )
    export = commands.add_parser("export", help="write decisions into the dataset")
    export.add_argument("dataset", type=Path)
    export.add_argument("--out", type=Path, help="output file (default: the dataset, in place)")
    export.add_argument("--db", type=Path, help="decisions file (<dataset>.review.sqlite)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "review":
            run_review(args.dataset, reviewer=args.reviewer, db=args.db, only_pending=not args.all)
            return 0

        print(export_decisions(args.dataset, args.out, db=args.db))
        return 0
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
