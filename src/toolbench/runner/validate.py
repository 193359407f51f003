"""The checks every tool-task run passes before any work: one place, so ``toolbench run`` and
``toolbench.run(...)`` accept and refuse exactly the same runs with the same messages.

Each check raises ``UserError`` (exit 2 on the command line) naming the setting and the way
out. Flag names are used in the messages because they are what the manual documents; the
Python API takes the same settings under ``RunConfig``'s field names (``mode``,
``system_prompt``...), which the messages name too where they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.agents.registry import check_subject_args, is_agent_spec, require_subject
from toolbench.config import RunConfig
from toolbench.core.agent import HasAgentWorld
from toolbench.core.subject import AgentSubject, Subject
from toolbench.core.task import Task
from toolbench.errors import UserError
from toolbench.kinds.tool_calling import HasToolset
from toolbench.models.args import FLAG
from toolbench.models.base import ModelOptions
from toolbench.models.spec import AWARENESS, TOOL_TASKS
from toolbench.prompts.builder import Mode
from toolbench.runner.capabilities import FixedSystemPrompt, ShowsHistory
from toolbench.tasks.registry import all_tasks

__all__ = [
    "check_agent_world",
    "check_history",
    "check_mode",
    "check_run",
    "check_selection",
    "check_system_prompt",
    "with_model_args",
]


def check_run(config: RunConfig, tasks: Sequence[Task], subject: Subject | None = None) -> None:
    """Refuse a run that would not be what its configuration says; ``subject``: the object
    given instead of ``config.model``'s spec (an agent object is checked as ``agent:``)."""
    chosen = list(tasks)
    if isinstance(subject, AgentSubject) or is_agent_spec(config.model):
        check_agent_world(chosen, config.model)  # first: what an agent cannot do at all
    if subject is None:  # e.g. an awareness floor on tool tasks, which answers only Yes/No
        for question in dict.fromkeys(_QUESTION_OF.get(task.name, TOOL_TASKS) for task in chosen):
            require_subject(config.model, question)
    check_mode(chosen, config.mode.value)
    check_system_prompt(chosen, config.mode.value, config.system_prompt)
    if config.data_dir is not None and not Path(config.data_dir).is_dir():
        raise UserError(f"--data-dir {config.data_dir}: no such folder")


# The question a task's prompts ask, where it is not a tool task's (the awareness task's items).
_QUESTION_OF = {"aware": AWARENESS}


def with_model_args(
    config: RunConfig, options: ModelOptions, subject: Subject | None = None
) -> RunConfig:
    """``config`` with the backend's options in its fingerprint: ``--model-arg`` (and the
    ``--hf-*``/``--agent-*`` aliases) checked by the schema of the backend ``config.model``
    names, refused in one line before any work, and what of them can change a result kept
    as ``config.model_args``. An object given as the subject was built by its caller, who
    set its options: model args beside it are refused, since they would change nothing."""
    if subject is not None:
        if options.model_args:
            key = next(iter(options.model_args))
            raise UserError(
                f"{FLAG} {key}: model args are for a spec's backend, and the subject given is "
                "an object (set its options where it is built), or give its spec"
            )
        return config.model_copy(update={"model_args": {}})
    return config.model_copy(update={"model_args": check_subject_args(config.model, options)})


def check_mode(tasks: Sequence[Task], mode: str) -> None:
    """--mode tools needs a task that offers its API as tools: refuse others up front."""
    if mode != Mode.TOOLS.value:
        return
    lacking = [task.name for task in tasks if not isinstance(task, HasToolset)]
    if lacking:
        able = [task.name for task in all_tasks() if isinstance(task, HasToolset)]
        raise UserError(
            f"--mode tools: task {', '.join(lacking)} has no tools mode (it works for "
            f"{', '.join(able)}); use --mode completion or chat"
        )


def check_agent_world(tasks: Sequence[Task], spec: str) -> None:
    """An agent (``--model agent:COMMAND``) solves a task through its world's tools: refuse,
    before any work, a task that has none."""
    lacking = [task.name for task in tasks if not isinstance(task, HasAgentWorld)]
    if lacking:
        able = [task.name for task in all_tasks() if isinstance(task, HasAgentWorld)]
        raise UserError(
            f"--model {spec.strip()}: task {', '.join(lacking)} cannot be solved by an agent "
            f"(it serves no tools); agents can run {', '.join(able) or 'no task yet'}"
        )


def check_system_prompt(tasks: Sequence[Task], mode: str, system_prompt: str | None) -> None:
    """--system-prompt replaces the instruction of chat and tools prompts: refuse it where it
    would change nothing (completion prompts, a task with its own fixed system messages)."""
    if system_prompt is None:
        return
    if mode == Mode.COMPLETION.value:
        raise UserError(
            "--system-prompt: completion prompts have no system message; add --mode chat or "
            "--mode tools, or drop it"
        )
    fixed = [
        task.name
        for task in tasks
        if isinstance(task, FixedSystemPrompt) and not task.takes_system_prompt
    ]
    if fixed:
        raise UserError(
            f"--system-prompt: task {', '.join(fixed)} keeps its own system messages (they are "
            "part of what it measures); drop the flag or run other tasks"
        )


def check_history(tasks: Sequence[Task], history: int) -> None:
    """--history is for episodes that show pages: refuse it when no task of the run uses it
    (the flag is a shorthand for the ``history`` option of those tasks, so only the command
    line has it; the option itself is checked by each task)."""
    if history and not any(isinstance(task, ShowsHistory) for task in tasks):
        able = [task.name for task in all_tasks() if isinstance(task, ShowsHistory)]
        raise UserError(
            f"--history {history}: only episode tasks show earlier pages ({', '.join(able)}); "
            "drop the flag for these tasks"
        )


def check_selection(folder: Path, held: Any, asked: dict[str, Any]) -> None:
    """A run folder holds one selection of the data. A command that asks for at least as
    much (a larger or no ``--limit``, as many or more ``--epochs``) extends the run: its plan
    grows and run.json then says the new selection, which holds every record already made. One
    that asks for less is refused: resuming it would leave records outside the plan, and the
    folder's numbers would no longer be those of any one selection."""
    if not isinstance(held, dict) or held == asked:
        return
    old_limit, new_limit = held.get("limit"), asked.get("limit")
    old_epochs, new_epochs = held.get("epochs", 1), asked.get("epochs", 1)
    wider_limit = new_limit is None or (old_limit is not None and new_limit >= old_limit)
    if wider_limit and new_epochs >= old_epochs:
        return
    raise UserError(
        f"{folder}: holds the run of {_selection_flags(held)}; this command asks for "
        f"{_selection_flags(asked)}, less of the data. Repeat it with "
        f"{_selection_flags(held)} (or more) to go on with that run, or give another --out "
        "for the smaller one"
    )


def _selection_flags(selection: dict[str, Any]) -> str:
    limit = selection.get("limit")
    shown = "no --limit" if limit is None else f"--limit {limit}"
    return f"{shown} --epochs {selection.get('epochs', 1)}"
