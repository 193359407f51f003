"""Body of ``toolbench data generate``: our seeded generators, written in the ToolBench layout."""

from __future__ import annotations

import argparse
import json
from typing import Protocol, runtime_checkable

from rich.console import Console

from toolbench.core.task import TaskGenerator
from toolbench.data.examples import format_example
from toolbench.data.layout import write_task_folder
from toolbench.errors import UserError
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.tasks.registry import get_task
from toolbench.types import Doc, Sample, TaskContext


@runtime_checkable
class Generates(Protocol):
    """A task with a seeded data generator and the API docs and demonstrations we ship with
    it: ``toolbench data generate TASK`` (owned by this module) writes a test folder in the
    ToolBench layout, or training pairs, from it."""

    @property
    def generator(self) -> TaskGenerator: ...


def command_generate(args: argparse.Namespace, console: Console) -> int:
    task = get_task(args.task)
    if not isinstance(task, Generates):
        raise UserError(f"task {task.name} has no data generator")
    generator = task.generator
    n = args.n or generator.default_test_size
    records = generator.generate(args.split, n, args.seed)
    examples = [format_example(q, p) for q, p in generator.examples]
    if args.split == "test":
        write_task_folder(args.out, records, generator.functions, examples)
        for name, text in (generator.data_files() if generator.data_files else {}).items():
            (args.out / name).write_text(text, encoding="utf-8", newline="\n")
        console.print(
            f"wrote {len(records)} test samples, API docs and demonstrations to {args.out}"
        )
        return 0
    # Training data for fine-tuning: the full prompt the model will see, and the gold program.
    if records and not {"prompt", "completion"} <= set(records[0]):
        raise UserError(
            f"--split train: {task.name}'s samples are not one prompt and one gold completion "
            "(its model calls are made by a running program), so it has no training pairs; "
            "use --split test"
        )
    context = TaskContext(
        functions=tuple(Doc(name, text.strip()) for name, text in generator.functions.items()),
        examples=tuple(Doc(f"{i}.txt", text.strip()) for i, text in enumerate(examples)),
    )
    d = task.defaults
    prompter = Prompter(context, PromptConfig(top_k_api=d.top_k_api, top_k_example=d.top_k_example))
    samples = [
        Sample(id=str(i), task=task.name, query=r["prompt"], labels=tuple(r["completion"]))
        for i, r in enumerate(records)
    ]
    prompter.prepare(samples)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "train.jsonl"
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for sample in samples:
            prompt = prompter.request(sample).prompt
            line = {"prompt": prompt, "completion": sample.labels[0], "query": sample.query}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    console.print(f"wrote {len(samples)} training pairs (prompt/completion) to {path}")
    return 0
