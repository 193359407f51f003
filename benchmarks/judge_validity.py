"""Judge validity of one task (or all): do equivalent answers pass and wrong ones fail?

    python benchmarks/judge_validity.py TASK [--data-dir DIR] [--limit N]

From the task's gold labels (ours, or a folder in the original layout with ``test.jsonl`` of
``prompt`` + ``completion`` lines) it derives semantically equivalent rewrites (must all
succeed), perturbations that change the answer (at most 2% may succeed) and other samples' golds
(at most 5%), scores them through the task's real scorer, prints counts and rates and exits 1
when a threshold is missed. Runs every sample unless ``--limit`` is given.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.judge_validity.generate import JUDGED_TASKS
from tests.judge_validity.harness import evaluate, format_report
from toolbench.errors import UserError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=[*JUDGED_TASKS, "all"], help="a task, or all of them")
    parser.add_argument("--data-dir", type=Path, help="folder with <task>/<version>/test.jsonl")
    parser.add_argument("--version", default="v0")
    parser.add_argument("--limit", type=int, help="at most this many samples, spread evenly")
    args = parser.parse_args(argv)
    names = list(JUDGED_TASKS) if args.task == "all" else [args.task]
    missed = []
    for name in names:
        started = time.perf_counter()
        try:
            report = evaluate(name, args.data_dir, args.limit, args.version)
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        format_report(report)
        print(f"  ({time.perf_counter() - started:.1f}s)")
        missed += report.failures()
    for line in missed:
        print(f"THRESHOLD MISSED: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
