"""Recognising a server's "the prompt does not fit the context window" error.

A served model answers a prompt that is too long with an HTTP error (400 on vLLM, SGLang,
llama.cpp and OpenAI; 422 on TGI; 413 behind some proxies). That is the model's failure, not
the service's: left as an infra error it would be excluded from the score, retried on every
rerun forever, and a model with a smaller window would look better. ``overflow_from_error``
tells such an answer apart from other errors and pulls out the numbers the server states, so
the record can say "prompt 2605 + max_tokens 256 > context 2048".

The texts are the servers' own (in their source):

- vLLM up to 0.9: "This model's maximum context length is N tokens. However, you requested T
  tokens (P in the messages, M in the completion)." (also "... you requested P tokens in the
  messages, ..." when no max_tokens was sent);
- vLLM 0.10-0.17: "This model's maximum context length is N tokens. However, your request has
  P input tokens." and "'max_tokens' or 'max_completion_tokens' is too large: M. This model's
  maximum context length is N tokens and your request has P input tokens (M > N - P).";
- vLLM 0.18 and later: "... However, you requested M output tokens and your prompt contains
  [at least ]P input tokens, for a total of ...", "max_tokens=M cannot be greater than
  max_model_len=...N", and "You passed P input tokens and requested M output tokens. However,
  the model's context length is only N tokens, ...";
- OpenAI: error code ``context_length_exceeded`` ("... However, your messages resulted in P
  tokens." or "Your input exceeds the context window of this model.");
- llama.cpp server: type ``exceed_context_size_error``, "request (P tokens) exceeds the
  available context size (N tokens), try increasing it" with ``n_prompt_tokens``/``n_ctx``
  fields (older builds: "the request exceeds the available context size, try increasing it");
- TGI: "`inputs` tokens + `max_new_tokens` must be <= N. Given: P `inputs` tokens and M
  `max_new_tokens`" and "`inputs` must have less than N tokens. Given: P";
- SGLang: "Requested token count exceeds the model's maximum context length of N tokens. You
  requested a total of T tokens: P tokens from the input messages and M tokens for the
  completion." and "The input (P tokens) is longer than the model's context length (N tokens)."

The body is the server's, so it is treated as hostile input: only its first ``MAX_BODY_CHARS``
are read, numbers are at most 12 digits, and every pattern is a literal phrase with bounded
digit runs between (no nested or overlapping repetition), so matching is linear in the body.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolbench.types import ContextOverflow

#: How much of an error body is read. Every known message fits in a few hundred characters.
MAX_BODY_CHARS = 4096
#: HTTP statuses that servers answer an overflow with.
OVERFLOW_STATUSES = frozenset({400, 413, 422})

_N = r"(\d{1,12})"


def _pattern(text: str) -> re.Pattern[str]:
    """A phrase with ``{ctx}``, ``{prompt}``, ``{max}``, ``{any}`` holes for numbers; spaces
    match any run of whitespace (a proxy may rewrap the message)."""
    holes = {
        "{ctx}": r"(?P<ctx>\d{1,12})",
        "{prompt}": r"(?P<prompt>\d{1,12})",
        "{max}": r"(?P<max>\d{1,12})",
        "{any}": r"\d{1,12}",
    }
    out = re.escape(text).replace(r"\ ", r"\s{1,8}")
    for hole, group in holes.items():
        out = out.replace(re.escape(hole), group)
    return re.compile(out, re.IGNORECASE)


#: Most specific first: the first pattern that matches gives the numbers.
_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    _pattern(p)
    for p in (
        # vLLM <= 0.9 (and OpenAI's old wording)
        "maximum context length is {ctx} tokens. However, you requested {any} tokens "
        "({prompt} in the messages, {max} in the completion)",
        "maximum context length is {ctx} tokens. However, you requested {prompt} tokens in the",
        # vLLM 0.10-0.17
        "'max_tokens' or 'max_completion_tokens' is too large: {max}. This model's maximum "
        "context length is {ctx} tokens and your request has {prompt} input tokens",
        "maximum context length is {ctx} tokens. However, your request has {prompt} input tokens",
        # vLLM >= 0.18
        "maximum context length is {ctx} tokens. However, you requested {max} output tokens "
        "and your prompt contains at least {prompt} input tokens",
        "maximum context length is {ctx} tokens. However, you requested {max} output tokens "
        "and your prompt contains {prompt} input tokens",
        "maximum context length is {ctx} tokens. However, you requested {max} output tokens",
        "max_tokens={max} cannot be greater than max_model_len=max_total_tokens={ctx}",
        "max_completion_tokens={max} cannot be greater than max_model_len=max_total_tokens={ctx}",
        "max_tokens={max} cannot be greater than max_model_len={ctx}",
        "max_completion_tokens={max} cannot be greater than max_model_len={ctx}",
        "You passed {prompt} input tokens and requested {max} output tokens. However, the "
        "model's context length is only {ctx} tokens",
        # OpenAI
        "maximum context length is {ctx} tokens. However, your messages resulted in {prompt} "
        "tokens",
        # SGLang
        "exceeds the model's maximum context length of {ctx} tokens. You requested a total of "
        "{any} tokens: {prompt} tokens from the input messages and {max} tokens for the "
        "completion",
        "The input ({prompt} tokens) is longer than the model's context length ({ctx} tokens)",
        # llama.cpp
        "request ({prompt} tokens) exceeds the available context size ({ctx} tokens)",
        # TGI
        "`inputs` tokens + `max_new_tokens` must be <= {ctx}. Given: {prompt} `inputs` tokens "
        "and {max} `max_new_tokens`",
        "`inputs` must have less than {any} tokens. Given: {prompt}",
        # Any of the above, cut or reworded: the window alone.
        "maximum context length is {ctx} tokens",
        "maximum context length of {ctx} tokens",
    )
)

#: Phrases and codes that say "overflow" without numbers.
_SIGNS = re.compile(
    r"context_length_exceeded|exceed_context_size_error"
    r"|exceeds\s{1,8}the\s{1,8}available\s{1,8}context\s{1,8}size"
    r"|exceeds\s{1,8}the\s{1,8}context\s{1,8}window"
    r"|'max_tokens'\s{1,8}or\s{1,8}'max_completion_tokens'\s{1,8}is\s{1,8}too\s{1,8}large"
    r"|cannot\s{1,8}be\s{1,8}greater\s{1,8}than\s{1,8}max_model_len"
    r"|longer\s{1,8}than\s{1,8}the\s{1,8}model's\s{1,8}context\s{1,8}length"
    r"|maximum\s{1,8}context\s{1,8}length",
    re.IGNORECASE,
)
_LLAMA_FIELDS = (
    re.compile(r'"n_prompt_tokens"\s{0,8}:\s{0,8}(\d{1,12})'),
    re.compile(r'"n_ctx"\s{0,8}:\s{0,8}(\d{1,12})'),
)


def _message_text(body: str) -> str:
    """The error's own words: the JSON strings under ``error``/``message``/``detail`` (escapes
    decoded), followed by the raw body, so patterns see both. A body that is not JSON (or was
    cut at ``MAX_BODY_CHARS``) is used as it is."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    parts: list[str] = []
    _strings(data, parts, depth=0)
    return "\n".join([*parts, body])


def _strings(value: Any, out: list[str], depth: int) -> None:
    if depth > 4 or len(out) > 32:
        return
    if isinstance(value, str):
        out.append(value[:MAX_BODY_CHARS])
    elif isinstance(value, dict):
        for item in list(value.values())[:32]:
            _strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value[:32]:
            _strings(item, out, depth + 1)


def _number(match: re.Match[str], name: str) -> int | None:
    value = match.groupdict().get(name)
    return int(value) if value is not None else None


def overflow_from_error(status: int, body: str) -> ContextOverflow | None:
    """The ``ContextOverflow`` an HTTP error answer means, or None when it is another error.

    ``status`` must be one a server answers overflows with (400, 413, 422); ``body`` is the
    response text (JSON or not). Never raises for any input."""
    if status not in OVERFLOW_STATUSES or not isinstance(body, str):
        return None
    text = _message_text(body[:MAX_BODY_CHARS])[: 3 * MAX_BODY_CHARS]
    numbers: dict[str, int | None] = {"prompt": None, "max": None, "ctx": None}
    found = False
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match is not None:
            found = True
            numbers = {name: _number(match, name) for name in numbers}
            break
    if not found and _SIGNS.search(text) is None:
        return None
    if numbers["prompt"] is None or numbers["ctx"] is None:
        prompt, ctx = (pattern.search(text) for pattern in _LLAMA_FIELDS)
        if numbers["prompt"] is None and prompt is not None:
            numbers["prompt"] = int(prompt.group(1))
        if numbers["ctx"] is None and ctx is not None:
            numbers["ctx"] = int(ctx.group(1))
    return ContextOverflow(
        describe(numbers["prompt"], numbers["max"], numbers["ctx"]),
        prompt_tokens=numbers["prompt"],
        max_tokens=numbers["max"],
        context_length=numbers["ctx"],
    )


def describe(prompt_tokens: int | None, max_tokens: int | None, context: int | None) -> str:
    """One line for the record: what did not fit, with the numbers that are known."""
    asked = []
    if prompt_tokens is not None:
        asked.append(f"prompt {prompt_tokens} tokens")
    if max_tokens is not None:
        asked.append(f"max_tokens {max_tokens}")
    what = " + ".join(asked) if asked else "the request"
    window = f"the context window of {context} tokens" if context else "the context window"
    return f"{what} does not fit {window}"
