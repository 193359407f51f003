"""Tamper evidence for ``samples.jsonl``: a checksum chain, and a key MAC over its anchor.

Each line ends with ``"chain": sha256(previous chain + the line as written without its chain
field)``, the first chained from a random per-run ``seed``. The checksum covers the bytes as
written, so any change to a line, even one that leaves the JSON equal, breaks it. ``run.json``
keeps the anchor (``"log_chain": {"seed", "head", "records", "key_id", "mac"}``): the seed and
the chain value after the last record the harness wrote. So editing, inserting, reordering or
deleting a record, or cutting records off the end, is detected (by ``toolbench report`` and
when a run is resumed), and the run also checks its log when it finishes against the head it
kept in memory, which catches even a rewrite that recomputed the whole chain while it ran.

The plain chain needs no secret, so anyone holding the folder can recompute it: a red team did
(rewrote the log to all successes after the harness exited, re-chained it from the seed in
run.json, updated the anchor). So the anchor also carries ``mac``: HMAC-SHA256, under a
per-user key kept *outside* every run folder (``toolbench.package.key_dir()``, file
``log-chain.key``, made 0600 in a 0700 folder on first use), over what the anchor states and
what binds it to its run: seed, head, record count, the pending rewrite, the key id, and
run.json's ``fingerprint`` and ``status`` (a finished run's log must end at the anchor; a
``running`` one may go on past it, so the status is covered too). ``key_id`` is a hash of the
key, never the key. Every write of the anchor (start, checkpoints, resume's rewrite, finish)
is sealed this way.

What a check proves (``provenance``):
- ``keyed``: a process that could read this machine's key wrote this anchor for this seed,
  head, count, fingerprint and status, and the log is the chain it names. Records a killed run
  appended after its last checkpoint are chained but not keyed (the report says how many).
- ``other_key``: intact, but made with a key that is not here (a folder copied from another
  machine or user); only its internal consistency is checked.
- ``unkeyed``: intact, no MAC (made before keys existed).
- ``forged``: the MAC does not match under this machine's key: reported as modified (exit 2),
  and a resume refuses it.

What it does not prove: it is a MAC, not a signature. Whoever can read the key file (the same
user outside any sandbox, root) can forge a keyed log; keeping programs under test away from
the key folder and the run folder is the OS sandbox's job, and this is the second layer. A
forger without the key can still drop the MAC or name another key id, which looks exactly
like an old or copied run: only ``keyed`` is proof, so resume refuses to continue (and so
re-key) a log with records that is not keyed here. Rolling a folder back to an earlier keyed
state of the same run (an older run.json and a log cut to match) also verifies. The rest of
run.json (metrics, timing, isolation, tokens) is not covered: the report recomputes its
numbers from the log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.package import key_dir

CHAIN_FIELD = "chain"
ANCHOR_KEY = "log_chain"
_HEX = frozenset(b"0123456789abcdef")
# A chained line ends with this, then 64 hex digits, then '"}' (the writer puts it last).
_MARK = b', "chain": "'
_SUFFIX_LEN = len(_MARK) + 64 + 2
# Room a record line keeps for its chain field.
CHAIN_RESERVE = _SUFFIX_LEN + 16

VERIFIED, MODIFIED = "verified", "modified"
# What the anchor's MAC says about who wrote it (module docstring).
KEYED, OTHER_KEY, UNKEYED, FORGED = "keyed", "other_key", "unkeyed", "forged"
KEY_FILE = "log-chain.key"
KEY_ID_LEN = 16
_MAC_DOMAIN = b"toolbench log_chain mac v1\n"
# Why a keyed anchor whose MAC does not match is modified.
FORGED_REASON = (
    "run.json's log_chain does not verify with this machine's key: the log or run.json was "
    "rewritten after the run (re-chained, or its fingerprint or status edited)"
)
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
    ``key_id`` and ``mac`` are set on an anchor as written (``seal``), None in memory and in a
    run.json written before keys.
    """

    seed: str
    head: str
    records: int
    pending: tuple[str, int] | None = None
    key_id: str | None = None
    mac: str | None = None

    @classmethod
    def fresh(cls) -> Anchor:
        seed = new_seed()
        return cls(seed=seed, head=seed, records=0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": self.seed, "head": self.head, "records": self.records}
        if self.pending is not None:
            out["pending"] = {"head": self.pending[0], "records": self.pending[1]}
        if self.mac is not None:
            out["key_id"], out["mac"] = self.key_id, self.mac
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Anchor | None:
        """The anchor in run.json, or None if it is not a well-formed one (a MAC without a key
        id, or either of the wrong shape, is malformed: only a writer puts them there)."""
        if not isinstance(obj, dict):
            return None
        seed, head, records = obj.get("seed"), obj.get("head"), _count(obj.get("records"))
        if not (isinstance(seed, str) and isinstance(head, str) and records is not None):
            return None
        key_id, mac = obj.get("key_id"), obj.get("mac")
        if (key_id, mac) != (None, None) and not (_hex(key_id, KEY_ID_LEN) and _hex(mac, 64)):
            return None
        raw = obj.get("pending")
        if raw is None:
            return cls(seed, head, records, None, key_id, mac)
        pending = raw if isinstance(raw, dict) else {}
        pending_head, pending_records = pending.get("head"), _count(pending.get("records"))
        if not isinstance(pending_head, str) or pending_records is None:
            return None
        return cls(seed, head, records, (pending_head, pending_records), key_id, mac)


def _hex(value: Any, length: int) -> bool:
    """Whether ``value`` is ``length`` lowercase hex digits."""
    return isinstance(value, str) and len(value) == length and _HEX.issuperset(value.encode())


@dataclass(frozen=True, repr=False)
class LogKey:
    """This user's log key: the secret (never written anywhere but its file, never shown) and
    its id (a hash of it, safe to put in run.json)."""

    secret: bytes

    @property
    def id(self) -> str:
        return hashlib.sha256(b"toolbench log key id\n" + self.secret).hexdigest()[:KEY_ID_LEN]

    def mac(self, message: bytes) -> str:
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:
        return f"LogKey(id={self.id})"


def find_key() -> LogKey | None:
    """This user's key, or None where there is none (or it cannot be read: a sandbox that
    masks the key folder, another user's folder). Never makes one: reading a report must not
    leave a key behind on a machine that only looks at copied folders."""
    try:
        return _read_key(key_dir() / KEY_FILE)
    except OSError:
        return None


def ensure_key() -> LogKey:
    """This user's key, made on first use (``_make_key``). A ``UserError`` naming the file
    when it cannot be read or made (a read-only home: ``TOOLBENCH_KEY_DIR`` points
    elsewhere)."""
    path = key_dir() / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _key_error(path, exc) from None
    try:
        _make_key(path)
        return _read_key(path)
    except OSError as exc:
        raise _key_error(path, exc) from None


def _make_key(path: Path) -> None:
    """32 random bytes, hex, in a file created 0600 (in a folder created 0700: an existing
    folder is left as it is, the file is private anyway), put in place by a hard link so
    that two first runs at once agree on one key and no reader sees a half-written one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_hex(32) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass  # another process made it first: use theirs
    except OSError:  # a file system without hard links: a rename, which may race
        if not path.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _read_key(path: Path) -> LogKey:
    with path.open("rb") as handle:
        text = handle.read(200).strip()
    if not _hex(text.decode("ascii", "replace"), 64):
        raise UserError(
            f"{path}: not a toolbench log key (64 hex digits); move it away and the next run "
            "makes a new one (logs keyed with the old one then say their key is not here)"
        )
    return LogKey(bytes.fromhex(text.decode("ascii")))


def _key_error(path: Path, exc: OSError) -> UserError:
    return UserError(
        f"{path}: the log key cannot be read or made ({exc.strerror or exc}); set "
        "TOOLBENCH_KEY_DIR to a private folder outside the run folders"
    )


def mac_message(anchor: Anchor, info: Mapping[str, Any]) -> bytes:
    """The bytes an anchor's MAC covers: what the anchor states, its key id, and the run.json
    fields that bind it to its run (``info``: the run.json it is written into)."""

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    body = {
        "seed": anchor.seed,
        "head": anchor.head,
        "records": anchor.records,
        "pending": list(anchor.pending) if anchor.pending is not None else None,
        "key_id": anchor.key_id,
        "fingerprint": text(info.get("fingerprint")),
        "status": text(info.get("status")),
    }
    encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _MAC_DOMAIN + encoded.encode("ascii")


def seal(anchor: Anchor, key: LogKey, info: Mapping[str, Any]) -> Anchor:
    """``anchor`` with its key id and MAC, for writing into ``info`` (run.json)."""
    named = replace(anchor, key_id=key.id, mac=None)
    return replace(named, mac=key.mac(mac_message(named, info)))


def provenance(anchor: Anchor, info: Mapping[str, Any], key: LogKey | None) -> str:
    """Who wrote ``anchor`` (as read from ``info``, its run.json), as far as ``key`` (this
    machine's, or None) can tell: ``KEYED``, ``OTHER_KEY``, ``UNKEYED`` or ``FORGED``."""
    if anchor.mac is None:
        return UNKEYED
    if key is None or anchor.key_id != key.id:
        return OTHER_KEY
    expected = key.mac(mac_message(anchor, info))
    return KEYED if hmac.compare_digest(expected, anchor.mac) else FORGED


def with_provenance(check: LogCheck, sealed: str) -> LogCheck:
    """``check`` (the chain's) with the anchor's provenance ``sealed`` (empty: not known). A
    forged MAC makes a log that checks out modified; an edit that did not re-chain is
    still named by its line, as the chain finds it first."""
    if not check.ok or not sealed:
        return check
    if sealed == FORGED:
        return _modified(1, FORGED_REASON)
    return replace(check, provenance=sealed)


def unvouched(anchor: Anchor, info: Mapping[str, Any], key: LogKey, holds_records: bool) -> str:
    """Why a resume must not continue the log ``anchor`` (read from ``info``) names, or "".

    Continuing would seal it with this user's key, so a forgery that dropped its MAC or named
    another key (which a report can only call "not verified") would come out "verified". A
    log with no records has nothing to vouch for; a forged MAC is refused even then."""
    sealed = provenance(anchor, info, key)
    if sealed == KEYED or (sealed != FORGED and not holds_records):
        return ""
    if sealed == FORGED:
        return FORGED_REASON
    if sealed == OTHER_KEY:
        return (
            f"run.json's log_chain was sealed with another key (id {anchor.key_id}), not this "
            f"machine's ({key.id}): a folder made elsewhere"
        )
    return "run.json's log_chain has no key MAC (made before keys, or the MAC removed)"


def _count(value: Any) -> int | None:
    """``value`` if it is a record count (a whole number, not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


@dataclass(frozen=True)
class LogCheck:
    """The result of checking a log: ``verified`` or ``modified`` (``line`` is the first line
    that does not check out). ``anchored``: how many of a verified log's ``records`` the
    anchor covers (fewer when a killed run appended past its last checkpoint);
    ``provenance``: the anchor's ``KEYED`` / ``OTHER_KEY`` / ``UNKEYED`` where run.json was
    read (empty for the run's own check against the chain it holds in memory)."""

    state: str
    line: int = 0
    reason: str = ""
    head: str = ""
    records: int = 0
    anchored: int = 0
    provenance: str = ""

    @property
    def ok(self) -> bool:
        return self.state == VERIFIED

    def describe(self, path: object) -> str:
        if self.state == MODIFIED:
            return f"{path}:{self.line}: the log was modified after it was written ({self.reason})"
        said = f"{path}: log verified ({self.records} records)"
        return f"{said}; {self.provenance_line()}" if self.provenance else said

    def provenance_line(self) -> str:
        """One line on who wrote the log, for the report (module docstring)."""
        if self.provenance == KEYED:
            said = "log chain verified with this machine's key"
            later = self.records - self.anchored
            if later > 0:
                said += (
                    f" for its first {self.anchored} records (the {later} after run.json's "
                    "last checkpoint are chained but not keyed)"
                )
            return said
        if self.provenance == OTHER_KEY:
            return (
                "log chain intact; the key it was made with is not on this machine "
                "(provenance not verified)"
            )
        return "log chain intact; no key MAC: made before keys (provenance not verified)"


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
                return LogCheck(VERIFIED, head=self._previous, records=count, anchored=n)
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
