"""Reading what an ``hf:`` model generated: where each row ends, its text, its token count,
its finish reason and its tool calls.

Plain Python over token ids and a tokenizer, so tests feed it ids they encoded themselves
(``HFModel._generate_rows`` is the only part that needs the model). The rules are the
OpenAI-compatible servers': the text stops before the earliest stop sequence (the stop is not
part of it, ``models.generation``), ``completion_tokens`` counts the tokens the row really
generated up to and including the one that completed the stop or the end-of-sequence token,
and ``finish_reason`` is ``"stop"`` when the row ended by itself (eos or a stop sequence) and
``"length"`` when it ran into ``max_tokens``. Nothing relies on the pad token differing from
eos: a row is cut at its own ``max_tokens`` first, then at its first eos.

Model output is hostile input: every step is a bounded number of decodes and ``str.find``
calls over at most ``max_tokens`` ids; the response parsing and tool-call readers never raise
out of here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolbench.models.generation import stop_index
from toolbench.models.toolcalls import parse_tool_calls

log = logging.getLogger(__name__)

Decode = Callable[[Sequence[int]], str]


@dataclass(frozen=True)
class RowEnd:
    """One generated row, read."""

    #: The reply, before the earliest stop sequence.
    text: str
    #: The reply as generated (up to eos) when a stop sequence cut it, else None.
    raw_text: str | None
    #: The ids the row really generated: through the stop-completing token or the eos.
    tokens: list[int]
    finish_reason: str


def read_row(
    row: Sequence[int],
    *,
    max_tokens: int,
    stops: Collection[str],
    eos_ids: Collection[int],
    pad_id: int | None,
    decode: Decode,
) -> RowEnd:
    """Where ``row`` (new ids, maybe padded after its end) ends, and what it says."""
    row = list(row[:max_tokens])
    eos_at = next((index for index, token in enumerate(row) if token in eos_ids), None)
    body = row if eos_at is None else row[:eos_at]
    text = decode(body)
    cut = stop_index(text, stops)
    if cut >= 0:
        used = tokens_through_stop(body, stops, decode)
        return RowEnd(text[:cut], text, body[:used], "stop")
    if eos_at is not None:
        return RowEnd(text, None, row[: eos_at + 1], "stop")
    used = len(body)
    # A distinct pad token fills a row that ended before the others (a stop the text does not
    # show, e.g. one that began in the prompt); those pads were never generated.
    while used and body[used - 1] == pad_id:
        used -= 1
    return RowEnd(text, None, body[:used], "length" if used >= max_tokens else "stop")


def tokens_through_stop(body: Sequence[int], stops: Collection[str], decode: Decode) -> int:
    """The fewest leading ids of ``body`` whose text holds a stop sequence (``body``'s does):
    a binary search, so a few decodes however long the row."""
    low, high = 1, len(body)
    while low < high:
        middle = (low + high) // 2
        if stop_index(decode(body[:middle]), stops) >= 0:
            high = middle
        else:
            low = middle + 1
    return high


def tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The function names of OpenAI tool dicts (malformed entries skipped)."""
    names: list[str] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str):
            names.append(name)
    return names


def parse_reply_tools(
    tokenizer: Any,
    end: RowEnd,
    prompt_ids: Sequence[int],
    tools: list[dict[str, Any]],
    eos_ids: Collection[int] = (),
) -> tuple[str, list[dict[str, Any]]]:
    """The reply's content and its tool calls (OpenAI dicts, ids ``call_<n>``).

    A tokenizer that defines transformers' response parsing (``response_template``) is read
    with it, as ``transformers serve`` does: on the reply with its special tokens, after the
    prompt (templates pre-write parts of the assistant turn). Otherwise, or when that parse
    fails, the common formats (``toolcalls.parse_tool_calls``) on the reply with its special
    tokens but without its eos (``[TOOL_CALLS]``, ``<|python_tag|>`` are special tokens in
    their families' tokenizers); the text is kept as it is when no call was found."""
    parsed = _template_parse(tokenizer, end, prompt_ids, tools)
    if parsed is not None:
        return parsed

    if end.raw_text is not None:  # cut at a stop sequence: the cut text is the reply
        reply = end.text
    else:
        tokens = list(end.tokens)
        if tokens and tokens[-1] in eos_ids:
            tokens.pop()
        reply = _decode_raw(tokenizer, tokens)
    result = parse_tool_calls(reply, tool_names(tools))
    if not result.calls:
        return end.text, []
    return result.content, list(result.calls)


def _template_parse(
    tokenizer: Any, end: RowEnd, prompt_ids: Sequence[int], tools: list[dict[str, Any]]
) -> tuple[str, list[dict[str, Any]]] | None:
    template = getattr(tokenizer, "response_template", None)
    if template is None or not callable(getattr(tokenizer, "parse_response", None)):
        return None
    # A reply cut at a stop sequence is parsed as cut; otherwise with its special tokens
    # (eos included, as ``transformers serve`` passes it), which formats use as delimiters.
    reply = end.text if end.raw_text is not None else _decode_raw(tokenizer, end.tokens)
    try:
        prefix = _decode_raw(tokenizer, prompt_ids)
        parsed = tokenizer.parse_response(reply, template, prefix=prefix, tools=tools)
    except Exception as error:  # a template and a reply it does not fit: read the formats
        log.debug("response_template parse failed: %s", error)
        return None
    if not isinstance(parsed, Mapping):
        return None
    content = parsed.get("content")
    return (content if isinstance(content, str) else ""), openai_calls(parsed.get("tool_calls"))


def _decode_raw(tokenizer: Any, ids: Sequence[int]) -> str:
    return str(tokenizer.decode(list(ids), skip_special_tokens=False))


def openai_calls(value: Any) -> list[dict[str, Any]]:
    """``transformers``' parsed ``tool_calls`` (``{"type", "function": {"name", "arguments":
    dict}}``) as OpenAI tool calls with JSON-string arguments; malformed entries dropped."""
    calls: list[dict[str, Any]] = []
    for item in value if isinstance(value, list) else []:
        function = item.get("function") if isinstance(item, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not isinstance(function, Mapping):
            continue
        arguments = function.get("arguments", {})
        if not isinstance(arguments, str):
            try:
                arguments = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError):
                continue
        call = {"name": name, "arguments": arguments}
        calls.append({"id": f"call_{len(calls)}", "type": "function", "function": call})
    return calls
