"""Making a run record safe to write: strict JSON, bounded in depth, size and count.

A record carries things the model controls (its reply, error messages quoting it, the state its
program left behind). Writing one must never raise and never produce a line that a reader
cannot take back: a 1,000-deep list once crashed ``json.dumps`` in the parent and ended the run.
So before a record is written every value is copied into a bounded JSON value:

- containers nested deeper than ``MAX_DEPTH`` become a marker string;
- strings longer than ``MAX_STRING_CHARS`` are cut (with a marker saying how long they were),
  and lone surrogates (not encodable as UTF-8) become U+FFFD;
- NaN and infinities become ``null`` (the file stays strict JSON: ``allow_nan=False``);
- integers beyond 64 bits become a marker string (``str()`` of a huge int can itself raise);
- keys that are not strings are converted the way ``json`` would, anything else by ``str()``;
- at most ``MAX_ITEMS`` items per container and ``MAX_NODES`` values per record;
- a whole line is at most ``MAX_RECORD_BYTES``: over it, ``details`` is dropped first, then
  every string and container is bounded much more tightly, and as a last resort only the
  record's identity and status are kept.

Normal records pass through unchanged (tuples become lists, as JSON would make them anyway).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 32
MAX_STRING_CHARS = 20_000
MAX_KEY_CHARS = 200
MAX_ITEMS = 10_000
MAX_NODES = 100_000
MAX_INT_BITS = 63
MAX_RECORD_BYTES = 1_000_000
_INT_LIMIT = 2**MAX_INT_BITS  # ints of at most MAX_INT_BITS bits pass unchanged

# Fields kept by the last-resort record (what every reader needs to count the sample).
IDENTITY_FIELDS = ("task", "id", "epoch", "status", "success")


@dataclass(frozen=True)
class RecordBounds:
    """The limits one pass of bounding holds a record to: characters per string, items per
    container and values in all. The defaults are the normal limits; ``_FALLBACKS`` tightens
    them, step by step, for a record whose line is still over ``MAX_RECORD_BYTES``."""

    strings: int = MAX_STRING_CHARS
    items: int = MAX_ITEMS
    nodes: int = MAX_NODES


# Tighter and tighter limits for a record whose line is over MAX_RECORD_BYTES. The last one
# cannot exceed it: 500 values of at most 100 characters, 12 bytes each when escaped.
_FALLBACKS = (
    RecordBounds(),
    RecordBounds(strings=1_000, items=200, nodes=5_000),
    RecordBounds(100, 50, 500),
)


def bounded_text(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """``text`` cut to ``limit`` characters (marker included) and made encodable as UTF-8."""
    if len(text) > limit:
        marker = f"...[cut: {len(text)} characters]"
        text = text[: max(limit - len(marker), 0)] + marker
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates; real pairs are joined, the rest replaced
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class _Bounder:
    """One pass over one record; counts values against the record's node budget."""

    def __init__(self, limits: RecordBounds) -> None:
        self.limits = limits
        self.nodes = 0

    def value(self, value: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > self.limits.nodes:
            return "[cut: too many values in one record]"
        kind = type(value)  # exact types first: this runs for every value of every record
        if kind is str and value.isascii() and len(value) <= self.limits.strings:
            return value
        if kind is int and -_INT_LIMIT < value < _INT_LIMIT:
            return value
        if kind is bool or value is None:
            return value
        if kind is float:
            return value if math.isfinite(value) else None
        if kind is dict and depth < MAX_DEPTH:
            return self.mapping(value, depth)
        if kind is list and depth < MAX_DEPTH:
            return self.sequence(value, depth)
        return self.other(value, depth)

    def other(self, value: Any, depth: int) -> Any:
        """Everything but short ASCII strings, floats and shallow lists and dicts."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:
                return f"[cut: integer of {value.bit_length()} bits]"
            return int(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else None
        if isinstance(value, str):
            return bounded_text(str.__str__(value), self.limits.strings)
        if isinstance(value, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return f"[cut: nested deeper than {MAX_DEPTH}]"
            if isinstance(value, dict):
                return self.mapping(value, depth)
            return self.sequence(value, depth)
        return bounded_text(_safe_str(value), self.limits.strings)

    def sequence(self, items: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
        out: list[Any] = []
        for index, item in enumerate(items):
            if self.nodes >= self.limits.nodes or index == self.limits.items - 1 < len(items) - 1:
                out.append(f"[cut: {len(items)} items]")
                break
            out.append(self.value(item, depth + 1))
        return out

    def mapping(self, mapping: dict[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(mapping.items()):
            if self.nodes >= self.limits.nodes or index == self.limits.items - 1 < len(mapping) - 1:
                out["[cut]"] = f"{len(mapping)} items"
                break
            # Short ASCII string keys (nearly all of them) are already what json.dumps writes.
            plain = type(key) is str and len(key) <= MAX_KEY_CHARS and key.isascii()
            out[key if plain else _key(key)] = self.value(item, depth + 1)
        return out


def _key(key: Any) -> str:
    """A dict key as ``json.dumps`` would write it (it refuses other types; we do not)."""
    if isinstance(key, str):
        return bounded_text(str.__str__(key), MAX_KEY_CHARS)
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, int) and key.bit_length() <= MAX_INT_BITS:
        return str(int(key))
    if isinstance(key, float) and math.isfinite(key):
        return repr(float(key))
    return bounded_text(_safe_str(key), MAX_KEY_CHARS)


def _safe_str(value: Any) -> str:
    """``str()`` of a value JSON has no type for (a Path, a set, bytes); never raises."""
    if isinstance(value, int):  # a huge int: str() raises past 4,300 digits
        return f"[cut: integer of {value.bit_length()} bits]"
    try:
        return str(value)
    except Exception:  # any failure of a foreign __str__ leaves just the type's name
        return f"<{type(value).__name__}>"


def bounded(value: Any, limits: RecordBounds | None = None) -> Any:
    """``value`` as a bounded, strict-JSON-safe value (see the module docstring)."""
    return _Bounder(limits or RecordBounds()).value(value, 0)


def safe_record(record: dict[str, Any], reserve: int = 0) -> dict[str, Any]:
    """A bounded copy of ``record`` whose JSON line is at most ``MAX_RECORD_BYTES - reserve``
    (``reserve``: room for fields added afterwards, such as the log's checksum)."""
    return record_line(record, reserve)[0]


def record_line(record: dict[str, Any], reserve: int = 0) -> tuple[dict[str, Any], str]:
    """``safe_record(record, reserve)`` and its JSON line (``to_line``), computed once."""
    budget = MAX_RECORD_BYTES - reserve
    safe = _conform(bounded(record))
    line = to_line(safe)
    if len(line) <= budget:
        return safe, line
    slim = {k: v for k, v in record.items() if k != "details"}
    for limits in _FALLBACKS:
        safe = _conform(bounded(slim, limits))
        safe["details"] = {"cut": f"dropped: the record was over {MAX_RECORD_BYTES} bytes"}
        line = to_line(safe)
        if len(line) <= budget:
            return safe, line
    minimal = _conform(
        bounded({k: record.get(k) for k in IDENTITY_FIELDS}, RecordBounds(100, 10, 50))
    )
    minimal["message"] = f"record cut to its identity: over {MAX_RECORD_BYTES} bytes"
    return minimal, to_line(minimal)


def _conform(safe: Any) -> dict[str, Any]:
    """Give the fields readers check the types they check (``store.record_problem``), so that
    whatever is written can be read back: metrics are numbers or null (a cut marker or any
    other value becomes null), the message is a string, details an object."""
    if not isinstance(safe, dict):
        return {"value": safe}
    if "metrics" in safe:
        metrics = safe["metrics"] if isinstance(safe["metrics"], dict) else {}
        safe["metrics"] = {
            name: value if isinstance(value, (int, float)) else None
            for name, value in metrics.items()
        }
    if "message" in safe and not isinstance(safe["message"], str):
        safe["message"] = json.dumps(safe["message"])
    if "details" in safe and not isinstance(safe["details"], dict):
        safe["details"] = {"value": safe["details"]}
    return safe


def to_line(safe: dict[str, Any]) -> str:
    r"""The JSON line (no newline) of a bounded record: strict and ASCII-only, so that a model's
    U+2028 or stray \r can never split a record for any reader."""
    return _LINE_ENCODER.encode(safe)


# ``json.dumps(safe, ensure_ascii=True, allow_nan=False)`` with the encoder built once, not per
# record (``dumps`` with any option builds a new one).
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False)
