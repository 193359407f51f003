"""The run's work: every sample x epoch solved by its task, each record appended as it ends.

Work items run concurrently (bounded by ``concurrency``); every finished item is appended to the
run log at once, so an interrupted run loses nothing and a rerun skips what is done. The same
loop runs every task's samples: tool tasks, awareness items, a person's episodes.

Nothing a model writes ends the run; only the model's service going away does
(``ServiceDown``: the run stops and leaves the rest undone for a rerun). The task's whole
solve loop is wrapped: an ``InfraError`` or a sandbox failure anywhere in it (the model call,
executing, scoring) is the sample's ``infra_error`` (retried on resume); a model error is
``model_error``, and so is work on a reply that ran past its deadline (``solve.off_loop``);
any other exception is a ``model_error`` naming the exception, so a harness bug stays
visible. Records are bounded before they are written (``store.RunStore.append``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolbench.core.agent import solve_with_agent
from toolbench.core.bounded import bounded_text
from toolbench.core.solve import (
    MAX_PREDICTION_CHARS,
    Recorder,
    SampleState,
    guarded_solve,
    one_line_text,
)
from toolbench.core.subject import AgentSubject, ModelSubject, Subject, as_subject
from toolbench.core.task import Resources, Task
from toolbench.models.base import Model
from toolbench.runner.store import Key, RunStore
from toolbench.types import EndpointNotServed, Outcome, Sample, ServiceDown, Status


@dataclass
class PreparedTask:
    task: Task
    resources: Resources[Any]
    samples: list[Sample]

    @property
    def data(self) -> Any:
        return self.resources.data


@dataclass
class SessionStats:
    """What this invocation did (a resumed run adds to what earlier sessions did). It is
    updated as each record is written, so an interrupted session still counts what it did.

    Tokens are split: ``prompt_tokens``/``completion_tokens`` are those of calls the model
    generated in this session, ``cached_*`` those answered from the response cache (they cost
    nothing now, and counting them as generated would make a warm run look fast).
    ``stopped`` says why the session stopped before its work was done (the model's service
    went away), None when it did not."""

    done: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    elapsed_s: float = 0.0
    counts: dict[str, int] = field(default_factory=lambda: {s.value: 0 for s in Status})
    stopped: str | None = None
    # Why, when it did: "service_down" (retry later) or "not_served" (a setting to fix).
    stopped_kind: str | None = None

    def count(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.counts[record["status"]] += 1
        for call in record.get("calls") or ():
            self.model_calls += 1
            prompt = int(call.get("prompt_tokens") or 0)
            completion = int(call.get("completion_tokens") or 0)
            if call.get("cached"):
                self.cached_calls += 1
                self.cached_prompt_tokens += prompt
                self.cached_completion_tokens += completion
            else:
                self.prompt_tokens += prompt
                self.completion_tokens += completion


class SampleWork:
    """Every (sample's task, sample, epoch) of a run, as log keys made lazily (a run of a
    million records holds no million objects), and how to solve one key into its record.

    Keys come epoch by epoch, tasks in order. A key uses the sample's own ``task`` (the
    awareness task tags its items ``aware-<mode>``), which is also the record's ``task``; the
    progress bar of a key is its task's name. Executors take keys from ``planned_keys()`` and call
    ``solve``; the same object, built from the same recipe, solves keys on a Ray node."""

    def __init__(
        self, prepared: Sequence[PreparedTask], epochs: int, subject: Subject | Model
    ) -> None:
        self.prepared, self.epochs = list(prepared), epochs
        self.subject = as_subject(subject)
        self._index = {(s.task, s.id): (p, s) for p in self.prepared for s in p.samples}

    @property
    def planned(self) -> int:
        return self.epochs * sum(len(p.samples) for p in self.prepared)

    def planned_keys(self) -> Iterator[tuple[Key, str]]:
        """(log key, progress bar) of every record of the run, in run order."""
        for epoch in range(self.epochs):
            for p in self.prepared:
                bar = p.task.name
                for sample in p.samples:
                    yield (sample.task, sample.id, epoch), bar

    async def solve(self, key: Key) -> dict[str, Any]:
        """The record of ``key``; never raises for anything a model does (``ServiceDown``
        when the model's service is gone)."""
        prepared, sample = self._index[(key[0], key[1])]
        return await solve_sample(prepared.task, prepared.resources, sample, key[2], self.subject)

    @property
    def model(self) -> Model | None:
        """The model under test, None when an agent is (for what only models have: their
        endpoints' pool stats, a fit to the data)."""
        return self.subject.model if isinstance(self.subject, ModelSubject) else None


async def solve_sample(
    task: Task, resources: Resources[Any], sample: Sample, epoch: int, subject: Subject | Model
) -> dict[str, Any]:
    """One sample through its task's solve loop, into its log record: a model answers the
    task's prompts, an agent calls the task's tools itself (``core.agent``)."""
    state = SampleState(sample=sample, epoch=epoch)
    match as_subject(subject):
        case AgentSubject(agent=agent):
            outcome = await guarded_solve(
                lambda: solve_with_agent(task, state, resources, agent), state
            )
        case ModelSubject(model=model):
            outcome = await guarded_solve(
                lambda: task.solve(state, Recorder(model, state), resources), state
            )
    return make_record(state, outcome)


def make_record(state: SampleState, outcome: Outcome) -> dict[str, Any]:
    """The log record of one sample. Model-controlled text is cut here (prediction, message,
    call texts); everything else is bounded when the store writes it, so this never raises.

    The top-level tokens, latency and cache flag are the evaluated model's calls summed (for a
    one-call task, its one call); ``calls`` lists every call."""
    sample, calls = state.sample, state.model_calls()
    return {
        "task": sample.task,
        "id": sample.id,
        "epoch": state.epoch,
        "status": outcome.status.value,
        "success": outcome.success,
        "metrics": outcome.metrics,
        "message": one_line_text(outcome.message),
        "prediction": bounded_text(state.prediction, MAX_PREDICTION_CHARS),
        "prompt_hash": state.first_prompt_hash,
        "latency_s": round(sum(c.latency_s for c in calls), 4) if calls else None,
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cached": bool(calls) and all(c.cached for c in calls),
        "details": outcome.details,
        "calls": [call.as_json() for call in state.calls],
        **({"trace": state.trace} if state.trace else {}),
        **({"error_kind": outcome.error_kind} if outcome.error_kind else {}),
    }


# The keys an executor is handed (log key, progress bar), and what it hands each record to.
Todo = Iterator[tuple[Key, str]]
OnRecord = Callable[[dict[str, Any], str], None]


class Executor(Protocol):
    """Where a run's samples are solved. Executors decide where, never how records are made
    or kept: every record comes back to ``on_record`` in this process, which appends it to the
    one run log (the caller never gets two records of one key)."""

    async def run(
        self,
        todo: Todo,
        work: SampleWork,
        on_record: OnRecord,
        stats: SessionStats,
        concurrency: int,
    ) -> None: ...


def record_writer(
    store: RunStore, stats: SessionStats, on_progress: Callable[[str], None] | None = None
) -> OnRecord:
    """What an executor calls with each finished record and its progress bar: append it to
    the log, count it, advance the bar."""

    def on_record(record: dict[str, Any], bar: str) -> None:
        store.append(record)
        stats.count(record)
        if on_progress is not None:
            on_progress(bar)

    return on_record


class LocalExecutor:
    """Samples solved in this process's event loop, ``concurrency`` at a time."""

    async def run(
        self,
        todo: Todo,
        work: SampleWork,
        on_record: OnRecord,
        stats: SessionStats,
        concurrency: int,
    ) -> None:
        await run_keys(todo, work.solve, on_record, stats, concurrency)


async def run_keys(
    todo: Todo,
    solve: Callable[[Key], Awaitable[dict[str, Any]]],
    on_record: OnRecord,
    stats: SessionStats,
    concurrency: int,
) -> None:
    """Solve every key (``concurrency`` workers pulling from one iterator, so nothing is
    queued ahead); hand each record to ``on_record`` as it finishes.

    A key whose solve raises ``ServiceDown`` (the model's server is gone, seen by the retry
    layer's breaker) gets no record: it stays undone for a rerun, like every key not started.
    The first one stops the dispatching (``stats.stopped`` says why); keys in flight end on
    their own (quickly: the breaker fails them at once) and are written if they finished."""
    start = time.perf_counter()

    async def worker() -> None:
        while stats.stopped is None:
            try:
                key, bar = next(todo)
            except StopIteration:
                return
            try:
                record = await solve(key)
            except ServiceDown as exc:
                if stats.stopped is None:
                    stats.stopped = one_line_text(str(exc))
                    not_served = isinstance(exc, EndpointNotServed)
                    stats.stopped_kind = "not_served" if not_served else "service_down"
                return
            on_record(record, bar)

    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        stats.elapsed_s = time.perf_counter() - start


async def run_work(
    work: SampleWork,
    store: RunStore,
    concurrency: int,
    stats: SessionStats,
    on_progress: Callable[[str], None] | None = None,
) -> None:
    """Every key of ``work`` solved in this process, each record appended to ``store`` (the
    lifecycle's local path without its folder, progress bars and run.json)."""
    writer = record_writer(store, stats, on_progress)
    workers = min(concurrency, work.planned) or 1
    await LocalExecutor().run(work.planned_keys(), work, writer, stats, workers)
