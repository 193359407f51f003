r"""The messages between the pool (parent) and a worker, and the parent's strict reading of them.

A worker is hostile as far as the parent is concerned: whatever a program managed to do inside
it, the parent reads at most ``max_reply`` bytes a message, accepts only the tags below, a head
of exactly ``[kind, error, stdout]`` with known kinds and string sizes within the caps, and a
state that is strict JSON (no NaN or Infinity), nested at most ``MAX_STATE_DEPTH`` deep, with
integers of at most ``MAX_INT_DIGITS`` digits. Anything else is a ``ProtocolError``: the pool
ends that program as ``worker_died`` and replaces the worker; the run goes on.

    parent -> worker   b"P" <nonce> <module>:<factory>[?<json args>] \0 <program source>
                       b"F" <path> \0 <bytes>       (a data file a world reads, see files.py)
    worker -> parent   b"r" <json facts>             once, when ready (seccomp applied ...)
                       b"E" <why>                    instead of b"r": it could not start
                       b"l" <nonce>                  at most once per program: importing a
                                                     factory's module, allow extra time
                       b"R" <nonce> <json head> \n <state>   the program's result
                       b"H" <nonce> <json [name, payload]>  a host call (see host.py); the
                                                     program waits, its limits paused
    parent -> worker   b"A" <json {"ok": value} or {"error": why}>   the host call's answer
"""

from __future__ import annotations

import json
import math
import os
import struct
import time
from dataclasses import dataclass
from typing import Any

NONCE_BYTES = 8  # per program: a reply must carry its request's nonce, so none can be stale
READY = b"r"
FAILED = b"E"
LOADING = b"l"
RESULT = b"R"
PROGRAM = b"P"
FILE = b"F"
HOST = b"H"
ANSWER = b"A"
ANSWER_CODE = b"C"  # an answer that is source the world will run: the template compiles it
MAX_HOST_NAME = 64

KINDS = frozenset(("ok", "rejected", "error", "timeout", "memory", "output_limit", "worker_died"))
INTERNAL = "internal"  # the world factory (harness code) failed before the program started
MAX_STATE_DEPTH = 32
MAX_INT_DIGITS = 300
MAX_ERROR_CHARS = 2_000


class ProtocolError(ValueError):
    """A worker said something it may not say: the parent stops trusting that worker."""


_HEADER = struct.Struct("!i")  # multiprocessing.Connection's framing: signed 32-bit length
_MAX_FRAME = 0x7FFFFFFF  # longer messages have a -1 header and a 64-bit length: always refused
_CHUNK = 1 << 16


def frame(message: bytes) -> bytes:
    """One message framed as the worker's ``Connection.recv_bytes`` reads it."""
    return _HEADER.pack(len(message)) + message


class FrameReader:
    """Splits the bytes a worker sent into messages, framed as ``Connection.send_bytes`` frames
    them. The parent reads its socket without blocking (a worker that sends half a message and
    stops must not hang a thread, let alone the event loop), so bytes arrive in pieces; a
    length over the cap is refused from the header alone, so at most ``cap`` bytes are held."""

    def __init__(self, cap: int) -> None:
        self.cap = min(cap, _MAX_FRAME)
        self.buffer = bytearray()

    def wanted(self) -> int:
        """How many bytes to ask the socket for: the rest of this message, in bounded chunks."""
        if len(self.buffer) < _HEADER.size:
            return _CHUNK
        missing = _HEADER.size + _HEADER.unpack_from(self.buffer)[0] - len(self.buffer)
        return min(max(missing, _CHUNK), 16 * _CHUNK)

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def message(self) -> bytes | None:
        """The next whole message, None until one has arrived; ``ProtocolError`` over the cap."""
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size < 0 or size > self.cap:
            raise ProtocolError("the worker sent a message over the size cap")
        end = _HEADER.size + size
        if len(self.buffer) < end:
            return None
        message = bytes(self.buffer[_HEADER.size : end])
        del self.buffer[:end]
        return message


class Exchange:
    """One program's request and the rules its replies must follow, shared by the blocking and
    the asyncio paths: every reply carries this request's nonce (so none can be stale or
    invented), and the worker may ask for import time (``LOADING``) once; a second ask is a
    protocol error, so no worker can keep a program alive by asking again and again."""

    def __init__(
        self, payload: bytes, budget_s: float, loading_s: float, max_host_calls: int = 0
    ) -> None:
        self.nonce = os.urandom(NONCE_BYTES)
        self.max_host_calls = max_host_calls
        self.host_calls = 0
        self.request = PROGRAM + self.nonce + payload
        self.budget_s = budget_s
        self.loading_s = loading_s
        self.deadline = time.monotonic() + budget_s  # monotonic seconds
        self.loading = False

    def accept(self, message: bytes) -> bytes | None:
        """The result message without its nonce, or None after a first ``LOADING`` (whose
        deadline is then extended by the import allowance)."""
        if message[1 : 1 + NONCE_BYTES] != self.nonce:
            raise ProtocolError("the worker sent a message that answers no request")
        if message[:1] != LOADING:
            return message[:1] + message[1 + NONCE_BYTES :]
        if self.loading:
            raise ProtocolError("the worker asked for import time twice for one program")
        self.loading = True
        self.deadline = time.monotonic() + self.loading_s + self.budget_s
        return None

    def count_host_call(self) -> None:
        """One more host call; past the program's cap the worker is lying (its own code
        refuses them), so it is a protocol error."""
        self.host_calls += 1
        if self.host_calls > self.max_host_calls:
            raise ProtocolError(f"the worker made more than {self.max_host_calls} host calls")

    def pause(self) -> float:
        """Stop the clock while the host answers: the seconds that were left."""
        return self.deadline - time.monotonic()

    def resume(self, left: float) -> None:
        self.deadline = time.monotonic() + left


@dataclass(frozen=True)
class Reply:
    kind: str
    error: str | None
    stdout: str
    state: Any


def encode_result(kind: str, error: str | None, stdout: str = "", state: str = "") -> bytes:
    head = json.dumps([kind, error, stdout])
    return RESULT + (head + "\n" + state).encode("utf-8", "surrogatepass")


def _refuse_constant(name: str) -> Any:
    raise ProtocolError(f"the state holds {name}, which is not JSON")


def _checked_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise ProtocolError(f"the state holds an integer of {len(digits)} digits")
    return int(text)


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError("the state holds a number too large for a float")
    return value


def _depth_ok(value: Any) -> bool:
    """Iteratively: is ``value`` nested at most MAX_STATE_DEPTH containers deep?"""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth >= MAX_STATE_DEPTH:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


# One decoder each, built once: ``json.loads`` with any option builds a new decoder and its
# scanner on every call, which cost more than decoding a small world state (~20 us of ~30 on
# a shared 2-core machine). ``decode`` is what ``json.loads`` calls for a ``str``.
_STATE_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_checked_int, parse_float=_checked_float
)
_HEAD_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _decode(decoder: json.JSONDecoder, text: str) -> Any:
    """``json.loads(text, **the decoder's options)``, including its refusal of a leading BOM."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return decoder.decode(text)


def parse_state(text: str) -> Any:
    """Strict JSON of a world state, bounded in nesting and integer size."""
    if not text:
        return None
    try:
        value = _decode(_STATE_DECODER, text)
    except RecursionError:
        raise ProtocolError("the state is nested too deeply to read") from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, ProtocolError):
            raise
        raise ProtocolError(f"the state is not JSON ({type(exc).__name__})") from None
    if not _depth_ok(value):
        raise ProtocolError(f"the state is nested more than {MAX_STATE_DEPTH} levels deep")
    return value


def parse_result(message: bytes, max_stdout: int) -> Reply:
    """The parent's reading of a b"R" message; ``ProtocolError`` for anything off-schema."""
    if not message.startswith(RESULT):
        raise ProtocolError(f"unexpected message tag {message[:1]!r}")
    try:
        text = message[1:].decode("utf-8", "strict")
    except UnicodeDecodeError:
        raise ProtocolError("the reply is not UTF-8") from None
    head_text, newline, body = text.partition("\n")
    if not newline:
        raise ProtocolError("the reply has no head")
    try:
        head = _decode(_HEAD_DECODER, head_text)
    except (ValueError, RecursionError):
        raise ProtocolError("the reply's head is not JSON") from None
    if not (isinstance(head, list) and len(head) == 3):
        raise ProtocolError("the reply's head is not [kind, error, stdout]")
    kind, error, stdout = head
    if not isinstance(kind, str) or (kind not in KINDS and kind != INTERNAL):
        raise ProtocolError(f"unknown result kind {str(kind)[:40]!r}")
    if not (error is None or (isinstance(error, str) and len(error) <= MAX_ERROR_CHARS)):
        raise ProtocolError("the reply's error is not a short string")
    if not (isinstance(stdout, str) and len(stdout) <= max_stdout):
        raise ProtocolError("the reply's output is not a string within the output cap")
    if kind == "ok":
        return Reply(kind, None, stdout, parse_state(body))
    if body:
        raise ProtocolError(f"a {kind!r} reply carries a state")
    if error is None:
        raise ProtocolError(f"a {kind!r} reply has no error message")
    return Reply(kind, error, stdout, None)


def parse_host_call(body: bytes, max_bytes: int) -> tuple[str, Any]:
    """The parent's reading of a host call: ``[name, payload]``, strict bounded JSON with a
    short name; ``ProtocolError`` for anything else (the worker is then replaced)."""
    if len(body) > max_bytes:
        raise ProtocolError(f"a host call is over {max_bytes} bytes")
    try:
        text = body.decode("utf-8", "strict")
    except UnicodeDecodeError:
        raise ProtocolError("a host call is not UTF-8") from None
    value = parse_state(text)
    if not (isinstance(value, list) and len(value) == 2):
        raise ProtocolError("a host call is not [name, payload]")
    name, payload = value
    if not (isinstance(name, str) and 0 < len(name) <= MAX_HOST_NAME and name.isprintable()):
        raise ProtocolError("a host call's name is not a short string")
    return name, payload


def encode_answer(value: Any = None, error: str | None = None) -> bytes:
    """The parent's answer to a host call (an error is the program's exception message)."""
    body = {"error": error[:MAX_ERROR_CHARS]} if error is not None else {"ok": value}
    return ANSWER + json.dumps(body, allow_nan=False).encode("utf-8")


def encode_code_answer(text: str, sources: tuple[str, ...]) -> bytes:
    """An answer ``text`` with the sources the world will compile for it (``host.Code``): the
    template compiles them before passing ``{"ok": text}`` on."""
    body = {"ok": text, "compile": list(sources)}
    return ANSWER_CODE + json.dumps(body, allow_nan=False).encode("utf-8")
