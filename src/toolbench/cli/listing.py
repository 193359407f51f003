"""``toolbench list tasks|models``."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def command_list(args: argparse.Namespace, console: Console) -> int:
    table = Table()
    if args.what == "tasks":
        from toolbench.tasks.registry import all_tasks

        for column in ("task", "versions", "metrics", "options", "what the model writes"):
            table.add_column(column)
        for task in all_tasks():
            # As --task-option writes them: NAME=VALUE, VALUE in JSON.
            options = ", ".join(
                f"{k}={json.dumps(v, default=str)}" for k, v in task.option_defaults.items()
            )
            table.add_row(
                task.name,
                ", ".join(task.versions()),
                ", ".join(task.metrics),
                escape(options or "-"),
                task.summary,
            )
    else:
        from toolbench.models.registry import all_models

        for column in ("model spec", "what it is", "needs", "used by"):
            table.add_column(column)
        for model in all_models():
            # escape: "toolbench[dense]" and "random[:SEED]" are not rich markup
            table.add_row(
                *(escape(text) for text in (model.spec, model.what, model.needs, model.runs))
            )
    console.print(table)
    return 0
