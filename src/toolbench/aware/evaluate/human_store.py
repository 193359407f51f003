"""The answer store of the human baseline: one SQLite file per sample, an append-only log.

Answers go to SQLite (``<dataset>.human.sqlite`` by default) as an append-only event log: an
undo is one more event pointing at the answer it cancels, nothing is deleted. WAL mode and a
busy timeout let several annotators share the file. An annotator takes the next unanswered
instance under a lease (the annotation store, ``toolbench.aware.annotate.store``), so two
people working at once never get the same instance, and quitting and re-running continues where
that annotator stopped.

The store is tied to its sample: the ``sample_digest`` (see ``human_sample``) is recorded when
the file is created and must match on every later open; another sample is refused with a
message saying which options the answers were started with. Kept apart from the session
(``human``) so the storage rules read and test on their own.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolbench.aware.annotate.store import AnnotationStore, Layout, Row, split_row
from toolbench.errors import UserError

DB_SUFFIX = ".human.sqlite"

Answer = Literal["yes", "no"]
Action = Literal["answer", "skip", "undo"]

LAYOUT = Layout(
    who="annotator",
    decisions=("answer",),
    columns=("answer", "seconds"),
    columns_sql="answer TEXT CHECK (answer IN ('yes', 'no')),\n    seconds REAL",
    checks="\n    CHECK ((action = 'answer') = (answer IS NOT NULL)),",
    instance_ref=" REFERENCES sample (instance_id)",
    tables="""CREATE TABLE IF NOT EXISTS sample (
    position INTEGER PRIMARY KEY,
    instance_id TEXT NOT NULL UNIQUE
)""",
    noun="annotator",
    within="sample",
    decided="{id} is already answered",
    held="{id} is being answered by someone else",
)


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


class AnswerStore(AnnotationStore[Event]):
    """The answer log and work leases of one sample (see the module docstring).

    Made with the sample's ids in presentation order and ``meta``, recorded when the file is
    created; its ``sample_digest`` must match on every later open.
    """

    layout = LAYOUT
    what = "human answers"

    def event(self, row: Row) -> Event:
        seq, instance_id, annotator, action, (answer, seconds), at, undoes = split_row(row)
        return Event(seq, instance_id, annotator, action, answer, seconds, at, undoes)

    def created(self, conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT INTO sample (position, instance_id) VALUES (?, ?)",
            list(enumerate(self.order, start=1)),
        )

    def check_meta(self, recorded: dict[str, str], meta: dict[str, str]) -> None:
        if recorded.get("sample_digest") != meta["sample_digest"]:
            raise UserError(_mismatch(self.path, recorded, meta))

    # ---- writing ----

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
        return self.append(instance_id, annotator, "answer", (answer, seconds), exclusive=exclusive)

    def skip(
        self, instance_id: str, annotator: str, seconds: float, *, exclusive: bool = False
    ) -> Event:
        """Pass on an instance: it stays open for others and comes last for this annotator."""
        return self.append(instance_id, annotator, "skip", (None, seconds), exclusive=exclusive)

    # ---- reading ----

    def given(self) -> list[Given]:
        """Every answer in effect, oldest first (an instance can have two only if a lease ran
        out while its first annotator still had it on screen)."""
        return [
            Given(e.seq, e.instance_id, e.annotator, e.answer, e.seconds or 0.0, e.created_at)
            for e in self.effective()
            if e.answer is not None
        ]

    def answers(self) -> dict[str, Given]:
        """Instance id -> the answer that counts: the first one in effect."""
        first: dict[str, Given] = {}
        for given in self.given():
            first.setdefault(given.instance_id, given)
        return first


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
