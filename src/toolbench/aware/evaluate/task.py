"""The awareness evaluation as a task of the one runner (``toolbench aware run`` builds it).

Its samples are the items of a dataset file: one per (mode, instance or feedback scenario),
tagged with the record task they are logged under (``aware-explicit-0shot``, ``aware-implicit``,
``aware-tools``, ``aware-feedback``, ``aware-explain``). What can change a score is in the
samples and the context, so the runner's data digest covers it: each item's instance (by
content hash), kind, shots, scenario and expected answer; the demonstration pool (as the
context's examples) when demonstrations are shown; the hand label of each explained instance.
Its metrics are not a mean of outcomes but F1 and friends per mode, source and manipulation
with intervals (``summarize``); ``run.json`` says ``"kind": "aware"`` so the report prints the
awareness tables. The floors (``always-yes``, ``random``, ``similarity``...) are ordinary
models (``baselines``); explanations are graded by the run's ``judge`` role.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolbench.aware.evaluate.breakdown import summary_metrics
from toolbench.aware.evaluate.demos import DemoPool
from toolbench.aware.evaluate.items import (
    AwareData,
    Item,
    build_items,
    evaluated,
    parse_modes,
    parse_shots,
)
from toolbench.aware.evaluate.metrics import PAPER_METRICS, UNGAMEABLE_METRICS
from toolbench.aware.evaluate.prompts import PROMPT_VERSION
from toolbench.aware.evaluate.run import chosen_instances, load_judge_labels
from toolbench.aware.evaluate.solve import Settings, first_request, solve
from toolbench.aware.schema import Instance, read_instances
from toolbench.core.capabilities import DataclassOptions
from toolbench.core.solve import Generate, Recorder, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskBase, TaskData, TaskDefaults
from toolbench.errors import UserError
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.types import Doc, GenerationRequest, Outcome, Sample, TaskContext

KIND = "aware"
JUDGE = "judge"  # the role whose model grades explanations
METRICS: tuple[str, ...] = PAPER_METRICS + UNGAMEABLE_METRICS


@dataclass(frozen=True)
class AwareTask(DataclassOptions, TaskBase):
    """Options: the dataset file, the modes (comma-separated: explicit, implicit, tools,
    feedback, explain), explicit-mode shots (comma-separated even numbers), the seed of the
    demonstration choice (and of ``random`` without its own), a demonstration file, a file of
    hand labels of explanations, whether pending instances are scored, how many families are
    (``--limit``: an original with its twins, never split) and the ``similarity`` encoder."""

    # Its system messages are part of each awareness mode's protocol.
    takes_system_prompt = False
    dataset: str | None = None
    modes: str = "explicit"
    shots: str = "0"
    seed: int = 0
    demos: str | None = None
    judge_labels: str | None = None
    include_pending: bool = False
    families: int | None = None
    encoder: str | None = None

    name = KIND
    summary = "awareness of incomplete conditions: can the offered APIs be called now?"
    metrics = METRICS
    # No retrieval: the prompts show the instance's own APIs.
    defaults = TaskDefaults(top_k_api=0, top_k_example=0)
    scoring_version = f"2/prompts-{PROMPT_VERSION}"
    option_defaults = MappingProxyType(
        {
            "dataset": None,
            "modes": "explicit",
            "shots": "0",
            "seed": 0,
            "demos": None,
            "judge_labels": None,
            "include_pending": False,
            "families": None,
            "encoder": None,
        }
    )
    # run.json key under which the runner also writes the notes of a model fitted on the
    # data (the similarity floor's thresholds), where the awareness report looks for them.
    model_notes_key = "baseline"

    def with_options(self, options: Mapping[str, Any]) -> AwareTask:
        task: AwareTask = DataclassOptions.with_options(self, options)
        paths = {
            "dataset": task.dataset,
            "demos": task.demos,
            "judge_labels": task.judge_labels,
            "encoder": task.encoder,
        }
        for key, value in paths.items():
            if value is not None and not isinstance(value, str):
                raise UserError(f"task aware option {key}: expected a path, got {value!r}")
        families = task.families
        if families is not None and (
            isinstance(families, bool) or not isinstance(families, int) or families < 1
        ):
            raise UserError(
                f"task aware option families (--limit) {families!r}: expected a positive number"
            )
        task.mode_list(), task.shot_list()  # a bad list is refused here, before any data is read
        return task

    def required_roles(self) -> Mapping[str, str]:
        if "explain" in self.mode_list():
            return {JUDGE: "mode explain needs a judge model to grade explanations"}
        return {}

    def mode_list(self) -> tuple[str, ...]:
        return parse_modes(self.modes)

    def shot_list(self) -> tuple[int, ...]:
        return parse_shots(self.shots)

    def versions(self) -> list[str]:
        return []  # the data is a file the run names (the dataset option), not a shipped version

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[AwareData]:
        """Read and check the dataset (exit 2 before any folder: missing labels, too few
        demonstrations, unreadable hand labels); warn about pending instances."""
        if live is not None:
            raise UserError("task aware has no live mode: drop --live")
        if self.dataset is None:
            raise UserError(
                "task aware needs a dataset: --task-option aware.dataset=FILE "
                "(or run 'toolbench aware run FILE')"
            )
        path = Path(self.dataset)
        instances = chosen_instances(path, self.include_pending, self.families)
        modes, shots = self.mode_list(), self.shot_list()
        pool = (
            evaluated(read_instances(Path(self.demos)), include_pending=False)
            if self.demos is not None
            else instances
        )
        demos = DemoPool(pool, self.seed)
        if "explicit" in modes:
            for k in shots:
                demos.check(k)
        labels = load_judge_labels(Path(self.judge_labels) if self.judge_labels else None)
        items = build_items(instances, modes, shots)
        shows_demos = "explicit" in modes and any(shots)
        context = TaskContext((), tuple(_doc(i) for i in pool) if shows_demos else ())
        runtime = AwareData(
            instances=instances,
            items={(f"aware-{i.task}", i.id): i for i in items},
            pool=pool,
            demos=demos,
            judge_labels=labels,
        )
        samples = [_sample(item, labels) for item in items]
        digest = _files_digest(path, self.demos, self.judge_labels)
        return TaskData(self.name, version, samples, context, str(path), digest, runtime=runtime)

    def first_request(
        self, data: TaskData[AwareData], sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        runtime = data.runtime
        item = runtime.item(sample.task, sample.id)
        return first_request(item, runtime.demos, _settings(prompter.config))

    async def solve(
        self, state: SampleState, generate: Generate, resources: Resources[AwareData]
    ) -> Outcome:
        runtime = resources.data.runtime
        item = runtime.item(state.sample.task, state.sample.id)
        judge = resources.roles.get(JUDGE)
        grade = Recorder(judge, state, JUDGE) if judge is not None else None
        settings = _settings(resources.prompter.config)
        return await solve(item, generate, grade, runtime.demos, settings, state)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return {}  # the metrics need the whole log: see summarize

    def summarize(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """run.json's ``metrics`` (record task, e.g. ``aware-explicit-0shot``, -> "source/
        group" -> metric, and ``aware-explain``'s summary) and ``counts`` (per record task),
        as the report's awareness tables compute them."""
        metrics, counts = summary_metrics([dict(r) for r in records])
        return {"metrics": metrics, "counts": counts}

    def run_info(self, data: TaskData[AwareData]) -> dict[str, Any]:
        runtime = data.runtime
        return {
            "kind": KIND,
            "judge_labels": runtime.judge_labels,
            "dataset": {
                "path": data.source,
                "n_instances": len(runtime.instances),
                "n_items": len(runtime.items),
                "demos": self.demos or "(the evaluated dataset)",
            },
        }


def _settings(config: PromptConfig) -> Settings:
    return Settings(
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        seed=config.seed,
        stop=config.stop or (),
    )


def _sample(item: Item, labels: Mapping[str, bool]) -> Sample:
    """The item as a sample: what can change its score, as plain data."""
    fields: dict[str, Any] = {
        "kind": item.kind,
        "shots": item.shots,
        "groups": list(item.groups),
        "expected": item.expected,
        "instance_sha256": _instance_sha(item.instance),
    }
    if item.scenario is not None:
        s = item.scenario
        fields["scenario"] = {"name": s.name, "call": s.call, "result": s.result}
    if item.kind == "explain" and item.instance.id in labels:
        fields["hand_label"] = labels[item.instance.id]
    return Sample(id=item.id, task=f"aware-{item.task}", query="", labels=(), fields=fields)


def _instance_sha(instance: Instance) -> str:
    return hashlib.sha256(instance.model_dump_json().encode("utf-8")).hexdigest()


def _doc(instance: Instance) -> Doc:
    """A demonstration of the pool, as the context holds it (its content covers the choice)."""
    return Doc(instance.id, instance.model_dump_json())


def _files_digest(*paths: str | Path | None) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(b"-" if path is None else hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()[:16]


TASK = AwareTask()
