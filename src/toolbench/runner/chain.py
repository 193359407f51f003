"""Tamper evidence for ``samples.jsonl``: every record carries a checksum chain.

Each line ends with ``"chain": sha256(previous chain + the line as written without its chain
field)``, the first chained from a random per-run ``seed``. The checksum covers the bytes as
written, so any change to a line, even one that leaves the JSON equal, breaks it. ``run.json``
keeps the anchor (``"log_chain": {"seed", "head", "records"}``): the seed and the chain value
after the last record the harness wrote. So editing, inserting, reordering or deleting a
record, or cutting records off the end, is detected (by ``toolbench report`` and when a run is
resumed), and the run also checks its log when it finishes against the head it kept in memory,
which catches even a rewrite that recomputed the whole chain while the run was going.

What this does not do: it is not a signature. Anything that can read ``run.json`` and knows the
scheme can rewrite the log, recompute the chain and update the anchor once the run has ended.
It is tamper-evidence against edits made without knowing to re-chain (a program rewriting the
log in place, a hand edit, a script "fixing" scores), plus the run's own check at finish. Keeping
programs away from the run folder is the sandbox's job (OS isolation); this is a second layer.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CHAIN_FIELD = "chain"
ANCHOR_KEY = "log_chain"
_HEX = frozenset(b"0123456789abcdef")
# A chained line ends with this, then 64 hex digits, then '"}' (the writer puts it last).
_MARK = b', "chain": "'
_SUFFIX_LEN = len(_MARK) + 64 + 2
# Room a record line keeps for its chain field.
CHAIN_RESERVE = _SUFFIX_LEN + 16

VERIFIED, MODIFIED = "verified", "modified"
# Why a log with records but no anchor in run.json is modified: every run.json a run writes
# carries one, so only an edit can have taken it away.
NO_ANCHOR = "run.json has no log_chain: the chain was removed"


def new_seed() -> str:
    return secrets.token_hex(16)


def link(previous: str, body: bytes) -> str:
    """The chain value of a line whose text without the chain field is ``body``, written after
    a line whose chain value is ``previous``."""
    return hashlib.sha256(previous.encode("ascii") + b"\n" + body).hexdigest()


def chained(line: str, previous: str) -> tuple[str, str]:
    """``line`` (a JSON object without a chain field) with its chain field added last, and the
    chain value."""
    value = link(previous, line.encode("ascii"))
    separator = ", " if line != "{}" else ""
    return f'{line[:-1]}{separator}"{CHAIN_FIELD}": "{value}"}}', value


def split_chain(raw: bytes) -> tuple[bytes, str] | None:
    """(the line without its chain field, the chain value), or None for a line without one."""
    if raw.startswith(b'{"chain": "') and len(raw) == _SUFFIX_LEN - 1:
        tail, body = b", " + raw[1:], b"{}"  # an empty record, chained
    else:
        tail, body = raw[-_SUFFIX_LEN:], raw[:-_SUFFIX_LEN] + b"}"
    value = tail[len(_MARK) : -2]
    if not (tail.startswith(_MARK) and tail.endswith(b'"}') and len(value) == 64):
        return None
    if not _HEX.issuperset(value):
        return None
    return body, value.decode("ascii")


@dataclass(frozen=True)
class Anchor:
    """What run.json says about the log: its seed, and the chain after ``records`` records.

    ``pending`` is set only while a resume rewrites the log (infra errors moved aside): a kill
    between writing the new log and updating run.json leaves a log matching ``pending``.
    """

    seed: str
    head: str
    records: int
    pending: tuple[str, int] | None = None

    @classmethod
    def fresh(cls) -> Anchor:
        seed = new_seed()
        return cls(seed=seed, head=seed, records=0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": self.seed, "head": self.head, "records": self.records}
        if self.pending is not None:
            out["pending"] = {"head": self.pending[0], "records": self.pending[1]}
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Anchor | None:
        """The anchor in run.json, or None if it is not a well-formed one."""
        if not isinstance(obj, dict):
            return None
        seed, head, records = obj.get("seed"), obj.get("head"), _count(obj.get("records"))
        if not (isinstance(seed, str) and isinstance(head, str) and records is not None):
            return None
        raw = obj.get("pending")
        if raw is None:
            return cls(seed, head, records)
        pending = raw if isinstance(raw, dict) else {}
        pending_head, pending_records = pending.get("head"), _count(pending.get("records"))
        if not isinstance(pending_head, str) or pending_records is None:
            return None
        return cls(seed, head, records, (pending_head, pending_records))


def _count(value: Any) -> int | None:
    """``value`` if it is a record count (a whole number, not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


@dataclass(frozen=True)
class LogCheck:
    """The result of checking a log: ``verified`` or ``modified`` (``line`` is the first line
    that does not check out)."""

    state: str
    line: int = 0
    reason: str = ""
    head: str = ""
    records: int = 0

    @property
    def ok(self) -> bool:
        return self.state == VERIFIED

    def describe(self, path: object) -> str:
        if self.state == MODIFIED:
            return f"{path}:{self.line}: the log was modified after it was written ({self.reason})"
        return f"{path}: log verified ({self.records} records)"


def check_chain(lines: Iterable[tuple[int, bytes]], anchor: Anchor | None, exact: bool) -> LogCheck:
    """Check (line number, line bytes) pairs against ``anchor`` (None: run.json has none).

    ``exact``: the log must end at the anchor (a finished run); otherwise it may continue past
    it (a run killed mid-session appends records that its run.json has not counted yet). With
    no anchor, an empty log checks out (nothing was written to chain) and any record is
    ``modified``.
    """
    checker = ChainChecker(anchor, exact)
    for number, raw in lines:
        if not checker.feed(number, raw):
            break
    return checker.result()


class ChainChecker:
    """``check_chain`` one line at a time, holding a few values whatever the log's length, so
    a reader can check the chain in the same pass that reads the records (a million-record
    log is never held). ``feed`` returns False once the outcome is settled (a line that does
    not check out); later lines are then ignored."""

    def __init__(self, anchor: Anchor | None, exact: bool) -> None:
        self.anchor, self.exact = anchor, exact
        self._failed: LogCheck | None = None
        self._ends: list[tuple[int, str]] = []
        if anchor is not None:
            self._ends.append((anchor.records, anchor.head))
            if anchor.pending is not None:
                self._ends.append((anchor.pending[1], anchor.pending[0]))
        self._targets = {n for n, _ in self._ends}
        self._heads = {0: anchor.seed if anchor else ""}  # chain after n records, n named
        # Line numbers of the record counts ``_ending`` may name (record 0 is line 0).
        wanted = anchor.records if anchor is not None else 0
        self._wanted = {wanted, wanted + 1}
        self._numbers = {0: 0}
        self._count = 0
        self._last_number = 0
        self._previous = anchor.seed if anchor else ""

    def feed(self, number: int, raw: bytes) -> bool:
        if self._failed is not None:
            return False
        if self.anchor is None:
            self._failed = _modified(number, NO_ANCHOR)
            return False
        parts = split_chain(raw)
        if parts is None:
            self._failed = _modified(number, "the record has no checksum")
            return False
        if parts[1] != link(self._previous, parts[0]):
            self._failed = _modified(number, "the record does not match its checksum")
            return False
        self._previous = parts[1]
        self._count += 1
        self._last_number = number
        if self._count in self._wanted:
            self._numbers[self._count] = number
        if self._count in self._targets:
            self._heads[self._count] = self._previous
        return True

    def result(self) -> LogCheck:
        if self._failed is not None:
            return self._failed
        if self.anchor is None:
            return LogCheck(VERIFIED)
        return self._ending()

    def _ending(self) -> LogCheck:
        """Whether a log whose chain held up to its last line ends where the anchor says."""
        assert self.anchor is not None
        count, heads = self._count, self._heads
        for n, head in self._ends:
            if heads.get(n) == head and (count == n or not self.exact):
                return LogCheck(VERIFIED, head=self._previous, records=count)
        n = self.anchor.records
        if count < n:
            removed = f"{n - count} record(s) at the end were removed"
            return _modified(self._last_number + 1, removed)
        if heads.get(n) != self.anchor.head:
            return _modified(
                max(self._numbers[n], 1), "the log does not end where run.json says it did"
            )
        return _modified(self._numbers[n + 1], "records were added after the run finished")


def _modified(line: int, reason: str) -> LogCheck:
    return LogCheck(MODIFIED, line=line, reason=reason)
