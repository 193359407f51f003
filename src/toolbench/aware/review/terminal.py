"""Keyboard-driven review of an awareness dataset in the terminal.

The annotation key loop (``toolbench.aware.annotate.terminal``) with the review's keys: ``a``
accept, ``r`` reject (with the paper's reasons for that manipulation), ``s`` skip, ``u`` undo,
``q`` quit.

Only incomplete instances are reviewed (complete ones come from the source). With
``only_pending`` (the default) instances the file already marks as decided, e.g. rejected by
an automatic check during generation, are left out too; ``only_pending=False`` shows them so a
reviewer can overrule the automatic verdict. Instances with a stored decision are never shown
again (undo brings one back).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolbench.aware.annotate.keys import KeyInput
from toolbench.aware.annotate.terminal import KeyLoop, session
from toolbench.aware.review.store import Event, ReviewStore, default_db_path
from toolbench.aware.review.view import render_instance
from toolbench.aware.review_reasons import reasons_for
from toolbench.aware.schema import Instance, read_instances

KEYS_HELP = "a accept · r reject · s skip · u undo · q quit"
PROMPT = "[a/r/s/u/q] > "


@dataclass(frozen=True)
class ReviewSummary:
    """One session's work. accepted/rejected count this reviewer's decisions of this session
    that are still in effect (an undone one is not counted); remaining is over the whole
    review queue, whoever decides it."""

    reviewer: str
    accepted: int
    rejected: int
    skipped: int
    undone: int
    remaining: int
    total: int
    db: Path


def review_queue(instances: list[Instance], *, only_pending: bool) -> list[str]:
    """Ids to review, in dataset order: incomplete instances (pending ones if only_pending)."""
    return [
        i.id
        for i in instances
        if i.label == "incomplete" and (not only_pending or i.verification.status == "pending")
    ]


def parse_reasons(text: str, codes: list[str]) -> list[str]:
    """``"1 3"`` (or codes, or a mix, separated by spaces/commas) -> codes; ValueError if bad."""
    chosen: list[str] = []
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        if token.isascii() and token.isdigit() and 1 <= int(token) <= len(codes):
            code = codes[int(token) - 1]
        elif token in codes:
            code = token
        else:
            raise ValueError(f"{token!r} is not a reason number between 1 and {len(codes)}")
        if code not in chosen:
            chosen.append(code)
    return chosen


class _ReviewLoop(KeyLoop):
    """The review's keys on the annotation key loop: ``a`` accept, ``r`` reject."""

    store: ReviewStore
    keys_help = KEYS_HELP
    prompt = PROMPT
    busy = "being reviewed"
    finished = "every instance in the queue is reviewed"

    def __init__(self, store: ReviewStore, by_id: dict[str, Instance], *args: Any) -> None:
        super().__init__(store, *args)
        self.by_id = by_id
        self.notice: list[str] = []

    def show(self, instance_id: str) -> None:
        instance = self.by_id[instance_id]
        twin = self.by_id.get(instance.twin_id) if instance.twin_id else None
        decided = self.store.decided()
        render_instance(
            self.console,
            instance,
            twin,
            reviewed=sum(1 for i in self.queue if i in decided),
            total=len(self.queue),
            notice=self.notice,
        )
        self.notice = []
        self.console.print(Text(KEYS_HELP, "dim"))

    def decide(self, key: str, instance_id: str, seconds: float) -> bool | None:
        if key == "a":
            self.store.accept(instance_id, self.who)
            self.console.print(Text("accepted", "green"))
            return True
        if key != "r":
            return None
        reasons = self._choose_reasons(self.by_id[instance_id])
        if reasons is None:
            return False
        note = self._note(reasons)
        self.store.reject(instance_id, self.who, reasons, note)
        self.console.print(Text("rejected: " + ", ".join(reasons), "red"))
        return True

    def skip(self, instance_id: str, seconds: float) -> None:
        self.store.skip(instance_id, self.who)

    def _choose_reasons(self, instance: Instance) -> list[str] | None:
        reasons = reasons_for(instance.manipulation)
        codes = list(reasons)
        for number, code in enumerate(codes, start=1):
            self.console.print(f"  {number}. {reasons[code]} ", end="", markup=False)
            self.console.print(Text(f"({code})", "dim"))
        while True:
            text = self.keys.line("reasons (numbers, e.g. 1 3; Enter to cancel) > ")
            try:
                chosen = parse_reasons(text, codes)
            except ValueError as error:
                self.console.print(Text(str(error), "yellow"))
                continue
            if not chosen:
                self.console.print(Text("rejection cancelled", "yellow"))
                return None
            return chosen

    def _note(self, reasons: list[str]) -> str:
        while True:
            note = self.keys.line("note (optional, Enter for none) > ").strip()
            if note or "other" not in reasons:
                return note
            self.console.print(Text("'other' needs a note saying what is wrong", "yellow"))

    def undone(self, event: Event) -> None:
        if event.instance_id in self.queue:
            self.notice = [f"undone: your decision on {event.instance_id}; decide again"]
            return
        # e.g. decided in a session with only_pending=False
        self.store.release(self.who, event.instance_id)
        self.console.print(
            Text(
                f"undone: your decision on {event.instance_id}, which this review does not "
                "show (it is not pending in the file); review with --all to decide it",
                "yellow",
            )
        )


def run_review(
    dataset: Path,
    *,
    reviewer: str,
    db: Path | None = None,
    stdin: TextIO | None = None,
    console: Console | None = None,
    only_pending: bool = True,
) -> ReviewSummary:
    """Review ``dataset`` as ``reviewer`` until done or quit; decisions go to ``db``.

    ``db`` defaults to ``<dataset>.review.sqlite``. ``stdin`` defaults to the process's; on a
    terminal keys act without Enter, otherwise one key (or answer) per line.
    """
    if not reviewer.strip():
        raise ValueError("a reviewer name is required")
    console = console if console is not None else Console(highlight=False)
    instances = read_instances(dataset)
    by_id = {i.id: i for i in instances}
    queue = review_queue(instances, only_pending=only_pending)
    store_path = db if db is not None else default_db_path(dataset)
    with ReviewStore(store_path, list(by_id), dataset=dataset) as store:
        start = store.last_seq()
        keys = KeyInput(stdin if stdin is not None else sys.stdin, console)
        if queue:
            loop = _ReviewLoop(store, by_id, queue, reviewer, keys, console)
            session(loop, "stopped; every decision so far is saved")
        else:
            console.print("nothing to review: no pending incomplete instances")
        summary = _summarise(store, queue, reviewer, start, store_path)
    _print_summary(console, summary)
    return summary


def _summarise(
    store: ReviewStore, queue: list[str], reviewer: str, start: int, db: Path
) -> ReviewSummary:
    mine = store.events(who=reviewer, after=start)
    decided = store.current_decisions()
    ours = [d for d in decided.values() if d.reviewer == reviewer and d.seq > start]
    return ReviewSummary(
        reviewer=reviewer,
        accepted=sum(1 for d in ours if d.status == "accepted"),
        rejected=sum(1 for d in ours if d.status == "rejected"),
        skipped=sum(1 for e in mine if e.action == "skip"),
        undone=sum(1 for e in mine if e.action == "undo"),
        remaining=sum(1 for i in queue if i not in decided),
        total=len(queue),
        db=db,
    )


def _print_summary(console: Console, summary: ReviewSummary) -> None:
    table = Table(title=f"review by {summary.reviewer}", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in (
        ("accepted", summary.accepted),
        ("rejected", summary.rejected),
        ("skipped", summary.skipped),
        ("undone", summary.undone),
        ("remaining", summary.remaining),
        ("in queue", summary.total),
    ):
        table.add_row(label, str(value))
    console.print(table)
    console.print(Text(f"decisions: {summary.db}", "dim"))
