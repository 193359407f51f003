"""``toolbench list tasks|models``.

A listing shows everything that can be used and says, one warning line each on stderr, what
was left out and why: an installed distribution whose task or model does not load (its import
fails or exits), is not a task or model, or takes a built-in's name. One broken plugin never
hides the built-ins or the other plugins, and the command exits 0 (``toolbench.plugins``).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolbench.agents import registry as agents
from toolbench.core.capabilities import option_defaults
from toolbench.models import registry as models
from toolbench.models.args import option_rows
from toolbench.plugins import PluginError, call_plugin, warning_line
from toolbench.tasks.registry import all_tasks, installed_from, problems

if TYPE_CHECKING:
    from toolbench.core.task import Task


def command_list(args: argparse.Namespace, console: Console) -> int:
    table = Table()
    problems = _task_table(table) if args.what == "tasks" else _model_table(table)
    console.print(table)
    for problem in problems:
        print(warning_line(problem), file=sys.stderr)
    return 0


def _task_table(table: Table) -> list[str]:
    for column in ("task", "versions", "metrics", "options", "what the model writes"):
        table.add_column(column)
    left_out = problems()
    for task in all_tasks():
        try:  # an installed task's members are its own code: one that fails is left out
            row = call_plugin(functools.partial(_task_row, task))
        except PluginError as exc:
            origin = installed_from(task.name) or f"task {task.name}"
            left_out.append(
                f"{origin}: cannot be listed ({exc}); fix or uninstall that distribution"
            )
            continue
        table.add_row(*row)
    return left_out


def _task_row(task: Task) -> list[str]:
    # As --task-option writes them: NAME=VALUE, VALUE in JSON.
    options = ", ".join(
        f"{k}={json.dumps(v, default=str)}" for k, v in option_defaults(task).items()
    )
    return [
        str(task.name),
        ", ".join(task.versions()),
        ", ".join(task.metrics),
        escape(options or "-"),
        str(task.summary),
    ]


def _model_table(table: Table) -> list[str]:
    for column in ("model spec", "what it is", "needs", "used by", "options (--model-arg)"):
        table.add_column(column)
    left_out = [*models.problems(), *agents.problems()]
    for entry in agents.listing():
        # Each option of the backend's own schema: NAME (TYPE, default DEFAULT): HELP.
        options = "\n".join(
            f"{row.name} ({row.type}, default {row.default}): {row.help}"
            for row in option_rows(entry.options)
        )
        texts = (entry.spec, entry.what, entry.needs, entry.runs, options or "-")
        # escape: "toolbench[dense]" and "random[:SEED]" are not rich markup
        table.add_row(*(escape(text) for text in texts))
    return left_out
