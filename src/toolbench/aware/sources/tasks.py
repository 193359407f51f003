"""Our own tool tasks as complete awareness instances.

Each test sample becomes one single-turn instance: the query is the user turn, every API doc of
the task is offered (as JSON schema), the APIs the first gold uses are the relevant ones, and
all golds are kept. The sample's ``slots`` (argument -> exact words of the query) travel in
``provenance.notes`` so slot removal can take out exactly the words that supply an argument,
and so do ``needed_apis`` when the task can say which APIs the request cannot do without
(virtual_home, from its goals and scene), so tool removal takes one of those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, complete_instance
from toolbench.aware.sources.task_apis import apis_used, doc_to_spec
from toolbench.errors import UserError
from toolbench.kinds.folder import load_folder
from toolbench.tasks.registry import get_task
from toolbench.types import Sample


@runtime_checkable
class ShipsDataFolder(Protocol):
    """A task whose data sits in its package's ``data/<version>/`` folders (in the ToolBench
    layout): ``toolbench aware build --source task:NAME`` reads them to make instances."""

    @property
    def package_dir(self) -> Path: ...


@runtime_checkable
class TwinSource(Protocol):
    """A task that can say which APIs a sample's request cannot do without (virtual_home,
    from its goals and scene): tool removal then takes one of those, and the twin is surely
    incomplete. Without it, tool removal takes one of the APIs the gold uses."""

    def needed_apis(self, sample: Sample) -> list[list[str]] | None:
        """Groups of API names, each of which the request needs one of; None or empty when
        the task cannot say for this sample."""
        ...


def task_instance_id(task: str, sample_id: str) -> str:
    return f"task-{task}-{sample_id}"


def load_task(name: str, *, version: str = "v0", data_dir: Path | None = None) -> list[Instance]:
    """Complete instances for every sample of a registered task."""
    task = get_task(name)
    if not isinstance(task, ShipsDataFolder):
        raise UserError(f"task {name} has no data folder to build awareness instances from")
    data = load_folder(name, task.package_dir, version, data_dir)
    specs: list[ApiSpec] = [doc_to_spec(doc) for doc in data.context.functions]
    instances = []
    for sample in data.samples:
        used = apis_used(sample.labels[0], specs)
        if not used:
            raise UserError(
                f"{sample.source}: the gold answer uses none of the task's API docs; "
                "check the functions/ folder matches this test.jsonl"
            )
        notes: dict[str, object] = {}
        if "slots" in sample.fields:
            notes["slots"] = dict(sample.fields.get("slots") or {})
        if isinstance(task, TwinSource) and (groups := task.needed_apis(sample)):
            notes["needed_apis"] = groups
        instances.append(
            complete_instance(
                id=task_instance_id(name, sample.id),
                source=f"task:{name}",
                dialogue=[Turn(role="user", content=sample.query)],
                apis=specs,
                relevant_apis=used,
                gold_calls=list(sample.labels),
                provenance=Provenance(
                    original_id=sample.id,
                    source_file=f"{name}/{version}/test.jsonl",
                    generator="task-loader",
                    notes=notes,
                ),
            )
        )
    return instances
