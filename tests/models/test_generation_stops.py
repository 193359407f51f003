"""``finish_generation``: the one place a reply is cut at its request's stop sequences, and the
``Recorder`` that applies it to every call (cache hits included) before recording it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.solve import MAX_CALL_TEXT_CHARS, CallRecord, Recorder, SampleState
from toolbench.models.cache import CachedModel
from toolbench.models.generation import cut_at_stop, finish_generation, stop_index
from toolbench.types import Generation, GenerationRequest, Sample

SAMPLE = Sample(id="1", task="t", query="q", labels=())
# Small alphabets make stops occur, overlap and repeat often.
TEXT = st.text(alphabet="ab\nT:-", max_size=60)
STOPS = st.lists(st.text(alphabet="ab\nT:-", max_size=4), max_size=5).map(tuple)


def request(*stops: str) -> GenerationRequest:
    return GenerationRequest(prompt="p", stop=stops, sample=SAMPLE)


@settings(max_examples=400, deadline=None)
@given(text=TEXT, stops=STOPS, reason=st.sampled_from([None, "stop", "length"]))
def test_the_cut_text_holds_no_stop_and_cutting_again_changes_nothing(
    text: str, stops: tuple[str, ...], reason: str | None
) -> None:
    generation = Generation(text=text, finish_reason=reason, completion_tokens=7)
    once = finish_generation(generation, request(*stops))
    assert not any(stop and stop in once.text for stop in stops)
    assert text.startswith(once.text)
    # The cut is at the earliest stop: what follows the kept text starts with a stop.
    if once.text != text:
        assert any(stop and text[len(once.text) :].startswith(stop) for stop in stops)
        assert once.raw_text == text and once.finish_reason == "stop"
        assert once.completion_tokens == 7  # the backend's count is not recomputed here
    else:
        assert once is generation and once.raw_text is None and once.finish_reason == reason
    assert finish_generation(once, request(*stops)) is once


@settings(max_examples=300, deadline=None)
@given(text=TEXT, stops=STOPS)
def test_stop_index_is_the_earliest_occurrence_of_any_stop(
    text: str, stops: tuple[str, ...]
) -> None:
    found = [text.find(stop) for stop in stops if stop and stop in text]
    assert stop_index(text, stops) == (min(found) if found else -1)
    assert cut_at_stop(text, stops) == ((text[: min(found)], True) if found else (text, False))


def test_examples_of_the_openai_convention() -> None:
    cut = finish_generation(Generation(text="API.a()\nTask: next"), request("------", "Task:"))
    assert (cut.text, cut.raw_text, cut.finish_reason) == (
        "API.a()\n",
        "API.a()\nTask: next",
        "stop",
    )
    # A server that hands back the stop string it stopped at (transformers serve).
    served = Generation(text="x = 1\nobjects = ['", finish_reason="stop")
    assert finish_generation(served, request("#", "objects = [")).text == "x = 1\n"
    # Of two stops the earlier in the text wins, whichever comes first in the list.
    assert finish_generation(Generation(text="a#b--c"), request("--", "#")).text == "a"
    # A stop that is a prefix of another: the earliest start, so the shorter one at the same spot.
    assert finish_generation(Generation(text="ab# define f"), request("# define", "#")).text == "ab"


def test_no_stops_empty_stops_and_no_occurrence_leave_the_generation_alone() -> None:
    generation = Generation(text="Task: reply", finish_reason="length")
    assert finish_generation(generation, request()) is generation
    assert finish_generation(generation, request("")) is generation  # "" would cut everything
    assert finish_generation(generation, request("zzz")) is generation


def test_a_backend_cut_keeps_its_raw_text_and_tool_calls_keep_their_reason() -> None:
    backend_cut = Generation(text="a\nTask: b", raw_text="a\nTask: b\n------ c")
    assert finish_generation(backend_cut, request("Task:")).raw_text == "a\nTask: b\n------ c"
    call = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    tools = Generation(text="ok STOP tail", tool_calls=[call], finish_reason="tool_calls")
    cut = finish_generation(tools, request("STOP"))
    assert (cut.text, cut.finish_reason, cut.tool_calls) == ("ok ", "tool_calls", [call])


def test_a_hostile_reply_is_cut_in_one_pass() -> None:
    """Many near-misses of a long stop: ``str.find`` stays linear (no regex backtracking)."""
    text = "-----x" * 200_000 + "------"
    cut = finish_generation(Generation(text=text), request("------", "Task:"))
    assert cut.text == text[:-6] and cut.raw_text == text


class Scripted:
    """A model that answers every request with the same text, counting its calls."""

    name = "scripted"
    cacheable = True

    def __init__(self, text: str, batch_size: int = 1) -> None:
        self.text, self.batch_size, self.calls = text, batch_size, 0

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        return Generation(text=self.text, finish_reason="length", batch_size=self.batch_size)

    async def aclose(self) -> None:
        return None


def recorded(model: object, req: GenerationRequest) -> tuple[Generation, CallRecord]:
    state = SampleState(sample=SAMPLE, epoch=0)

    async def go() -> Generation:
        return await Recorder(model, state)(req)  # type: ignore[arg-type]

    generation = asyncio.run(go())
    (call,) = state.calls
    return generation, call


def test_the_recorder_cuts_before_recording_and_before_returning() -> None:
    generation, call = recorded(Scripted("API.a()\n------\nTask: b"), request("------", "Task:"))
    assert generation.text == call.text == "API.a()\n"
    assert generation.raw_text == call.raw_text == "API.a()\n------\nTask: b"
    assert call.finish_reason == "stop"
    entry = call.as_json()
    assert entry["raw_text"] == "API.a()\n------\nTask: b" and "batch_size" not in entry
    assert list(entry)[:8] == [
        "step",
        "prompt_hash",
        "text",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "cached",
        "finish_reason",
    ]


def test_an_uncut_call_keeps_the_record_shape_and_a_batch_is_written() -> None:
    _, call = recorded(Scripted("API.a()"), request("------"))
    assert "raw_text" not in call.as_json() and "batch_size" not in call.as_json()
    _, batched = recorded(Scripted("API.a()", batch_size=4), request("------"))
    assert batched.as_json()["batch_size"] == 4


def test_a_long_raw_text_is_bounded_like_the_text() -> None:
    text = "x" * (3 * MAX_CALL_TEXT_CHARS) + "Task:"
    _, call = recorded(Scripted(text), request("Task:"))
    entry = call.as_json()
    assert len(entry["raw_text"]) <= MAX_CALL_TEXT_CHARS + 100
    assert len(entry["text"]) <= MAX_CALL_TEXT_CHARS + 100
    json.dumps(entry)


def test_a_cache_hit_is_cut_the_same_way(tmp_path: Path) -> None:
    """A reply cached uncut (e.g. by an older version, or from a server that returned the stop)
    is cut when it is read back, exactly as when it was fresh."""
    inner = Scripted("a()\nTask: more")
    req = request("Task:")

    async def twice() -> tuple[list[Generation], list[CallRecord]]:
        model = CachedModel(inner, tmp_path / "responses.sqlite")  # type: ignore[arg-type]
        state = SampleState(sample=SAMPLE, epoch=0)
        try:
            first = await Recorder(model, state)(req)
            second = await Recorder(model, state)(replace(req, step="again"))
        finally:
            await model.aclose()
        return [first, second], state.calls

    (fresh, hit), calls = asyncio.run(twice())
    assert inner.calls == 1 and hit.cached and not fresh.cached
    assert fresh.text == hit.text == "a()\n" and hit.raw_text == "a()\nTask: more"
    assert [c.as_json()["text"] for c in calls] == ["a()\n", "a()\n"]
    assert all(c.finish_reason == "stop" for c in calls)
