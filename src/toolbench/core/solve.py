"""What a task's solve loop gets from the runner: the sample's state and a recording ``generate``.

A task solves a sample however it likes: one prompt and one answer (the five ToolBench tasks),
an episode of many turns, a tool-calling loop, or a program that asks the model again while it
runs. Whatever the shape, every model call goes through the ``Recorder`` the runner hands it,
so every call is recorded on the sample's state (step, prompt hash, text, tool calls, tokens,
latency, cache use) and reaches the run log, the totals and replay the same way. The recorder
is also where a reply is cut at the request's stop sequences (``finish_generation``), for every
backend and for cached replies alike, so a score never depends on how the model was served.

Model text is hostile input, and the harness parses it (extraction, grounding, action
grammars, classifiers) on the same event loop that drives every other sample. Two limits here
keep one reply from stalling the run: a reply over ``MAX_REPLY_CHARS`` is refused as the
model's error before any task reads it, and CPU-heavy work on a large reply goes through
``off_loop``, which runs it in a thread with a deadline (a breach is that sample's
``model_error``; the other samples go on).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from toolbench.core.bounded import bounded_text
from toolbench.models.base import Model, ModelOutputError
from toolbench.models.digest import prompt_digest
from toolbench.models.generation import finish_generation
from toolbench.sandbox import SandboxError
from toolbench.types import (
    ContextOverflow,
    Generation,
    GenerationRequest,
    InfraError,
    Outcome,
    Sample,
    ServiceDown,
    Status,
)

# One call's text in the record's call list is cut to this many characters; the prediction
# keeps more (see engine.MAX_PREDICTION_CHARS).
MAX_CALL_TEXT_CHARS = 4_000
# A loop that never stops calling the model is cut off by the runner, whatever the task says.
MAX_CALLS_PER_SAMPLE = 200

# A reply longer than this is refused before any task parses it (1 MB of text is hundreds of
# times any answer a tool task expects; every harness-side parser is linear up to it).
MAX_REPLY_CHARS = 1_000_000
# Work on one reply that ``off_loop`` runs may take this long before the sample fails.
SCORING_DEADLINE_S = 30.0
# Below this many characters ``off_loop`` runs the work inline: with linear parsers that is
# well under a millisecond, cheaper than a thread hop.
OFF_LOOP_MIN_CHARS = 4_000

# Records keep the prediction for audit; a runaway reply is cut to this many characters.
MAX_PREDICTION_CHARS = 20_000
# A message is one line saying why a sample failed; a longer one is cut.
MAX_MESSAGE_CHARS = 2_000

Generate = Callable[[GenerationRequest], Awaitable[Generation]]
T = TypeVar("T")


class TooManyCalls(Exception):
    """A solve loop asked for more model calls than any sample may make."""


class DeadlineExceeded(Exception):
    """Work on one sample's reply ran past its deadline: the sample's ``model_error``."""


async def off_loop(
    work: Callable[..., T], *args: Any, size: int, what: str = "scoring this reply"
) -> T:
    """``work(*args)`` without blocking the event loop for long: inline when its input (``size``
    characters of model text) is small, else in a thread of its own, awaited for at most
    ``SCORING_DEADLINE_S`` seconds. Past the deadline the sample fails (``DeadlineExceeded``)
    and the thread is left to finish in the background (Python cannot stop a thread; the
    inputs are capped, so it does finish); a thread per call, not a shared pool, so work left
    running never delays another sample's start. ``work`` must not touch the event loop."""
    if size <= OFF_LOOP_MIN_CHARS:
        return work(*args)
    deadline = SCORING_DEADLINE_S
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def target() -> None:
        try:
            result, error = work(*args), None
        except BaseException as exc:  # handed to the awaiting sample, whatever it is
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name="toolbench-off-loop", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), deadline)
    except asyncio.TimeoutError:
        raise DeadlineExceeded(
            f"{what} ran past its {deadline:g} s deadline (a {size:,}-character input); "
            "a reply this costly to read counts as the model's failure"
        ) from None


def check_reply_size(text: str) -> None:
    """Refuse a reply over ``MAX_REPLY_CHARS`` as the model's error, before anything parses it."""
    if len(text) > MAX_REPLY_CHARS:
        raise ModelOutputError(
            f"the reply is {len(text):,} characters; the harness reads at most "
            f"{MAX_REPLY_CHARS:,} characters of one reply"
        )


def prompt_hash(request: GenerationRequest) -> str:
    """A short hash of exactly what the model was shown (prompt or messages, and tools)."""
    return prompt_digest(request)[:16]  # incremental over a growing transcript


@dataclass
class CallRecord:
    """One model call as the run log keeps it."""

    step: str
    prompt_hash: str
    text: str
    tool_calls: list[dict[str, Any]]
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    finish_reason: str | None
    role: str = "model"  # "judge" for a call to the judging model (awareness explanations)
    #: The reply as received when the harness cut it at a stop sequence; None when not cut.
    raw_text: str | None = None
    #: Requests that shared the model call that answered this one (a local batch).
    batch_size: int = 1

    def as_json(self) -> dict[str, Any]:
        """The call as an entry of the record's ``calls``: texts cut to ``MAX_CALL_TEXT_CHARS``,
        and the fields most calls leave unset (``raw_text``, ``batch_size``, ``tool_calls``,
        ``role``) only where set, so a usual record stays small."""
        entry: dict[str, Any] = {
            "step": self.step,
            "prompt_hash": self.prompt_hash,
            "text": bounded_text(self.text, MAX_CALL_TEXT_CHARS),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 4),
            "cached": self.cached,
            "finish_reason": self.finish_reason,
        }
        if self.raw_text is not None:
            entry["raw_text"] = bounded_text(self.raw_text, MAX_CALL_TEXT_CHARS)
        if self.batch_size > 1:
            entry["batch_size"] = self.batch_size
        if self.tool_calls:
            entry["tool_calls"] = self.tool_calls
        if self.role != "model":
            entry["role"] = self.role
        return entry


@dataclass
class SampleState:
    """One sample x epoch while it is being solved.

    ``prediction`` is what the record shows as the model's answer (the task sets it: the reply
    of a one-call task, the last action of an episode). ``trace`` is the task's own account of
    what the world answered at each step, shown next to the calls in the log.
    """

    sample: Sample
    epoch: int
    calls: list[CallRecord] = field(default_factory=list)
    prediction: str = ""
    trace: list[dict[str, Any]] = field(default_factory=list)
    first_prompt_hash: str = ""
    started: float = field(default_factory=time.perf_counter)

    def model_calls(self) -> list[CallRecord]:
        """Calls to the evaluated model (not to a judge): what the record's totals count."""
        return [call for call in self.calls if call.role == "model"]


class Recorder:
    """The ``generate`` a solve loop calls: it fills in the sample and epoch, makes each step
    label unique within the sample (``turn`` twice becomes ``turn`` and ``turn#2``), sends the
    request through the (cached, retrying) model, cuts the reply at the request's stop
    sequences (``finish_generation``) and records the call. Exceptions (infra
    errors, model errors) pass through: the runner turns them into the sample's outcome."""

    def __init__(self, model: Model, state: SampleState, role: str = "model") -> None:
        """A recorder of ``model``'s calls for the sample of ``state``, each recorded with
        ``role`` (``"model"`` for the model under test, which the record's totals count)."""
        self._model = model
        self._state = state
        self._role = role

    def for_role(self, model: Model, role: str) -> Recorder:
        """A recorder for another model (a judge) writing into the same sample's calls."""
        return Recorder(model, self._state, role)

    async def __call__(self, request: GenerationRequest) -> Generation:
        """Send ``request`` and record the call; the reply comes back cut at its stops. Raises
        ``TooManyCalls`` past ``MAX_CALLS_PER_SAMPLE`` calls, and ``ModelOutputError`` for a
        reply over ``MAX_REPLY_CHARS`` (after recording it: the call was made)."""
        state = self._state
        if len(state.calls) >= MAX_CALLS_PER_SAMPLE:
            raise TooManyCalls(f"more than {MAX_CALLS_PER_SAMPLE} model calls for one sample")
        step = self._unique_step(request.step)
        if request.sample is None or request.epoch != state.epoch or request.step != step:
            # Copied only when something changes (a one-call task's request from the prompter
            # already names its sample, epoch and step): ``replace`` re-runs the whole
            # constructor, a measurable part of the per-call cost of a cheap task.
            request = dataclasses.replace(
                request, sample=request.sample or state.sample, epoch=state.epoch, step=step
            )
        phash = prompt_hash(request)
        if not state.first_prompt_hash:
            state.first_prompt_hash = phash
        # Cut at the stop sequences here, once for every backend (cache hits included).
        generation = finish_generation(await self._model.generate(request), request)
        state.calls.append(
            CallRecord(
                step=request.step,
                prompt_hash=phash,
                text=generation.text,
                tool_calls=list(generation.tool_calls),
                prompt_tokens=generation.prompt_tokens,
                completion_tokens=generation.completion_tokens,
                latency_s=generation.latency_s,
                cached=generation.cached,
                finish_reason=generation.finish_reason,
                role=self._role,
                raw_text=generation.raw_text,
                batch_size=generation.batch_size,
            )
        )
        check_reply_size(generation.text)  # after recording: the call happened and is counted
        return generation

    def _unique_step(self, step: str) -> str:
        taken = {call.step for call in self._state.calls}
        if step not in taken:
            return step
        n = 2
        while f"{step}#{n}" in taken:
            n += 1
        return f"{step}#{n}"


async def guarded_solve(solve: Callable[[], Awaitable[Outcome]], state: SampleState) -> Outcome:
    """Run a solve loop; whatever it raises becomes the sample's outcome (see module doc)."""
    try:
        return await solve()
    except ServiceDown:  # the run stops: the sample is left undone, not written
        raise
    except ContextOverflow as exc:  # the model's window is too small: its failure, counted
        return Outcome(
            status=Status.MODEL_ERROR,
            message=f"context overflow: {one_line_text(str(exc))}",
            error_kind="context_overflow",
        )
    except InfraError as exc:  # e.g. a live service down: retried on resume, not scored
        return Outcome(status=Status.INFRA_ERROR, message=one_line(exc))
    except SandboxError as exc:  # the sandbox itself failed: the harness's problem
        return Outcome(status=Status.INFRA_ERROR, message=f"sandbox: {one_line_text(str(exc))}")
    except (ModelOutputError, TooManyCalls, DeadlineExceeded) as exc:
        return Outcome(status=Status.MODEL_ERROR, message=one_line(exc))
    except Exception as exc:  # one hostile reply must not end the run; say what happened
        where = "scoring this reply" if state.calls else "solving this sample"
        message = f"internal error while {where}: {one_line(exc)}"
        return Outcome(status=Status.MODEL_ERROR, message=message)


def one_line(exc: BaseException) -> str:
    """``exc`` as an outcome's one-line message, its type first, at most 500 characters; an
    exception whose ``__str__`` fails still gives its type, so reporting never fails too."""
    try:
        text = " ".join(str(exc)[:MAX_MESSAGE_CHARS].split())
    except Exception:  # a foreign __str__ that fails: the type's name is still worth saying
        text = "(unprintable)"
    return f"{type(exc).__name__}: {text}"[:500]


def one_line_text(message: object) -> str:
    """``message`` on one line (any line breaks become spaces), at most MAX_MESSAGE_CHARS."""
    text = message if isinstance(message, str) else f"<{type(message).__name__}>"
    return bounded_text(" ".join(text[: 2 * MAX_MESSAGE_CHARS].split()), MAX_MESSAGE_CHARS)
