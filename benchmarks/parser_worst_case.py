"""Worst-case time of every harness-side parser of model text, at 100 KB and at 1 MB.

A reply is hostile input, and the harness parses it itself in several places (reply
extraction, virtual_home grounding, web_shop's action grammar, the curl lexer, tabletop's
callee scan and LMP source handling, the awareness classifiers). Each is fed its worst shapes
(one character repeated, bracket floods, one long line, many lines, deep nesting; see
``tests/worst_case.py``) at 100 KB and at 1 MB. Linear work takes ~10x longer on the larger
input, quadratic ~100x; the last column flags a ratio over 25 where the larger time is
above the noise floor. Parsers with an input cap are timed with the cap lifted.

Run: ``python benchmarks/parser_worst_case.py [--only SUBSTRING]`` (a few minutes on a
shared 2-core machine). Exits 1 if any row is worse than linear.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.worst_case import FLOOR_S, MAX_RATIO, growth, parsers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="time only parsers whose name has this")
    args = parser.parse_args(argv)
    worst = 0.0
    failed = 0
    print(f"{'parser':<52} {'shape':<28} {'100 KB':>9} {'1 MB':>9} {'ratio':>6}")
    for name, entry in parsers().items():
        if args.only not in name:
            continue
        for shape in entry.shapes:
            result = growth(entry, shape)
            flag = "" if result.linear else "  WORSE THAN LINEAR"
            failed += not result.linear
            if result.large_s > FLOOR_S:
                worst = max(worst, result.ratio)
            print(
                f"{name[:52]:<52} {shape[:28]:<28} {result.small_s * 1e3:7.2f}ms "
                f"{result.large_s * 1e3:7.2f}ms {result.ratio:6.1f}{flag}",
                flush=True,
            )
        if entry.note:
            print(f"{'':<52} ({entry.note})")
    print(f"worst ratio above the {FLOOR_S * 1e3:.0f} ms floor: {worst:.1f} (limit {MAX_RATIO:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
