"""What an OpenAI-compatible server sends, read within bounds: the body's bytes, its JSON, and
the shape of the reply.

A model server is as untrusted as a model: the red team's loopback servers sent 700 MB without a
Content-Length, 1 MB of gzip expanding to 1 GB, 500,000 ``[``, ``"content": 12345``. Each of
those used to cost gigabytes of memory or end the whole run with a traceback. So:

- **Bytes.** A body is read chunk by chunk and decompressed here (the session's own
  decompression is off), with zlib's ``max_length``, so no more than the limit plus one chunk is
  ever held, whatever the compression ratio; both the bytes received and the bytes they expand
  to count against the limit (``--max-response-bytes``, ``ModelOptions.max_response_bytes``).
  Only gzip and deflate are asked for (``ACCEPT_ENCODING``); any other encoding is refused.
- **JSON.** Before parsing, ``,``, ``[`` and ``{`` are counted (an upper bound on the values the
  parse would build; 16 MB of ``{},`` would build 5 million dicts, ~400 MB): over
  ``MAX_JSON_VALUES`` the body is refused unparsed. Deep nesting is refused either way: the
  decoder's own ``RecursionError`` is caught, and what parses is checked for ``MAX_JSON_DEPTH``.
- **Shape.** ``read_reply`` accepts exactly the reply shapes servers send (``content`` a string,
  null, or a list of content parts whose ``"text"`` parts are joined, as the OpenAI API and
  Mistral send them; tool-call ``arguments`` a string, null, or an object, serialised) and refuses
  everything else with ``BadReply``: one line naming the field and what the server put there.

Everything here raises ``BadReply`` (or ``ValueError`` for a body that is not JSON at all) and
nothing else; the backend turns it into the sample's ``InfraError``: a server that breaks the
protocol is not the model's failure (the same choice the backend made for "no choices"), so the
sample is excluded from the score and tried again on resume.
"""

from __future__ import annotations

import itertools
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Protocol

#: What every request asks for; anything else the server sends is refused (``BodyReader``).
ACCEPT_ENCODING = "gzip, deflate"
#: Containers nested deeper than this are refused (a reply is ~7 deep with tool arguments).
MAX_JSON_DEPTH = 64
#: Upper bound on the JSON values of one body (commas + brackets + braces; see the module doc).
MAX_JSON_VALUES = 1_000_000
#: Gzip members in one body (each may be empty: without a bound, a stream of empty members
#: would cost CPU without ever reaching the size limit).
MAX_GZIP_MEMBERS = 64
#: Characters of a server's value quoted in a message.
SHOWN_CHARS = 200
#: Statuses that say a path is not served at all (no route, no such method, nothing there),
#: as opposed to a request that reached the API and was refused or failed.
NOT_SERVED = frozenset({404, 405, 501})
#: Fields of a listed model that give its context window, by server: vLLM, then others
#: (LM Studio, OpenRouter, llama-swap ...).
CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window")


class BadReply(Exception):
    """The server sent something that is not an answer; the text says what, in one line."""


class BodyTooLarge(BadReply):
    """The body (received or decompressed) is over the limit."""


class _Chunks(Protocol):
    """``aiohttp.StreamReader``: what ``read_body`` needs of a response's content."""

    async def readany(self) -> bytes: ...


class BodyReader:
    """Decodes one body as it arrives and keeps at most ``limit`` bytes of it.

    ``feed`` returns False once the limit is passed (``over``): the caller stops reading and drops
    the connection; ``body`` is then the first ``limit`` bytes."""

    def __init__(self, encoding: str | None, limit: int) -> None:
        self.limit = limit
        self.received = 0
        self.over = False
        self._size = 0
        self._parts: list[bytes] = []
        self._encoding = (encoding or "identity").strip().lower()
        if self._encoding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise BadReply(
                f"the server sent Content-Encoding {shown(self._encoding)}, which was not asked "
                f"for (only {ACCEPT_ENCODING})"
            )
        self._members = 0
        self._inflate: Any = None  # zlib's decompress object, made on the first bytes

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk of the body as received; False once over the limit."""
        self.received += len(chunk)
        if self._encoding == "identity":
            self._keep(chunk)
        else:
            self._decompress(chunk)
        if self.received > self.limit:  # a compressed body is no bigger than what it holds
            self.over = True
        return not self.over

    def _decompress(self, data: bytes) -> None:
        try:
            while data and not self.over:
                if self._inflate is None or self._inflate.eof:
                    self._inflate = self._decoder(data)
                out = self._inflate.decompress(data, self.limit - self._size + 1)  # never 0
                self._keep(out)
                data = (
                    self._inflate.unused_data
                    if self._inflate.eof
                    else self._inflate.unconsumed_tail
                )
        except zlib.error as error:
            raise BadReply(
                f"the server's {self._encoding} body does not decode ({error})"
            ) from None

    def _decoder(self, first: bytes) -> Any:
        self._members += 1
        if self._members > MAX_GZIP_MEMBERS:
            raise BadReply(f"the server's gzip body has more than {MAX_GZIP_MEMBERS} members")
        if self._encoding == "deflate" and first[0] & 0x0F != 8:
            return zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send it
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header, told apart by zlib

    def _keep(self, data: bytes) -> None:
        room = self.limit - self._size
        if len(data) > room:
            data, self.over = data[:room], True
        if data:
            self._parts.append(data)
            self._size += len(data)

    def body(self) -> bytes:
        return b"".join(self._parts)


async def read_body(content: _Chunks, encoding: str | None, limit: int) -> tuple[bytes, bool]:
    """(the decoded body, at most ``limit`` bytes of it; whether there was more). Stops reading at
    the limit: the caller must then close the response rather than pool its connection."""
    reader = BodyReader(encoding, limit)
    while True:
        chunk = await content.readany()
        if not chunk or not reader.feed(chunk):
            return reader.body(), reader.over


def context_length_of(listing: bytes, model: str) -> int | None:
    """The context window the ``GET /models`` answer states for ``model`` (the entry with its
    id; the only entry when there is one), or None. Never raises."""
    try:
        data = parse_json(listing)
    except (BadReply, ValueError):
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen[:1]:
        for name in CONTEXT_FIELDS:
            value = entry.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 40:
                return value
    return None


def not_served(status: int, content_type: str, head: bytes) -> str | None:
    """Why an answer shows that its path is not an API endpoint, in a few words ("HTTP 404",
    "HTTP 200 with an HTML page"), or None when it may be one. A success whose body cannot be
    JSON is a web page or a file, never an API's answer; a refusal (400, 401, 422) or a
    failure (500, 503) comes from something that is there."""
    if status in NOT_SERVED:
        return f"HTTP {status}"
    if not 200 <= status < 300:
        return None
    start = head.lstrip()[:1]
    if start in (b"{", b"["):
        return None
    if "html" in content_type.lower() or start == b"<":
        return f"HTTP {status} with an HTML page"
    return f"HTTP {status} with {'nothing' if not start else 'text'}, not JSON"


def too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(
        f"the server's reply is over {limit:,} bytes (--max-response-bytes); the rest was not read"
    )


def parse_json(raw: bytes | str) -> object:
    """``raw`` as JSON, within ``MAX_JSON_VALUES`` and ``MAX_JSON_DEPTH`` (``BadReply`` beyond
    them); ``ValueError`` when it is not JSON (bad syntax, not UTF-8, a 5,000-digit number)."""
    data = raw.encode() if isinstance(raw, str) else raw
    values = data.count(b",") + data.count(b"[") + data.count(b"{")
    if values > MAX_JSON_VALUES:
        raise BadReply(
            f"the server's reply holds up to {values:,} JSON values (more than "
            f"{MAX_JSON_VALUES:,} are not read)"
        )
    try:
        parsed = json.loads(data)
    except RecursionError:
        raise BadReply(f"the server's reply nests JSON deeper than {MAX_JSON_DEPTH}") from None
    if not _shallow(parsed, MAX_JSON_DEPTH):
        raise BadReply(f"the server's reply nests JSON deeper than {MAX_JSON_DEPTH}")
    return parsed


def _shallow(value: object, limit: int) -> bool:
    """No list or dict in ``value`` is more than ``limit`` deep (iterative: never recurses)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


# ---- the reply's shape ----


@dataclass
class Reply:
    """The fields of a completion reply the harness uses, each of the type it expects."""

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None


def read_reply(data: object) -> Reply:
    """The chat or completion reply in ``data`` (the parsed body, or the text of a body that was
    not JSON); ``BadReply`` naming the first field of a wrong type."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(data, dict) or choices is None or choices == []:
        raise BadReply(f"server returned no choices: {shown(data)}")
    if not isinstance(choices, list):
        raise BadReply(_wrong("choices", choices, "a list"))
    choice = choices[0]
    if not isinstance(choice, dict):
        raise BadReply(_wrong("choices[0]", choice, "an object"))
    if "message" in choice:  # chat
        message = choice["message"]
        if not isinstance(message, dict):
            raise BadReply(_wrong("message", message, "an object"))
        text = _content(message.get("content"))
        tool_calls = _tool_calls(message.get("tool_calls"))
    else:  # completion
        completion = choice.get("text")
        if completion is not None and not isinstance(completion, str):
            raise BadReply(_wrong("text", completion, "a string"))
        text, tool_calls = completion or "", []
    reason = choice.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        raise BadReply(_wrong("finish_reason", reason, "a string"))
    prompt_tokens, completion_tokens = _usage(data.get("usage"))
    return Reply(text, tool_calls, prompt_tokens, completion_tokens, reason)


def _content(content: object) -> str:
    """A message's text: a string; null (a reply that only calls tools); or content parts, whose
    ``text`` parts are joined and whose other parts (``thinking``, images) are left out."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise BadReply(_wrong("content", content, "a string, null or a list of content parts"))
    texts: list[str] = []
    for index, part in enumerate(content):
        if not isinstance(part, dict):
            raise BadReply(_wrong(f"content[{index}]", part, 'a content part {"type": ...}'))
        if part.get("type") == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise BadReply(_wrong(f"content[{index}].text", text, "a string"))
            texts.append(text)
    return "".join(texts)


def _tool_calls(calls: object) -> list[dict[str, Any]]:
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise BadReply(_wrong("tool_calls", calls, "a list"))
    return [_tool_call(i, call) for i, call in enumerate(calls) if call is not None]


def _tool_call(index: int, call: object) -> dict[str, Any]:
    """One tool call as ``{"id", "type", "function": {"name", "arguments"}}``, plain JSON data.

    ``arguments`` stays the JSON string the API sends (it may be invalid JSON: judging it is the
    scorer's job). A few compatible servers send an object instead; it is serialised so that
    ``arguments`` is always a string. Any other type is the server's mistake."""
    where = f"tool_calls[{index}]"
    if not isinstance(call, dict):
        raise BadReply(_wrong(where, call, "an object"))
    function = call.get("function")
    if function is None:
        function = {}
    elif not isinstance(function, dict):
        raise BadReply(_wrong(f"{where}.function", function, "an object"))
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    elif isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    elif not isinstance(arguments, str):
        raise BadReply(_wrong(f"{where}.function.arguments", arguments, "a JSON string"))
    return {
        "id": _string(call.get("id"), f"{where}.id", numbers=True),
        "type": _string(call.get("type"), f"{where}.type") or "function",
        "function": {"name": _string(function.get("name"), f"{where}.function.name"),
                     "arguments": arguments},
    }  # fmt: skip


def _string(value: object, where: str, numbers: bool = False) -> str:
    """A string field; null and empty mean ""; a number only where ``numbers`` (some ids)."""
    if value is None or isinstance(value, str):
        return value or ""
    if numbers and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadReply(_wrong(where, value, "a string"))


def _usage(usage: object) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    if not isinstance(usage, dict):
        raise BadReply(_wrong("usage", usage, "an object"))
    return _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens")


def _tokens(usage: dict[str, Any], name: str) -> int:
    value = usage.get(name)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 40:
        raise BadReply(_wrong(f"usage.{name}", value, "a token count"))
    return value


def _wrong(where: str, value: object, expected: str) -> str:
    return f'server sent "{where}" as {_kind(value)} ({shown(value)}); expected {expected}'


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object" if isinstance(value, dict) else type(value).__name__


def shown(value: object) -> str:
    """A short one-line quotation of a server's value (a few items of each container, the start
    of each string), never the whole of a 16 MB reply."""
    text = value[: 2 * SHOWN_CHARS] if isinstance(value, str) else _preview_json(value)
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _preview_json(value: object) -> str:
    try:
        return json.dumps(_preview(value, 0), ensure_ascii=False)
    except (TypeError, ValueError):  # not from JSON (a test's object): its type is enough
        return f"<{type(value).__name__}>"


def _preview(value: object, depth: int) -> object:
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:60] + "..."
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"<an integer of {value.bit_length()} bits>"
    if isinstance(value, list):
        if depth >= 3:
            return f"<a list of {len(value)}>"
        return [_preview(v, depth + 1) for v in value[:5]] + (["..."] if len(value) > 5 else [])
    if isinstance(value, dict):
        if depth >= 3:
            return "<an object>"
        items = itertools.islice(value.items(), 5)
        shortened = {str(k)[:40]: _preview(v, depth + 1) for k, v in items}
        return {**shortened, "...": "..."} if len(value) > 5 else shortened
    return value
