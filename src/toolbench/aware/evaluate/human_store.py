"""The answer store of the human baseline: one SQLite file per sample, an append-only log.

Answers go to SQLite (``<dataset>.human.sqlite`` by default) as an append-only event log: an
undo is one more event pointing at the answer it cancels, nothing is deleted. WAL mode and a
busy timeout let several annotators share the file. An annotator takes the next unanswered
instance under a lease (as the review store does for reviewers: chosen and leased in one
``BEGIN IMMEDIATE`` transaction), so two people working at once never get the same instance,
and quitting and re-running continues where that annotator stopped.

The store is tied to its sample: the ``sample_digest`` (see ``human_sample``) is recorded when
the file is created and must match on every later open; another sample is refused with a
message saying which options the answers were started with. Kept apart from the session
(``human``) so the storage rules (events, undo, leases, claiming) read and test on their own.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolbench.aware.eventlog import EventLog
from toolbench.aware.review.store import DEFAULT_LEASE_S, Taken
from toolbench.errors import UserError

DB_SUFFIX = ".human.sqlite"

Answer = Literal["yes", "no"]
Action = Literal["answer", "skip", "undo"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sample (
    position INTEGER PRIMARY KEY,
    instance_id TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL REFERENCES sample (instance_id),
    annotator TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('answer', 'skip', 'undo')),
    answer TEXT CHECK (answer IN ('yes', 'no')),
    seconds REAL,
    created_at REAL NOT NULL,
    undoes_seq INTEGER REFERENCES events (seq),
    CHECK ((action = 'answer') = (answer IS NOT NULL)),
    CHECK ((action = 'undo') = (undoes_seq IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS events_by_instance ON events (instance_id, seq);
CREATE INDEX IF NOT EXISTS events_by_annotator ON events (annotator, seq);
-- An answer is cancelled at most once, even if two undo requests race.
CREATE UNIQUE INDEX IF NOT EXISTS events_undone_once ON events (undoes_seq)
    WHERE undoes_seq IS NOT NULL;
CREATE TABLE IF NOT EXISTS leases (
    instance_id TEXT PRIMARY KEY,
    annotator TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""

#: Answers that no undo event points at, oldest first.
_EFFECTIVE = """
SELECT seq, instance_id, annotator, answer, seconds, created_at
FROM events AS e
WHERE action = 'answer'
  AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)
ORDER BY seq
"""

#: An annotator's latest answer in effect (what their undo cancels).
_LATEST_OF_ANNOTATOR = """
SELECT seq, instance_id FROM events AS e
WHERE annotator = ? AND action = 'answer'
  AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)
ORDER BY seq DESC LIMIT 1
"""


def default_db_path(dataset: Path) -> Path:
    """``<dataset>.human.sqlite`` beside the dataset."""
    return dataset.with_name(dataset.name + DB_SUFFIX)


def _options(n: str | int, seed: str | int, balanced: str | bool) -> str:
    flag = " --balanced" if str(balanced).lower() in ("true", "1") else ""
    return f"--n {n} --seed {seed}{flag}"


@dataclass(frozen=True)
class Event:
    """One row of the log, as appended."""

    seq: int
    instance_id: str
    annotator: str
    action: Action
    answer: Answer | None
    seconds: float | None
    created_at: float
    undoes_seq: int | None


@dataclass(frozen=True)
class Given:
    """An answer in effect (not undone)."""

    seq: int
    instance_id: str
    annotator: str
    answer: Answer
    seconds: float
    created_at: float


class AnswerStore(EventLog):
    """The answer log and work leases of one sample (see the module docstring).

    ``order`` is the sample's ids in presentation order; ``meta`` is recorded when the file is
    created and its ``sample_digest`` must match on every later open. ``clock`` is for tests.
    """

    what = "human answers"

    def __init__(
        self,
        path: Path,
        order: Sequence[str],
        meta: dict[str, str],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path)
        self.order = list(order)
        self._ids = frozenset(order)
        self._clock = clock
        self._open(lambda: self._init_schema(meta))

    def _init_schema(self, meta: dict[str, str]) -> None:
        with self._write() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [*meta.items(), ("created_at", repr(self._clock()))],
                )
                conn.executemany(
                    "INSERT INTO sample (position, instance_id) VALUES (?, ?)",
                    list(enumerate(self.order, start=1)),
                )
                return
        if rows.get("sample_digest") != meta["sample_digest"]:
            raise UserError(_mismatch(self.path, rows, meta))

    def _check(self, instance_id: str, annotator: str) -> None:
        if instance_id not in self._ids:
            raise ValueError(f"instance {instance_id!r} is not in this sample")
        if not annotator:
            raise ValueError("an annotator name is required")

    # ---- writing ----

    def _append(
        self,
        instance_id: str,
        annotator: str,
        action: Action,
        answer: Answer | None,
        seconds: float,
        exclusive: bool = False,
    ) -> Event:
        self._check(instance_id, annotator)
        now = self._clock()
        with self._write() as conn:
            if exclusive:
                self._check_open(conn, instance_id, annotator, now)
            cursor = conn.execute(
                "INSERT INTO events (instance_id, annotator, action, answer, seconds, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (instance_id, annotator, action, answer, seconds, now),
            )
            conn.execute(
                "DELETE FROM leases WHERE instance_id = ? AND annotator = ?",
                (instance_id, annotator),
            )
        seq = cursor.lastrowid
        assert seq is not None
        return Event(seq, instance_id, annotator, action, answer, seconds, now, None)

    @staticmethod
    def _check_open(conn: sqlite3.Connection, instance_id: str, annotator: str, now: float) -> None:
        """For exclusive writes (see ``ReviewStore.record``): refuse an answered instance, or
        one another annotator holds, inside the write's own transaction."""
        answered = conn.execute(
            "SELECT annotator FROM events AS e WHERE instance_id = ? AND action = 'answer'"
            " AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)",
            (instance_id,),
        ).fetchone()
        if answered is not None:
            raise Taken(f"{instance_id} is already answered")
        holder = conn.execute(
            "SELECT annotator FROM leases WHERE instance_id = ? AND expires_at > ?",
            (instance_id, now),
        ).fetchone()
        if holder is not None and holder[0] != annotator:
            raise Taken(f"{instance_id} is being answered by someone else")

    def answer(
        self,
        instance_id: str,
        annotator: str,
        answer: Answer,
        seconds: float,
        *,
        exclusive: bool = False,
    ) -> Event:
        """Append an answer (with the seconds it was on screen) and release the lease on it.
        ``exclusive``: raise ``Taken`` rather than add a second answer (a resent form)."""
        if answer not in ("yes", "no"):
            raise ValueError(f"answer must be yes or no, not {answer!r}")
        return self._append(instance_id, annotator, "answer", answer, seconds, exclusive)

    def skip(
        self, instance_id: str, annotator: str, seconds: float, *, exclusive: bool = False
    ) -> Event:
        """Pass on an instance: it stays open for others and comes last for this annotator."""
        return self._append(instance_id, annotator, "skip", None, seconds, exclusive)

    def latest_answer(self, annotator: str) -> tuple[int, str] | None:
        """(seq, instance id) of what ``undo(annotator)`` would cancel now; None if nothing."""
        with self._lock:
            row = self._db().execute(_LATEST_OF_ANNOTATOR, (annotator,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def undo(
        self, annotator: str, lease_s: float = DEFAULT_LEASE_S, *, only: int | None = None
    ) -> Event | None:
        """Cancel the annotator's latest answer in effect; None if there is none. The instance
        is leased back to them, so ``claim_next`` shows it next, before anyone else takes it.
        ``only`` (a seq): undo nothing unless that answer is the latest (a resent form)."""
        now = self._clock()
        with self._write() as conn:
            row = conn.execute(_LATEST_OF_ANNOTATOR, (annotator,)).fetchone()
            if row is None or (only is not None and int(row[0]) != only):
                return None
            target, instance_id = int(row[0]), str(row[1])
            cursor = conn.execute(
                "INSERT INTO events (instance_id, annotator, action, created_at, undoes_seq)"
                " VALUES (?, ?, 'undo', ?, ?)",
                (instance_id, annotator, now, target),
            )
            self._lease(conn, instance_id, annotator, now, lease_s)
        seq = cursor.lastrowid
        assert seq is not None
        return Event(seq, instance_id, annotator, "undo", None, None, now, target)

    # ---- work claiming ----

    @staticmethod
    def _lease(
        conn: sqlite3.Connection, instance_id: str, annotator: str, now: float, lease_s: float
    ) -> None:
        conn.execute(
            "INSERT INTO leases (instance_id, annotator, claimed_at, expires_at)"
            " VALUES (?, ?, ?, ?)"
            " ON CONFLICT (instance_id) DO UPDATE SET annotator = excluded.annotator,"
            " claimed_at = excluded.claimed_at, expires_at = excluded.expires_at",
            (instance_id, annotator, now, now + lease_s),
        )

    def claim_next(self, annotator: str, lease_s: float = DEFAULT_LEASE_S) -> str | None:
        """Lease and return the next instance for ``annotator``; None when nothing is open.

        Open means: no answer in effect and no live lease held by someone else. What the
        annotator already holds comes first (the latest claim first: what undo handed back, or
        what a crashed session was showing), then the rest in presentation order, then the
        instances this annotator skipped, least recently skipped first. Choosing and leasing
        are one ``BEGIN IMMEDIATE`` transaction, so two annotators never claim the same one.
        """
        if not annotator:
            raise ValueError("an annotator name is required")
        now = self._clock()
        with self._write() as conn:
            answered = {row[1] for row in conn.execute(_EFFECTIVE)}
            held: dict[str, float] = {}
            taken: set[str] = set()
            for instance_id, holder, claimed_at, expires_at in conn.execute(
                "SELECT instance_id, annotator, claimed_at, expires_at FROM leases"
            ):
                if expires_at <= now:
                    continue
                if holder == annotator:
                    held[instance_id] = claimed_at
                else:
                    taken.add(instance_id)
            skipped = dict(
                conn.execute(
                    "SELECT instance_id, MAX(seq) FROM events"
                    " WHERE annotator = ? AND action = 'skip' GROUP BY instance_id",
                    (annotator,),
                ).fetchall()
            )
            open_ids = [i for i in self.order if i not in answered and i not in taken]
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
            self._lease(conn, chosen, annotator, now, lease_s)
            return chosen

    def release(self, annotator: str) -> int:
        """Give up all the annotator's leases; returns how many were held."""
        with self._write() as conn:
            return conn.execute("DELETE FROM leases WHERE annotator = ?", (annotator,)).rowcount

    def leases(self) -> dict[str, tuple[str, float]]:
        """Live leases: instance id -> (annotator, expires_at)."""
        now = self._clock()
        with self._lock:
            rows = self._db().execute(
                "SELECT instance_id, annotator, expires_at FROM leases WHERE expires_at > ?",
                (now,),
            )
            return {str(i): (str(a), float(e)) for i, a, e in rows}

    # ---- reading ----

    def given(self) -> list[Given]:
        """Every answer in effect, oldest first (an instance can have two only if a lease ran
        out while its first annotator still had it on screen)."""
        with self._lock:
            rows = self._db().execute(_EFFECTIVE).fetchall()
        return [
            Given(int(seq), str(iid), str(who), answer, float(seconds or 0.0), float(at))
            for seq, iid, who, answer, seconds, at in rows
        ]

    def answers(self) -> dict[str, Given]:
        """Instance id -> the answer that counts: the first one in effect."""
        first: dict[str, Given] = {}
        for given in self.given():
            first.setdefault(given.instance_id, given)
        return first

    def events(self, *, annotator: str | None = None, after: int = 0) -> list[Event]:
        """The log in order, optionally one annotator's; ``after`` is a seq."""
        sql = (
            "SELECT seq, instance_id, annotator, action, answer, seconds, created_at, undoes_seq"
            " FROM events WHERE seq > ?"
        )
        params: list[object] = [after]
        if annotator is not None:
            sql += " AND annotator = ?"
            params.append(annotator)
        with self._lock:
            rows = self._db().execute(sql + " ORDER BY seq", params).fetchall()
        return [
            Event(
                seq=int(seq),
                instance_id=str(iid),
                annotator=str(who),
                action=action,
                answer=answer,
                seconds=None if seconds is None else float(seconds),
                created_at=float(at),
                undoes_seq=None if undoes is None else int(undoes),
            )
            for seq, iid, who, action, answer, seconds, at, undoes in rows
        ]


def _mismatch(path: Path, recorded: dict[str, str], wanted: dict[str, str]) -> str:
    old = _options(recorded.get("n", "?"), recorded.get("seed", "?"), recorded.get("balanced", ""))
    new = _options(wanted["n"], wanted["seed"], wanted["balanced"])
    where = recorded.get("dataset") or "another dataset"
    if old == new:
        why = (
            f"the sampled instances of {wanted['dataset']} differ from the ones answered there "
            f"(the dataset's content changed, or it is another dataset: the answers were "
            f"started on {where})"
        )
    else:
        why = f"they were started on {where} with {old}, and this run asks for {new}"
    return (
        f"{path}: these human answers belong to another sample: {why}. Answers cannot move to "
        "other instances: pass another --db to start a new answer set, or run with the options "
        "the answers were started with"
    )
