"""``toolbench report``: metrics with intervals per run, and paired differences of two runs."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from toolbench.errors import UserError


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
