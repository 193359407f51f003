"""The run: for every sample x epoch, prompt -> generate -> extract -> execute -> score -> log.

Samples run concurrently (bounded by ``concurrency``); every finished sample is appended to the
run log at once, so an interrupted run loses nothing and a rerun skips what is done.

Nothing a model writes ends the run: an unexpected exception while extracting or scoring one
reply becomes that sample's ``model_error`` (with the exception named, so a harness bug stays
visible), and records are bounded before they are written (``store.RunStore.append``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolbench.models.base import Model, ModelOutputError
from toolbench.prompts.builder import Prompter
from toolbench.runner.bounded import bounded_text
from toolbench.runner.store import Key, RunStore
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.base import Task, TaskData
from toolbench.types import Generation, GenerationRequest, InfraError, Outcome, Sample, Status

# Records keep the prediction for audit; a runaway reply is cut to this many characters.
MAX_PREDICTION_CHARS = 20_000
# A message is one line saying why a sample failed; a longer one is cut.
MAX_MESSAGE_CHARS = 2_000


@dataclass
class PreparedTask:
    task: Task
    data: TaskData
    prompter: Prompter
    samples: list[Sample]


@dataclass
class SessionStats:
    """What this invocation did (a resumed run adds to what earlier sessions did)."""

    done: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    counts: dict[str, int] = field(default_factory=lambda: {s.value: 0 for s in Status})


def prompt_hash(request: GenerationRequest) -> str:
    """A short hash of exactly what the model was shown (prompt or messages)."""
    if request.prompt is not None:
        text = request.prompt
    else:
        text = json.dumps([dict(m) for m in request.messages or ()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


async def solve_one(
    prepared: PreparedTask, sample: Sample, epoch: int, model: Model, sandbox: ProgramRunner
) -> tuple[Outcome, Generation | None, str, str]:
    """One sample through the pipeline: (outcome, generation, prediction text, prompt hash)."""
    request = prepared.prompter.request(sample, epoch)
    phash = prompt_hash(request)
    try:
        generation = await model.generate(request)
    except InfraError as exc:
        return Outcome(status=Status.INFRA_ERROR, message=one_line(exc)), None, "", phash
    except ModelOutputError as exc:
        return Outcome(status=Status.MODEL_ERROR, message=one_line(exc)), None, "", phash
    try:
        action = prepared.task.extract_action(generation.text)
        outcome = await prepared.task.score(prepared.data, sample, action, sandbox)
    except InfraError as exc:  # e.g. a live service down: retried on resume, not scored
        outcome = Outcome(status=Status.INFRA_ERROR, message=one_line(exc))
    except Exception as exc:  # one hostile reply must not end the run; say what happened
        message = f"internal error while scoring this reply: {one_line(exc)}"
        outcome = Outcome(status=Status.MODEL_ERROR, message=message)
    return outcome, generation, generation.text, phash


def make_record(
    sample: Sample,
    epoch: int,
    outcome: Outcome,
    generation: Generation | None,
    prediction: str,
    phash: str,
) -> dict[str, Any]:
    """The log record of one sample. Model-controlled text is cut here (prediction, message);
    everything else is bounded when the store writes it, so this never raises."""
    return {
        "task": sample.task,
        "id": sample.id,
        "epoch": epoch,
        "status": outcome.status.value,
        "success": outcome.success,
        "metrics": outcome.metrics,
        "message": one_line_text(outcome.message),
        "prediction": bounded_text(prediction, MAX_PREDICTION_CHARS),
        "prompt_hash": phash,
        "latency_s": round(generation.latency_s, 4) if generation else None,
        "prompt_tokens": generation.prompt_tokens if generation else 0,
        "completion_tokens": generation.completion_tokens if generation else 0,
        "cached": generation.cached if generation else False,
        "details": outcome.details,
    }


async def run_all(
    prepared: list[PreparedTask],
    epochs: int,
    done: set[Key],
    model: Model,
    sandbox: ProgramRunner,
    store: RunStore,
    concurrency: int,
    on_progress: Callable[[str], None] | None = None,
) -> SessionStats:
    """Run every (task, sample, epoch) not in ``done``; append each record as it finishes."""
    stats = SessionStats()
    work = [
        (p, s, e)
        for e in range(epochs)
        for p in prepared
        for s in p.samples
        if (p.task.name, s.id, e) not in done
    ]
    start = time.perf_counter()
    queue: asyncio.Queue[tuple[PreparedTask, Sample, int]] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)

    async def worker() -> None:
        while True:
            try:
                p, sample, epoch = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            outcome, generation, prediction, phash = await solve_one(
                p, sample, epoch, model, sandbox
            )
            store.append(make_record(sample, epoch, outcome, generation, prediction, phash))
            _count(stats, outcome, generation)
            if on_progress is not None:
                on_progress(p.task.name)

    workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, len(work)) or 1)]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        stats.elapsed_s = time.perf_counter() - start
    return stats


def _count(stats: SessionStats, outcome: Outcome, generation: Generation | None) -> None:
    stats.done += 1
    stats.counts[outcome.status.value] += 1
    if generation is not None:
        stats.model_calls += 1
        stats.cached_calls += int(generation.cached)
        stats.prompt_tokens += generation.prompt_tokens
        stats.completion_tokens += generation.completion_tokens


def one_line(exc: BaseException) -> str:
    try:
        text = " ".join(str(exc)[:MAX_MESSAGE_CHARS].split())
    except Exception:  # a foreign __str__ that fails: the type's name is still worth saying
        text = "(unprintable)"
    return f"{type(exc).__name__}: {text}"[:500]


def one_line_text(message: object) -> str:
    """``message`` on one line (any line breaks become spaces), at most MAX_MESSAGE_CHARS."""
    text = message if isinstance(message, str) else f"<{type(message).__name__}>"
    return bounded_text(" ".join(text[: 2 * MAX_MESSAGE_CHARS].split()), MAX_MESSAGE_CHARS)
