"""One definition of a generation, whatever backend produced it.

A score must not depend on how a model was served. A server may hand back the stop string it
stopped at, or ignore a stop sequence altogether (``transformers serve``); a local model may
run on past one. So the harness enforces the request's stop sequences itself, in one place:
``finish_generation`` cuts the reply at the earliest stop, the OpenAI convention (the stop
itself is not part of the text), keeps the reply as received in ``raw_text`` when it cut
something, and says ``finish_reason="stop"``. The ``Recorder`` applies it to every generation
before it is recorded or reaches a task (cache hits included); a backend that cuts on its own
(``hf:``, to count its tokens honestly) uses ``cut_at_stop`` so both cuts agree.

Model text is hostile input: the cut is one ``str.find`` per stop sequence (linear in the
text), no regular expressions, and it never raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from toolbench.types import Generation, GenerationRequest


def stop_index(text: str, stops: Iterable[str]) -> int:
    """Where ``text`` is cut: the start of the earliest occurrence of any non-empty stop
    sequence, or -1 when none occurs. An empty stop would cut every reply to nothing, so it
    means nothing (the OpenAI API refuses it)."""
    cut = -1
    for stop in stops:
        if not stop:
            continue
        # Only the part before the best cut so far can hold an earlier one.
        at = text.find(stop, 0, len(text) if cut < 0 else cut + len(stop) - 1)
        if at >= 0 and (cut < 0 or at < cut):
            cut = at
    return cut


def cut_at_stop(text: str, stops: Iterable[str]) -> tuple[str, bool]:
    """``text`` up to (not including) its earliest stop sequence, and whether it was cut."""
    cut = stop_index(text, stops)
    return (text[:cut], True) if cut >= 0 else (text, False)


def finish_generation(generation: Generation, request: GenerationRequest) -> Generation:
    """``generation`` with its text cut at the earliest of ``request.stop``.

    Unchanged (the same object) when no stop sequence occurs in the text. Otherwise a copy
    whose ``raw_text`` is the reply as received (the backend's own ``raw_text`` when it had
    already cut it) and whose ``finish_reason`` is ``"stop"`` — except a reply that ended in
    tool calls, which keeps ``"tool_calls"``: the calls still ended it, only its text was
    trimmed. Applying it twice changes nothing more: the cut text holds no stop sequence."""
    text = generation.text
    if not request.stop or not isinstance(text, str):
        return generation
    cut, was_cut = cut_at_stop(text, request.stop)
    if not was_cut:
        return generation
    reason = "tool_calls" if generation.tool_calls else "stop"
    raw = generation.raw_text if isinstance(generation.raw_text, str) else text
    return dataclasses.replace(generation, text=cut, raw_text=raw, finish_reason=reason)
