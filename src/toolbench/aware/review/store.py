"""Review decisions for one awareness dataset, kept in SQLite beside it.

The paper's verification step (two people reviewing every manipulated instance) needs a
decision record that survives quitting, crashes and several reviewers working on the same file
at once. So:

* Decisions are an append-only event log. An undo is one more event pointing at the decision it
  cancels; nothing is ever deleted or rewritten, so the history of who decided what stays
  auditable and two processes can never overwrite each other's rows.
* Two reviewers on the same file never get the same instance at the same time: ``claim_next``
  hands out a short lease (``BEGIN IMMEDIATE``, so choosing and leasing is one atomic step).
* WAL mode with a ``busy_timeout`` lets readers run while a writer writes, and every write is
  its own short transaction, so a terminal UI, a browser UI and scripts can share the file.

A store remembers which dataset it belongs to (its path and a digest of its instance ids) and
refuses to be used with a dataset whose ids differ, because the decisions would then silently
apply to the wrong instances. The digest covers ids only, so exporting decisions back into the
dataset (which changes each instance's ``verification``) keeps the store valid.

Nothing here knows about a user interface: the terminal review (``terminal.py``) and any later
UI are clients of this API.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolbench.aware.eventlog import EventLog
from toolbench.errors import UserError

DB_SUFFIX = ".review.sqlite"
DEFAULT_LEASE_S = 600.0
#: How long a write waits for another process's transaction before failing.

Action = Literal["accept", "reject", "skip", "undo"]
DecisionStatus = Literal["accepted", "rejected"]
ACTIONS: tuple[str, ...] = ("accept", "reject", "skip", "undo")
_STATUS_OF: dict[str, DecisionStatus] = {"accept": "accepted", "reject": "rejected"}


class Taken(ValueError):
    """An exclusive write found the instance decided already, or leased to someone else.

    Browsers resend forms (a double click, a reload, a tab left open past its lease): such a
    late request must not become a second decision on an instance someone already decided."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('accept', 'reject', 'skip', 'undo')),
    reasons TEXT NOT NULL DEFAULT '[]',
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    undoes_seq INTEGER REFERENCES events (seq),
    CHECK ((action = 'undo') = (undoes_seq IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS events_by_instance ON events (instance_id, seq);
CREATE INDEX IF NOT EXISTS events_by_reviewer ON events (reviewer, seq);
-- An event is cancelled at most once, even if two undo requests race.
CREATE UNIQUE INDEX IF NOT EXISTS events_undone_once ON events (undoes_seq)
    WHERE undoes_seq IS NOT NULL;
CREATE TABLE IF NOT EXISTS leases (
    instance_id TEXT PRIMARY KEY,
    reviewer TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""

#: accept/reject events that no undo event points at.
_EFFECTIVE = """
SELECT seq, instance_id, reviewer, action, reasons, note, created_at
FROM events AS e
WHERE action IN ('accept', 'reject')
  AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)
ORDER BY seq
"""


#: A reviewer's latest accept/reject that is not undone (what their undo cancels).
_LATEST_OF_REVIEWER = """
SELECT seq, instance_id FROM events AS e
WHERE reviewer = ? AND action IN ('accept', 'reject')
  AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)
ORDER BY seq DESC LIMIT 1
"""


@dataclass(frozen=True)
class Event:
    """One row of the log, as appended."""

    seq: int
    instance_id: str
    reviewer: str
    action: Action
    reasons: tuple[str, ...]
    note: str
    created_at: float
    undoes_seq: int | None


@dataclass(frozen=True)
class Decision:
    """The effective verdict on one instance: its latest accept/reject that was not undone."""

    instance_id: str
    status: DecisionStatus
    reviewer: str
    reasons: tuple[str, ...]
    note: str
    seq: int
    created_at: float


def default_db_path(dataset: Path) -> Path:
    """``<dataset>.review.sqlite`` beside the dataset, so the decisions travel with it."""
    return dataset.with_name(dataset.name + DB_SUFFIX)


def ids_digest(instance_ids: Sequence[str]) -> str:
    """sha256 of the sorted, distinct ids: order-independent, content-independent."""
    material = "\n".join(sorted(set(instance_ids)))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class ReviewStore(EventLog):
    """The decision log and work leases of one dataset.

    One object may be shared by threads (a lock serialises its connection); each process opens
    its own. ``instance_ids`` are the dataset's ids: they are checked against the digest the
    store recorded when it was created, and decisions for other ids are refused.
    ``create=False`` turns a missing file into a ``UserError`` (for readers such as export,
    which must not leave an empty database behind). ``clock`` exists for tests of lease expiry.
    """

    what = "review decisions"

    def __init__(
        self,
        path: Path,
        instance_ids: Sequence[str],
        *,
        dataset: Path | None = None,
        create: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path)
        self._ids = frozenset(instance_ids)
        self._clock = clock
        if not create and not self.path.is_file():
            raise UserError(
                f"{self.path}: no review decisions found (review the dataset first, or pass "
                "the decisions file explicitly)"
            )
        self._open(lambda: self._init_schema(dataset, ids_digest(list(self._ids))))

    # ---- setup ----

    def _init_schema(self, dataset: Path | None, digest: str) -> None:
        with self._write() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("dataset", str(dataset) if dataset is not None else ""),
                        ("ids_digest", digest),
                        ("ids_count", str(len(self._ids))),
                        ("created_at", repr(self._clock())),
                    ],
                )
                return
        if rows.get("ids_digest") != digest:
            recorded = rows.get("dataset") or "another dataset"
            raise UserError(
                f"{self.path}: these review decisions belong to {recorded} "
                f"({rows.get('ids_count', '?')} instances) and the instance ids differ from "
                f"{dataset or 'this dataset'}; pass a different decisions file (--db) or "
                "delete this one to start over"
            )

    def _check_id(self, instance_id: str) -> None:
        if instance_id not in self._ids:
            raise ValueError(f"instance {instance_id!r} is not in this dataset")

    # ---- writing ----

    def record(
        self,
        instance_id: str,
        reviewer: str,
        action: Literal["accept", "reject", "skip"],
        reasons: Sequence[str] = (),
        note: str = "",
        *,
        exclusive: bool = False,
    ) -> Event:
        """Append a decision (accept/reject) or a skip, and release the reviewer's lease on it.

        A rejection needs at least one reason code: the paper's criteria are what make a
        rejection checkable later. ``exclusive`` raises ``Taken`` instead of writing when the
        instance already has a decision in effect or a live lease held by another reviewer,
        checked in the same transaction as the write, so a decision is recorded exactly once.
        """
        self._check_id(instance_id)
        if not reviewer:
            raise ValueError("a reviewer name is required")
        if action not in ("accept", "reject", "skip"):
            raise ValueError(f"action must be accept, reject or skip, not {action!r}")
        if action == "reject" and not reasons:
            raise ValueError("a rejection needs at least one reason")
        now = self._clock()
        with self._write() as conn:
            if exclusive:
                self._check_open(conn, instance_id, reviewer, now)
            cursor = conn.execute(
                "INSERT INTO events (instance_id, reviewer, action, reasons, note, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (instance_id, reviewer, action, json.dumps(list(reasons)), note, now),
            )
            conn.execute(
                "DELETE FROM leases WHERE instance_id = ? AND reviewer = ?",
                (instance_id, reviewer),
            )
        seq = cursor.lastrowid
        assert seq is not None
        return Event(seq, instance_id, reviewer, action, tuple(reasons), note, now, None)

    @staticmethod
    def _check_open(conn: sqlite3.Connection, instance_id: str, reviewer: str, now: float) -> None:
        decided = conn.execute(
            "SELECT reviewer FROM events AS e WHERE instance_id = ?"
            " AND action IN ('accept', 'reject')"
            " AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)",
            (instance_id,),
        ).fetchone()
        if decided is not None:
            raise Taken(f"{instance_id} is already decided by {decided[0]}")
        holder = conn.execute(
            "SELECT reviewer FROM leases WHERE instance_id = ? AND expires_at > ?",
            (instance_id, now),
        ).fetchone()
        if holder is not None and holder[0] != reviewer:
            raise Taken(f"{instance_id} is being reviewed by {holder[0]}")

    def accept(self, instance_id: str, reviewer: str, note: str = "") -> Event:
        return self.record(instance_id, reviewer, "accept", (), note)

    def reject(
        self, instance_id: str, reviewer: str, reasons: Sequence[str], note: str = ""
    ) -> Event:
        return self.record(instance_id, reviewer, "reject", reasons, note)

    def skip(self, instance_id: str, reviewer: str) -> Event:
        return self.record(instance_id, reviewer, "skip")

    def undo(
        self, reviewer: str, lease_s: float = DEFAULT_LEASE_S, *, only: int | None = None
    ) -> Event | None:
        """Cancel the reviewer's latest decision that is not undone yet; None if there is none.

        The instance is leased back to the reviewer, so ``claim_next`` returns it next and the
        reviewer sees it again before anyone else can take it. Calling undo again cancels the
        decision before that one. ``only`` (a seq) undoes nothing unless that decision is the
        latest one: a resent undo form must not cancel the decision before it as well.
        """
        now = self._clock()
        with self._write() as conn:
            row = conn.execute(_LATEST_OF_REVIEWER, (reviewer,)).fetchone()
            if row is None or (only is not None and int(row[0]) != only):
                return None
            target, instance_id = int(row[0]), str(row[1])
            cursor = conn.execute(
                "INSERT INTO events (instance_id, reviewer, action, created_at, undoes_seq)"
                " VALUES (?, ?, 'undo', ?, ?)",
                (instance_id, reviewer, now, target),
            )
            self._lease(conn, instance_id, reviewer, now, lease_s)
        seq = cursor.lastrowid
        assert seq is not None
        return Event(seq, instance_id, reviewer, "undo", (), "", now, target)

    # ---- work claiming ----

    @staticmethod
    def _lease(
        conn: sqlite3.Connection, instance_id: str, reviewer: str, now: float, lease_s: float
    ) -> None:
        conn.execute(
            "INSERT INTO leases (instance_id, reviewer, claimed_at, expires_at)"
            " VALUES (?, ?, ?, ?)"
            " ON CONFLICT (instance_id) DO UPDATE SET reviewer = excluded.reviewer,"
            " claimed_at = excluded.claimed_at, expires_at = excluded.expires_at",
            (instance_id, reviewer, now, now + lease_s),
        )

    def claim_next(
        self, reviewer: str, order: Sequence[str], lease_s: float = DEFAULT_LEASE_S
    ) -> str | None:
        """Lease and return the next instance for ``reviewer`` among ``order``; None when done.

        Candidates are the ids of ``order`` with no effective decision and no live lease held
        by someone else. An instance the reviewer already holds comes first (the latest claim
        first: what ``undo`` handed back, or what a crashed session was showing); then the
        rest in dataset order; instances this reviewer skipped go last, least recently skipped
        first. Choosing and leasing happen in one ``BEGIN IMMEDIATE`` transaction, so two
        reviewers can never claim the same instance.
        """
        if not reviewer:
            raise ValueError("a reviewer name is required")
        unknown = [i for i in order if i not in self._ids]
        if unknown:
            raise ValueError(f"not in this dataset: {unknown[:3]}")
        now = self._clock()
        with self._write() as conn:
            decided = {row[1] for row in conn.execute(_EFFECTIVE)}
            held: dict[str, float] = {}
            taken: set[str] = set()
            for instance_id, holder, claimed_at, expires_at in conn.execute(
                "SELECT instance_id, reviewer, claimed_at, expires_at FROM leases"
            ):
                if expires_at <= now:
                    continue
                if holder == reviewer:
                    held[instance_id] = claimed_at
                else:
                    taken.add(instance_id)
            skipped = dict(
                conn.execute(
                    "SELECT instance_id, MAX(seq) FROM events"
                    " WHERE reviewer = ? AND action = 'skip' GROUP BY instance_id",
                    (reviewer,),
                ).fetchall()
            )
            open_ids = [i for i in dict.fromkeys(order) if i not in decided and i not in taken]
            mine = sorted((i for i in open_ids if i in held), key=lambda i: -held[i])
            fresh = [i for i in open_ids if i not in held and i not in skipped]
            later = sorted(
                (i for i in open_ids if i not in held and i in skipped), key=lambda i: skipped[i]
            )
            queue = mine + fresh + later
            if not queue:
                return None
            chosen = queue[0]
            conn.execute("DELETE FROM leases WHERE expires_at <= ?", (now,))
            self._lease(conn, chosen, reviewer, now, lease_s)
            return chosen

    def release(self, reviewer: str, instance_id: str | None = None) -> int:
        """Give up the reviewer's leases (one, or all of them); returns how many were held."""
        with self._write() as conn:
            if instance_id is None:
                cursor = conn.execute("DELETE FROM leases WHERE reviewer = ?", (reviewer,))
            else:
                cursor = conn.execute(
                    "DELETE FROM leases WHERE reviewer = ? AND instance_id = ?",
                    (reviewer, instance_id),
                )
            return cursor.rowcount

    def leases(self) -> dict[str, tuple[str, float]]:
        """Live leases: instance id -> (reviewer, expires_at)."""
        now = self._clock()
        with self._lock:
            rows = self._db().execute(
                "SELECT instance_id, reviewer, expires_at FROM leases WHERE expires_at > ?",
                (now,),
            )
            return {str(i): (str(r), float(e)) for i, r, e in rows}

    # ---- reading ----

    def latest_decision(self, reviewer: str) -> tuple[int, str] | None:
        """(seq, instance id) of what ``undo(reviewer)`` would cancel now; None if nothing."""
        with self._lock:
            row = self._db().execute(_LATEST_OF_REVIEWER, (reviewer,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def current_decisions(self) -> dict[str, Decision]:
        """Instance id -> its effective decision (latest accept/reject not undone).

        Skips are not decisions, and an undone decision lets an earlier one (perhaps another
        reviewer's) show through again.
        """
        with self._lock:
            rows = self._db().execute(_EFFECTIVE).fetchall()
        decisions: dict[str, Decision] = {}
        for seq, instance_id, reviewer, action, reasons, note, created_at in rows:
            decisions[instance_id] = Decision(
                instance_id=instance_id,
                status=_STATUS_OF[action],
                reviewer=reviewer,
                reasons=tuple(json.loads(reasons)),
                note=note,
                seq=int(seq),
                created_at=float(created_at),
            )
        return decisions

    def events(
        self, *, reviewer: str | None = None, instance_id: str | None = None, after: int = 0
    ) -> list[Event]:
        """The log in order, optionally filtered; ``after`` is a seq (for "this session")."""
        sql = (
            "SELECT seq, instance_id, reviewer, action, reasons, note, created_at, undoes_seq"
            " FROM events WHERE seq > ?"
        )
        params: list[object] = [after]
        if reviewer is not None:
            sql += " AND reviewer = ?"
            params.append(reviewer)
        if instance_id is not None:
            sql += " AND instance_id = ?"
            params.append(instance_id)
        with self._lock:
            rows = self._db().execute(sql + " ORDER BY seq", params).fetchall()
        return [
            Event(
                seq=int(seq),
                instance_id=iid,
                reviewer=who,
                action=action,
                reasons=tuple(json.loads(reasons)),
                note=note,
                created_at=float(created_at),
                undoes_seq=None if undoes is None else int(undoes),
            )
            for seq, iid, who, action, reasons, note, created_at, undoes in rows
        ]
