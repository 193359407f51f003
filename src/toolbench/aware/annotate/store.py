"""The store of an annotation: an append-only event log and work leases in one SQLite file.

People decide instances (a reviewer accepts or rejects a manipulated instance; a participant of
the human baseline answers one), several at once, on one file, from terminals and browsers. So:

* Decisions are an append-only event log. An undo is one more event pointing at the decision it
  cancels; nothing is ever deleted or rewritten, so the history of who decided what stays
  auditable and two processes can never overwrite each other's rows.
* Two people never get the same instance at the same time: ``claim_next`` hands out a short
  lease (``BEGIN IMMEDIATE``, so choosing and leasing is one atomic step).
* An exclusive write (``append(..., exclusive=True)``) is refused with ``Taken`` when the
  instance already has a decision in effect or someone else's live lease, checked in the same
  transaction as the write, so a resent browser form never becomes a second decision.
* WAL mode and a busy timeout (``EventLog``) let readers run while a writer writes.

What differs between uses is only what a decision carries, so a ``Layout`` names the person
column, the actions that decide and the payload columns; each use (``aware.review.store``,
``aware.evaluate.human_store``) turns rows into its own event type and checks its own metadata.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from toolbench.aware.eventlog import EventLog
from toolbench.errors import UserError

DEFAULT_LEASE_S = 600.0

E = TypeVar("E")


class Taken(ValueError):
    """An exclusive write found the instance decided already, or leased to someone else.

    Browsers resend forms (a double click, a reload, a tab left open past its lease): such a
    late request must not become a second decision on an instance someone already decided."""


@dataclass(frozen=True)
class Layout:
    """How one use lays out its events: the SQL of its tables follows from these fields.

    ``who`` names the person column, ``decisions`` the actions that decide an instance (besides
    them there are always ``skip`` and ``undo``), ``columns`` the payload columns in order with
    ``columns_sql`` their definitions and ``checks`` any CHECK clauses on them; ``instance_ref``
    and ``tables`` add a foreign key and tables of the use's own. ``noun`` names the people in
    messages ("reviewer") and ``within`` the whole ("dataset"); ``decided``/``held`` are the
    ``Taken`` messages, with ``{id}`` and ``{who}``. All of it is code, never input, so it may
    be spliced into SQL.
    """

    who: str
    decisions: tuple[str, ...]
    columns: tuple[str, ...]
    columns_sql: str
    checks: str = ""
    instance_ref: str = ""
    tables: str = ""
    noun: str = "annotator"
    within: str = "set"
    decided: str = "{id} is already decided by {who}"
    held: str = "{id} is being decided by {who}"

    @property
    def actions(self) -> tuple[str, ...]:
        return (*self.decisions, "skip", "undo")

    def schema(self) -> list[str]:
        """The statements that create the tables (each ``IF NOT EXISTS``)."""
        actions = ", ".join(f"'{a}'" for a in self.actions)
        return [
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            *[s for s in self.tables.split(";") if s.strip()],
            f"""CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL{self.instance_ref},
    {self.who} TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ({actions})),
    {self.columns_sql},
    created_at REAL NOT NULL,
    undoes_seq INTEGER REFERENCES events (seq),{self.checks}
    CHECK ((action = 'undo') = (undoes_seq IS NOT NULL))
)""",
            "CREATE INDEX IF NOT EXISTS events_by_instance ON events (instance_id, seq)",
            f"CREATE INDEX IF NOT EXISTS events_by_{self.who} ON events ({self.who}, seq)",
            # An event is cancelled at most once, even if two undo requests race.
            "CREATE UNIQUE INDEX IF NOT EXISTS events_undone_once ON events (undoes_seq)"
            " WHERE undoes_seq IS NOT NULL",
            f"""CREATE TABLE IF NOT EXISTS leases (
    instance_id TEXT PRIMARY KEY,
    {self.who} TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
)""",
        ]

    @property
    def _deciding(self) -> str:
        return "action IN (" + ", ".join(f"'{a}'" for a in self.decisions) + ")"

    def select(self) -> str:
        payload = "".join(f", {c}" for c in self.columns)
        return f"SELECT seq, instance_id, {self.who}, action{payload}, created_at, undoes_seq"

    def effective(self) -> str:
        """Decisions no undo points at, oldest first."""
        return (
            f"{self.select()} FROM events AS e WHERE {self._deciding}"
            " AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq) ORDER BY seq"
        )

    def latest_of(self) -> str:
        """A person's latest decision in effect (what their undo cancels)."""
        return (
            f"SELECT seq, instance_id FROM events AS e WHERE {self.who} = ? AND {self._deciding}"
            " AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)"
            " ORDER BY seq DESC LIMIT 1"
        )


#: One events row: seq, instance_id, who, action, *payload, created_at, undoes_seq.
Row = tuple[Any, ...]


def split_row(row: Row) -> tuple[int, str, str, Any, tuple[Any, ...], float, int | None]:
    """A row's common columns typed, its payload as a tuple: what a use's ``event`` builds on."""
    seq, instance_id, who, action, *payload, created_at, undoes = row
    undoes_seq = None if undoes is None else int(undoes)
    return int(seq), str(instance_id), str(who), action, tuple(payload), created_at, undoes_seq


class AnnotationStore(EventLog, Generic[E]):
    """The decision log and work leases of one set of instances.

    One object may be shared by threads (a lock serialises its connection); each process opens
    its own. ``ids`` are the instances in their order (``claim_next``'s default order); ``meta``
    is recorded when the file is created and handed to ``check_meta`` on every later open.
    ``create=False`` turns a missing file into a ``UserError`` (for readers, which must not leave
    an empty database behind). ``clock`` exists for tests of lease expiry.
    A use sets ``layout`` and ``what`` and turns rows into its events (``event``).
    """

    layout: Layout
    #: What to do when a reader finds no file (``create=False``).
    missing = "pass the file with --db"

    def __init__(
        self,
        path: Path,
        ids: Sequence[str],
        meta: dict[str, str],
        *,
        create: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path)
        self.order = list(dict.fromkeys(ids))
        self._ids = frozenset(self.order)
        self._clock = clock
        if not create and not self.path.is_file():
            raise UserError(f"{self.path}: no {self.what} found ({self.missing})")
        self._open(lambda: self._init_schema(meta))

    # ---- what a use provides ----

    def event(self, row: Row) -> E:
        """The use's event for one row of ``Layout.select``."""
        raise NotImplementedError

    def created(self, conn: sqlite3.Connection) -> None:
        """Called in the transaction that creates the file, after ``meta`` is written."""

    def check_meta(self, recorded: dict[str, str], meta: dict[str, str]) -> None:
        """Raise ``UserError`` if the file belongs to other instances than ``meta`` says."""

    # ---- setup ----

    def _init_schema(self, meta: dict[str, str]) -> None:
        with self._write() as conn:
            for statement in self.layout.schema():
                conn.execute(statement)
            recorded = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not recorded:
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [*meta.items(), ("created_at", repr(self._clock()))],
                )
                self.created(conn)
                return
        self.check_meta(recorded, meta)

    def _check(self, instance_id: str, who: str) -> None:
        if instance_id not in self._ids:
            raise ValueError(f"instance {instance_id!r} is not in this {self.layout.within}")
        if not who:
            raise ValueError(f"a {self.layout.noun} name is required")

    # ---- writing ----

    def append(
        self,
        instance_id: str,
        who: str,
        action: str,
        values: Sequence[object],
        *,
        exclusive: bool = False,
    ) -> E:
        """Append a decision or a skip (``values`` fill the payload columns) and release
        ``who``'s lease on the instance. ``exclusive`` raises ``Taken`` instead of writing when
        the instance is decided or someone else holds it (see the module docstring)."""
        self._check(instance_id, who)
        if action not in self.layout.actions or action == "undo":
            raise ValueError(f"action must be one of {self.layout.actions[:-1]}, not {action!r}")
        layout = self.layout
        names = ", ".join(("instance_id", layout.who, "action", *layout.columns, "created_at"))
        marks = ", ".join("?" * (len(layout.columns) + 4))
        now = self._clock()
        with self._write() as conn:
            if exclusive:
                self._check_open(conn, instance_id, who, now)
            cursor = conn.execute(
                f"INSERT INTO events ({names}) VALUES ({marks})",
                (instance_id, who, action, *values, now),
            )
            conn.execute(
                f"DELETE FROM leases WHERE instance_id = ? AND {layout.who} = ?",
                (instance_id, who),
            )
        return self._read_one(cursor.lastrowid)

    def _check_open(self, conn: sqlite3.Connection, instance_id: str, who: str, now: float) -> None:
        layout = self.layout
        decided = conn.execute(
            f"SELECT {layout.who} FROM ({layout.effective()}) WHERE instance_id = ?",
            (instance_id,),
        ).fetchone()
        if decided is not None:
            raise Taken(layout.decided.format(id=instance_id, who=decided[0]))
        holder = conn.execute(
            f"SELECT {layout.who} FROM leases WHERE instance_id = ? AND expires_at > ?",
            (instance_id, now),
        ).fetchone()
        if holder is not None and holder[0] != who:
            raise Taken(layout.held.format(id=instance_id, who=holder[0]))

    def undo(
        self, who: str, lease_s: float = DEFAULT_LEASE_S, *, only: int | None = None
    ) -> E | None:
        """Cancel ``who``'s latest decision that is not undone yet; None if there is none.

        The instance is leased back to them, so ``claim_next`` returns it next and they see it
        again before anyone else can take it. Calling undo again cancels the decision before
        that one. ``only`` (a seq) undoes nothing unless that decision is the latest one: a
        resent undo form must not cancel the decision before it as well.
        """
        now = self._clock()
        with self._write() as conn:
            row = conn.execute(self.layout.latest_of(), (who,)).fetchone()
            if row is None or (only is not None and int(row[0]) != only):
                return None
            target, instance_id = int(row[0]), str(row[1])
            cursor = conn.execute(
                f"INSERT INTO events (instance_id, {self.layout.who}, action, created_at,"
                " undoes_seq) VALUES (?, ?, 'undo', ?, ?)",
                (instance_id, who, now, target),
            )
            self._lease(conn, instance_id, who, now, lease_s)
        return self._read_one(cursor.lastrowid)

    def _read_one(self, seq: int | None) -> E:
        assert seq is not None
        with self._lock:
            row = self._db().execute(f"{self.layout.select()} FROM events WHERE seq = ?", (seq,))
            return self.event(tuple(row.fetchone()))

    # ---- work claiming ----

    def _lease(
        self, conn: sqlite3.Connection, instance_id: str, who: str, now: float, lease_s: float
    ) -> None:
        column = self.layout.who
        conn.execute(
            f"INSERT INTO leases (instance_id, {column}, claimed_at, expires_at)"
            f" VALUES (?, ?, ?, ?) ON CONFLICT (instance_id) DO UPDATE SET"
            f" {column} = excluded.{column}, claimed_at = excluded.claimed_at,"
            " expires_at = excluded.expires_at",
            (instance_id, who, now, now + lease_s),
        )

    def claim_next(
        self, who: str, order: Sequence[str] | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> str | None:
        """Lease and return the next instance for ``who`` among ``order`` (default: every
        instance in its order); None when nothing is open.

        Open means: no decision in effect and no live lease held by someone else. What ``who``
        already holds comes first (the latest claim first: what ``undo`` handed back, or what a
        crashed session was showing); then the rest in order; instances ``who`` skipped go
        last, least recently skipped first. Choosing and leasing happen in one ``BEGIN
        IMMEDIATE`` transaction, so two people can never claim the same instance.
        """
        if not who:
            raise ValueError(f"a {self.layout.noun} name is required")
        order = self.order if order is None else list(dict.fromkeys(order))
        unknown = [i for i in order if i not in self._ids]
        if unknown:
            raise ValueError(f"not in this {self.layout.within}: {unknown[:3]}")
        column = self.layout.who
        now = self._clock()
        with self._write() as conn:
            decided = {str(row[1]) for row in conn.execute(self.layout.effective())}
            held: dict[str, float] = {}
            taken: set[str] = set()
            for instance_id, holder, claimed_at, expires_at in conn.execute(
                f"SELECT instance_id, {column}, claimed_at, expires_at FROM leases"
            ):
                if expires_at <= now:
                    continue
                if holder == who:
                    held[instance_id] = claimed_at
                else:
                    taken.add(instance_id)
            skipped = dict(
                conn.execute(
                    "SELECT instance_id, MAX(seq) FROM events"
                    f" WHERE {column} = ? AND action = 'skip' GROUP BY instance_id",
                    (who,),
                ).fetchall()
            )
            open_ids = [i for i in order if i not in decided and i not in taken]
            mine = sorted((i for i in open_ids if i in held), key=lambda i: -held[i])
            fresh = [i for i in open_ids if i not in held and i not in skipped]
            later = sorted(
                (i for i in open_ids if i not in held and i in skipped), key=lambda i: skipped[i]
            )
            queue = mine + fresh + later
            if not queue:
                return None
            conn.execute("DELETE FROM leases WHERE expires_at <= ?", (now,))
            self._lease(conn, queue[0], who, now, lease_s)
            return queue[0]

    def release(self, who: str, instance_id: str | None = None) -> int:
        """Give up ``who``'s leases (one, or all of them); returns how many were held."""
        sql = f"DELETE FROM leases WHERE {self.layout.who} = ?"
        params: tuple[str, ...] = (who,)
        if instance_id is not None:
            sql, params = sql + " AND instance_id = ?", (who, instance_id)
        with self._write() as conn:
            return conn.execute(sql, params).rowcount

    def leases(self) -> dict[str, tuple[str, float]]:
        """Live leases: instance id -> (who, expires_at)."""
        now = self._clock()
        with self._lock:
            rows = self._db().execute(
                f"SELECT instance_id, {self.layout.who}, expires_at FROM leases"
                " WHERE expires_at > ?",
                (now,),
            )
            return {str(i): (str(w), float(e)) for i, w, e in rows}

    # ---- reading ----

    def latest(self, who: str) -> tuple[int, str] | None:
        """(seq, instance id) of what ``undo(who)`` would cancel now; None if nothing."""
        with self._lock:
            row = self._db().execute(self.layout.latest_of(), (who,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def effective(self) -> list[E]:
        """Every decision in effect (not undone), oldest first."""
        with self._lock:
            rows = self._db().execute(self.layout.effective()).fetchall()
        return [self.event(tuple(row)) for row in rows]

    def decided(self) -> set[str]:
        """Ids of the instances with a decision in effect."""
        with self._lock:
            rows = self._db().execute(self.layout.effective()).fetchall()
        return {str(row[1]) for row in rows}

    def decided_by(self, who: str) -> int:
        """How many decisions in effect ``who`` made."""
        with self._lock:
            row = (
                self._db()
                .execute(
                    f"SELECT COUNT(*) FROM ({self.layout.effective()}) WHERE {self.layout.who} = ?",
                    (who,),
                )
                .fetchone()
            )
        return int(row[0])

    def events(
        self, *, who: str | None = None, instance_id: str | None = None, after: int = 0
    ) -> list[E]:
        """The log in order, optionally filtered; ``after`` is a seq (for "this session")."""
        sql = f"{self.layout.select()} FROM events WHERE seq > ?"
        params: list[object] = [after]
        if who is not None:
            sql += f" AND {self.layout.who} = ?"
            params.append(who)
        if instance_id is not None:
            sql += " AND instance_id = ?"
            params.append(instance_id)
        with self._lock:
            rows = self._db().execute(sql + " ORDER BY seq", params).fetchall()
        return [self.event(tuple(row)) for row in rows]
