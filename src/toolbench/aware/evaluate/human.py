"""``toolbench aware human``: people answer the explicit question themselves (paper §6.1, Table 5).

The paper's human baseline: a class-balanced sample of instances (180 from APIBank), split among
annotators (nine people, 20 each), each instance answered once with Yes or No under the same
protocol as the models. So:

* **What people see is what a model sees** in explicit zero-shot mode: ``EXPLICIT_SYSTEM`` once as
  instructions, then each instance's ``explicit_user_message``, printed verbatim. No id, label,
  manipulation or provenance is ever shown (a header gives only the position in the sample).
* **The sample** is drawn with ``random.Random(seed)`` from the evaluated instances sorted by id
  (``--balanced``: n//2 complete and the rest incomplete), then shuffled with the same generator
  into its presentation order. The same dataset, n, seed and balance always give the same sample
  in the same order.
* **Answers** go to SQLite (``<dataset>.human.sqlite`` by default) as an append-only event log:
  an undo is one more event pointing at the answer it cancels, nothing is deleted. WAL mode and a
  busy timeout let several annotators share the file. An annotator takes the next unanswered
  instance under a lease (as the review store does for reviewers: chosen and leased in one
  ``BEGIN IMMEDIATE`` transaction), so two people working at once never get the same instance,
  and quitting and re-running continues where that annotator stopped.
* **The store is tied to its sample** by a digest of n, seed, balance, the instructions and, per
  sampled instance in order, its id, label and the exact text shown. Another dataset (or one whose
  sampled instances changed) or other options are refused instead of mixing answers.
* **Results** are accuracy, F1 (incomplete is the positive class) and the other awareness metrics
  per manipulation group and overall, with 95% bootstrap intervals, computed exactly as for
  models, over the answered instances.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolbench.aware.evaluate.items import report_groups
from toolbench.aware.evaluate.metrics import METRICS, Judged, binary_metrics, confusion
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.aware.evaluate.run import evaluated
from toolbench.aware.review.keys import EndOfInput, KeyInput
from toolbench.aware.review.store import BUSY_TIMEOUT_MS, DEFAULT_LEASE_S
from toolbench.aware.schema import Instance, read_instances
from toolbench.errors import UserError
from toolbench.report.bootstrap import Estimate

DB_SUFFIX = ".human.sqlite"
DIGEST_VERSION = 1
KEYS_HELP = "y Yes (the APIs can be called now) · n No · s skip · u undo your last answer · q quit"
PROMPT = "[y/n/s/u/q] > "
ALL = "overall"
PAPER_NOTE = (
    "for comparison, the paper's Table 5 (180 balanced APIBank instances, 9 people): accuracy "
    "0.811 and F1 0.785 (API replacement), 0.811 and 0.813 (utterance removal), 0.811 and 0.800 "
    "overall"
)
#: Row order and names of the paper's groups; other manipulations follow in name order.
GROUP_TITLES = {"api_replacement": "API replacement", "utterance_removal": "utterance removal"}

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


# ---- the sample ----


def default_db_path(dataset: Path) -> Path:
    """``<dataset>.human.sqlite`` beside the dataset."""
    return dataset.with_name(dataset.name + DB_SUFFIX)


@dataclass(frozen=True)
class Sample:
    """The instances to present, in presentation order, and notes for the user about it."""

    instances: tuple[Instance, ...]
    notes: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.instances]


def draw_sample(
    instances: Sequence[Instance],
    n: int,
    *,
    balanced: bool,
    seed: int,
    dataset: Path | str = "the dataset",
    include_pending: bool = False,
) -> Sample:
    """``n`` instances drawn with ``random.Random(seed)`` from ``instances`` sorted by id, then
    shuffled with the same generator into the order they are presented in."""
    if n < 1:
        raise UserError(f"--n {n}: must be 1 or more")
    pool = sorted(instances, key=lambda i: i.id)
    kind = "accepted or pending" if include_pending else "accepted"
    if not pool:
        hint = "" if include_pending else " (pass --include-pending to use pending ones)"
        raise UserError(f"{dataset}: no {kind} instances to present{hint}")
    rng = random.Random(seed)
    notes: list[str] = []
    if balanced:
        complete = [i for i in pool if i.label == "complete"]
        incomplete = [i for i in pool if i.label == "incomplete"]
        want_complete, want_incomplete = n // 2, n - n // 2
        if len(complete) < want_complete or len(incomplete) < want_incomplete:
            hint = "" if include_pending else ", or add --include-pending"
            raise UserError(
                f"--balanced --n {n} needs {want_complete} complete and {want_incomplete} "
                f"incomplete instances, but {dataset} has {len(complete)} complete and "
                f"{len(incomplete)} incomplete {kind} instances; lower --n{hint}"
            )
        chosen = rng.sample(complete, want_complete) + rng.sample(incomplete, want_incomplete)
    elif n >= len(pool):
        chosen = list(pool)
        if n > len(pool):
            notes.append(
                f"note: {dataset} has only {len(pool)} {kind} instances, fewer than --n {n}; "
                f"all {len(pool)} are presented"
            )
    else:
        chosen = rng.sample(pool, n)
    rng.shuffle(chosen)
    return Sample(tuple(chosen), tuple(notes))


def sample_digest(sample: Sample, *, n: int, seed: int, balanced: bool) -> str:
    """What the answers depend on: the options, the instructions and, per instance in order,
    its id, its label and the exact text shown. Review decisions written back into the dataset
    change none of these, so they keep a store valid."""
    material = {
        "version": DIGEST_VERSION,
        "n": n,
        "seed": seed,
        "balanced": balanced,
        "instructions": EXPLICIT_SYSTEM,
        "sample": [
            [
                i.id,
                i.label,
                hashlib.sha256(explicit_user_message(i).encode("utf-8")).hexdigest(),
            ]
            for i in sample.instances
        ],
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _options(n: str | int, seed: str | int, balanced: str | bool) -> str:
    flag = " --balanced" if str(balanced).lower() in ("true", "1") else ""
    return f"--n {n} --seed {seed}{flag}"


# ---- the answer store ----


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


class AnswerStore:
    """The answer log and work leases of one sample (see the module docstring).

    ``order`` is the sample's ids in presentation order; ``meta`` is recorded when the file is
    created and its ``sample_digest`` must match on every later open. ``clock`` is for tests.
    """

    def __init__(
        self,
        path: Path,
        order: Sequence[str],
        meta: dict[str, str],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.order = list(order)
        self._ids = frozenset(order)
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,  # autocommit; transactions are explicit and short
                check_same_thread=False,
            )
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._enable_wal()
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._init_schema(meta)
        except sqlite3.DatabaseError as error:
            self.close()
            raise UserError(
                f"{self.path}: cannot open the human answers ({error}); pass another file with --db"
            ) from None
        except BaseException:
            self.close()
            raise

    def _enable_wal(self) -> None:
        # A fresh file needs an exclusive lock to switch to WAL, and SQLite reports BUSY here
        # without consulting the busy handler when annotators start together: retry.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._db().execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

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

    # ---- plumbing ----

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("the answer store is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction, taking the write lock up front (no upgrade deadlocks)."""
        with self._lock:
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> AnswerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
    ) -> Event:
        self._check(instance_id, annotator)
        now = self._clock()
        with self._write() as conn:
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

    def answer(self, instance_id: str, annotator: str, answer: Answer, seconds: float) -> Event:
        """Append an answer (with the seconds it was on screen) and release the lease on it."""
        if answer not in ("yes", "no"):
            raise ValueError(f"answer must be yes or no, not {answer!r}")
        return self._append(instance_id, annotator, "answer", answer, seconds)

    def skip(self, instance_id: str, annotator: str, seconds: float) -> Event:
        """Pass on an instance: it stays open for others and comes last for this annotator."""
        return self._append(instance_id, annotator, "skip", None, seconds)

    def undo(self, annotator: str, lease_s: float = DEFAULT_LEASE_S) -> Event | None:
        """Cancel the annotator's latest answer in effect; None if there is none. The instance
        is leased back to them, so ``claim_next`` shows it next, before anyone else takes it."""
        now = self._clock()
        with self._write() as conn:
            row = conn.execute(
                "SELECT seq, instance_id FROM events AS e"
                " WHERE annotator = ? AND action = 'answer'"
                " AND NOT EXISTS (SELECT 1 FROM events AS u WHERE u.undoes_seq = e.seq)"
                " ORDER BY seq DESC LIMIT 1",
                (annotator,),
            ).fetchone()
            if row is None:
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

    def last_seq(self) -> int:
        with self._lock:
            row = self._db().execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return int(row[0])

    def meta(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db().execute("SELECT key, value FROM meta").fetchall())

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._db().execute("PRAGMA journal_mode").fetchone()[0])


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


# ---- the session ----


class _Quit(Exception):
    """The annotator asked to stop (q, Ctrl-C, end of input)."""


class HumanSession:
    """One sample of one dataset and its answer store; ``annotate`` asks, ``render_results``
    scores. The sample and the store's digest are checked on construction, so a mismatch is
    reported before anything is shown (also for ``--report``)."""

    def __init__(
        self,
        dataset: Path,
        db: Path | None,
        n: int,
        balanced: bool,
        seed: int,
        include_pending: bool,
    ) -> None:
        self.dataset = Path(dataset)
        self.db = Path(db) if db is not None else default_db_path(self.dataset)
        self.n, self.balanced, self.seed = n, balanced, seed
        self.instances = evaluated(read_instances(self.dataset), include_pending)
        self.sample = draw_sample(
            self.instances,
            n,
            balanced=balanced,
            seed=seed,
            dataset=self.dataset,
            include_pending=include_pending,
        )
        self.by_id = {i.id: i for i in self.sample.instances}
        self.position = {iid: k for k, iid in enumerate(self.sample.ids, start=1)}
        self.digest = sample_digest(self.sample, n=n, seed=seed, balanced=balanced)
        self._notes_shown = False
        if self.db.is_file():  # check the digest now; a missing store is made by annotate
            with self._store():
                pass

    def _store(self) -> AnswerStore:
        meta = {
            "dataset": str(self.dataset),
            "dataset_sha256": hashlib.sha256(self.dataset.read_bytes()).hexdigest(),
            "sample_digest": self.digest,
            "n": str(self.n),
            "seed": str(self.seed),
            "balanced": str(self.balanced).lower(),
            "size": str(len(self.sample.instances)),
        }
        return AnswerStore(self.db, self.sample.ids, meta)

    def _notes(self, console: Console) -> None:
        if not self._notes_shown:
            for note in self.sample.notes:
                console.print(Text(note, "yellow"))
            self._notes_shown = True

    # ---- answering ----

    def annotate(self, annotator: str, console: Console, *, stdin: TextIO | None = None) -> None:
        """Present instances to ``annotator`` until the sample is answered or they quit.

        Keys come from ``stdin`` (default: the process's): single keys on a terminal, one key
        per line from a pipe. Every answer is stored at once, so quitting loses nothing.
        """
        annotator = annotator.strip()
        if not annotator:
            raise UserError("--annotator: a name is required")
        self._notes(console)
        keys = KeyInput(stdin if stdin is not None else sys.stdin, console)
        with self._store() as store:
            start = store.last_seq()
            console.rule(Text("instructions"))
            console.out(EXPLICIT_SYSTEM, highlight=False)
            console.print(Text(KEYS_HELP, "dim"))
            loop = _Loop(self, store, annotator, keys, console)
            try:
                loop.run()
            except (_Quit, EndOfInput, KeyboardInterrupt):
                console.print()
                console.print(
                    Text("stopped; every answer so far is saved (run again to continue)", "yellow")
                )
            finally:
                store.release(annotator)  # what was on screen goes back to the pool
            mine = store.events(annotator=annotator, after=start)
            kept = sum(1 for g in store.given() if g.annotator == annotator and g.seq > start)
            answered = len(store.answers())
        console.print(
            f"{annotator}: {kept} answers this session (skipped "
            f"{sum(1 for e in mine if e.action == 'skip')}, undone "
            f"{sum(1 for e in mine if e.action == 'undo')}); "
            f"{answered} of {len(self.sample.instances)} answered in all",
            markup=False,
            highlight=False,
        )
        console.print(Text(f"answers: {self.db}", "dim"))

    # ---- results ----

    def render_results(self, console: Console) -> None:
        """Table 5: accuracy and F1 (and the other metrics) per manipulation group, with 95%
        bootstrap intervals, plus coverage and per-annotator counts and times."""
        self._notes(console)
        total = len(self.sample.instances)
        balance = ", balanced" if self.balanced else ""
        console.rule(Text("human baseline"))
        console.print(
            f"{self.dataset}: sample of {total} (--n {self.n}, --seed {self.seed}{balance}); "
            f"answers in {self.db}",
            markup=False,
            highlight=False,
        )
        if not self.db.is_file():
            console.print(f"answered 0 of {total}: no answers yet", highlight=False)
            return
        with self._store() as store:
            answers = store.answers()
            given = store.given()
            events = store.events()
        done = [iid for iid in self.sample.ids if iid in answers]
        labels = {iid: self.by_id[iid].label for iid in done}
        console.print(
            f"answered {len(done)} of {total} "
            f"({sum(1 for v in labels.values() if v == 'complete')} complete, "
            f"{sum(1 for v in labels.values() if v == 'incomplete')} incomplete)",
            highlight=False,
        )
        if not done:
            return
        console.print(results_table(self.instances, [answers[i] for i in done], self.by_id))
        console.print(annotator_table(given, events))
        console.print(Text(PAPER_NOTE, "dim"))
        judged = [Judged(i, self.by_id[i].label, answers[i].answer) for i in done]
        c = confusion(judged)
        console.print(
            f"confusion (label: yes / no): complete {c['complete']['yes']} / "
            f"{c['complete']['no']}; incomplete {c['incomplete']['yes']} / "
            f"{c['incomplete']['no']}",
            highlight=False,
        )
        extra = len(given) - len(answers)
        if extra:
            console.print(
                Text(
                    f"{extra} later answer(s) to instances someone had already answered (a "
                    "lease ran out while they were on screen); only the first answer counts",
                    "yellow",
                )
            )


def group_title(group: str) -> str:
    if group == "none":  # a complete instance none of whose twins is evaluated
        return "complete, no twin"
    return GROUP_TITLES.get(group, group.replace("_", " "))


def grouped(
    instances: Sequence[Instance], answers: Sequence[Given], by_id: dict[str, Instance]
) -> dict[str, list[Judged]]:
    """Group -> judged answers; a complete instance counts in the group of each of its twins'
    manipulations (as for models), and everything in ``overall``."""
    groups = report_groups(instances)
    table: dict[str, list[Judged]] = defaultdict(list)
    for given in answers:
        item = Judged(given.instance_id, by_id[given.instance_id].label, given.answer)
        for group in groups.get(given.instance_id, ("none",)):
            table[group].append(item)
    order = [g for g in GROUP_TITLES if g in table]
    order += sorted(g for g in table if g not in GROUP_TITLES)
    out = {group: table[group] for group in order}
    out[ALL] = [Judged(g.instance_id, by_id[g.instance_id].label, g.answer) for g in answers]
    return out


def _fmt(e: Estimate) -> str:
    return "-" if e.n == 0 or e.mean != e.mean else e.fmt()


def results_table(
    instances: Sequence[Instance], answers: Sequence[Given], by_id: dict[str, Instance]
) -> Table:
    table = Table(title="human answers  (positive class: incomplete)")
    for column in ("group", "n", *[f"{m} [95% CI]" for m in METRICS]):
        table.add_column(column)
    for group, items in grouped(instances, answers, by_id).items():
        est = binary_metrics(items)
        name = ALL if group == ALL else group_title(group)
        table.add_row(name, str(len(items)), *[_fmt(est[m]) for m in METRICS])
    return table


def annotator_table(given: Sequence[Given], events: Sequence[Event]) -> Table:
    table = Table(title="annotators")
    for column in ("annotator", "answers", "skips", "undos", "mean s/answer"):
        table.add_column(column, justify="left" if column == "annotator" else "right")
    seconds: dict[str, list[float]] = defaultdict(list)
    for g in given:
        seconds[g.annotator].append(g.seconds)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"skip": 0, "undo": 0})
    for e in events:
        if e.action != "answer":
            counts[e.annotator][e.action] += 1
    for who in sorted(set(seconds) | set(counts)):
        times = seconds.get(who, [])
        mean = f"{statistics.fmean(times):.1f}" if times else "-"
        table.add_row(
            who, str(len(times)), str(counts[who]["skip"]), str(counts[who]["undo"]), mean
        )
    everyone = [s for times in seconds.values() for s in times]
    if len(seconds) > 1:
        table.add_row(
            "all",
            str(len(everyone)),
            str(sum(c["skip"] for c in counts.values())),
            str(sum(c["undo"] for c in counts.values())),
            f"{statistics.fmean(everyone):.1f}",
        )
    return table


class _Loop:
    """The key loop of one annotator's session."""

    def __init__(
        self,
        session: HumanSession,
        store: AnswerStore,
        annotator: str,
        keys: KeyInput,
        console: Console,
    ) -> None:
        self.session = session
        self.store = store
        self.annotator = annotator
        self.keys = keys
        self.console = console
        self.notice = ""

    def run(self) -> None:
        while True:
            instance_id = self.store.claim_next(self.annotator)
            if instance_id is None:
                if self._idle():
                    continue
                return
            self._show(instance_id)
            self._act(instance_id, time.monotonic())

    def _progress(self) -> tuple[int, int]:
        given = self.store.given()
        return len({g.instance_id for g in given}), sum(
            1 for g in given if g.annotator == self.annotator
        )

    def _show(self, instance_id: str) -> None:
        done, mine = self._progress()
        total = len(self.session.sample.instances)
        position = self.session.position[instance_id]
        self.console.rule(
            Text(f"#{position} of {total} · {done}/{total} answered · {self.annotator}: {mine}")
        )
        if self.notice:
            self.console.print(Text(self.notice, "yellow"))
            self.notice = ""
        self.console.out(explicit_user_message(self.session.by_id[instance_id]), highlight=False)

    def _act(self, instance_id: str, shown_at: float) -> None:
        """Read keys until one moves on to the next instance."""
        while True:
            key = self.keys.key(PROMPT)
            seconds = round(time.monotonic() - shown_at, 3)
            if key in ("y", "n"):
                self.store.answer(
                    instance_id, self.annotator, "yes" if key == "y" else "no", seconds
                )
                return
            if key == "s":
                self.store.skip(instance_id, self.annotator, seconds)
                self.console.print(Text("skipped (it comes back at the end)", "yellow"))
                return
            if key == "u":
                if self._undo():
                    return
                continue
            if key == "q":
                raise _Quit
            if key:
                self.console.print(Text(f"unknown key {key!r}: {KEYS_HELP}", "yellow"))

    def _undo(self) -> bool:
        """Undo this annotator's latest answer; True if there was one (it is shown next, and
        the instance that was on screen keeps its lease and comes right after)."""
        undo = self.store.undo(self.annotator)
        if undo is None:
            self.console.print(Text("nothing to undo", "yellow"))
            return False
        position = self.session.position[undo.instance_id]
        self.notice = f"undone: your answer to #{position}; answer it again"
        return True

    def _idle(self) -> bool:
        """Nothing to show: still offer undo, and while others hold instances, a look again.
        False ends the session."""
        leased = set(self.store.leases())
        answered = set(self.store.answers())
        busy = [i for i in self.session.sample.ids if i not in answered and i in leased]
        if busy:
            self.console.print(
                Text(f"nothing for you now: {len(busy)} instance(s) are being answered by others")
            )
            prompt = "[u undo, q quit, any other key: look again] > "
        else:
            self.console.print(Text("every instance in the sample is answered", "green"))
            prompt = "[u undo, any other key: finish] > "
        key = self.keys.key(prompt)
        if key == "u":
            self._undo()
            return True
        return bool(busy) and key != "q"
