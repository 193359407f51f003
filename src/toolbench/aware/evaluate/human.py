"""``toolbench aware human``: people answer the explicit question themselves (paper §6.1, Table 5).

The paper's human baseline: a class-balanced sample of instances (180 from APIBank), split among
annotators (nine people, 20 each), each instance answered once with Yes or No under the same
protocol as the models. This module is the session: ``HumanSession`` ties a dataset's sample to
its answer store, ``annotate`` runs one annotator's key loop and ``render_results`` prints the
scores. The parts live beside it:

* **What people see is what a model sees** in explicit zero-shot mode: ``EXPLICIT_SYSTEM`` once as
  instructions, then each instance's ``explicit_user_message``, printed verbatim. No id, label,
  manipulation or provenance is ever shown (a header gives only the position in the sample).
* **The sample** (``human_sample``): seeded, optionally balanced, in a fixed presentation order,
  with a digest of everything the answers depend on.
* **Answers** (``human_store``): the annotation store (an append-only SQLite event log with undo
  events and work leases, shared safely by several annotators), tied to its sample by that
  digest; the key loop is the annotation key loop with ``y``/``n``.
* **Results** (``human_results``): accuracy, F1 and the other awareness metrics per manipulation
  group and overall, with 95% bootstrap intervals, computed exactly as for models.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from toolbench.aware.annotate.keys import KeyInput
from toolbench.aware.annotate.terminal import KeyLoop, session
from toolbench.aware.evaluate.human_results import (
    PAPER_NOTE,
    Block,
    Line,
    annotator_table,
    render_blocks,
    results_table,
)
from toolbench.aware.evaluate.human_sample import draw_sample, sample_digest
from toolbench.aware.evaluate.human_store import AnswerStore, Event, default_db_path
from toolbench.aware.evaluate.items import evaluated
from toolbench.aware.evaluate.metrics import Judged, confusion
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.aware.schema import read_instances
from toolbench.errors import UserError

KEYS_HELP = "y Yes (the APIs can be called now) · n No · s skip · u undo your last answer · q quit"
PROMPT = "[y/n/s/u/q] > "


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

    def open_store(self) -> AnswerStore:
        """The answer store of this sample (created if missing); the caller closes it."""
        return self._store()

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
            loop = _Loop(self, store, self.sample.ids, annotator, keys, console)
            session(loop, "stopped; every answer so far is saved (run again to continue)")
            mine = store.events(who=annotator, after=start)
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
        """Table 5 in the terminal (``--report``): the blocks of ``results`` as rich tables."""
        console.rule(Text("human baseline"))
        render_blocks(self.results(), console)

    def results(self) -> list[Block]:
        """Table 5: accuracy and F1 (and the other metrics) per manipulation group, with 95%
        bootstrap intervals, plus coverage and per-annotator counts and times, as data that
        the terminal and the study server's ``/results`` page each lay out."""
        total = len(self.sample.instances)
        balance = ", balanced" if self.balanced else ""
        blocks: list[Block] = [Line(note, "warn") for note in self.sample.notes]
        blocks.append(
            Line(
                f"{self.dataset}: sample of {total} (--n {self.n}, --seed {self.seed}{balance}); "
                f"answers in {self.db}"
            )
        )
        if not self.db.is_file():
            return [*blocks, Line(f"answered 0 of {total}: no answers yet")]
        with self._store() as store:
            answers = store.answers()
            given = store.given()
            events = store.events()
        done = [iid for iid in self.sample.ids if iid in answers]
        labels = [self.by_id[iid].label for iid in done]
        blocks.append(
            Line(
                f"answered {len(done)} of {total} ({labels.count('complete')} complete, "
                f"{labels.count('incomplete')} incomplete)"
            )
        )
        if not done:
            return blocks
        c = confusion([Judged(i, self.by_id[i].label, answers[i].answer) for i in done])
        blocks += [
            results_table(self.instances, [answers[i] for i in done], self.by_id),
            annotator_table(given, events),
            Line(PAPER_NOTE, "dim"),
            Line(
                f"confusion (label: yes / no): complete {c['complete']['yes']} / "
                f"{c['complete']['no']}; incomplete {c['incomplete']['yes']} / "
                f"{c['incomplete']['no']}"
            ),
        ]
        extra = len(given) - len(answers)
        if extra:
            blocks.append(
                Line(
                    f"{extra} later answer(s) to instances someone had already answered (a "
                    "lease ran out while they were on screen); only the first answer counts",
                    "warn",
                )
            )
        return blocks


class _Loop(KeyLoop):
    """The human baseline's keys on the annotation key loop: ``y`` Yes, ``n`` No."""

    store: AnswerStore
    keys_help = KEYS_HELP
    prompt = PROMPT
    busy = "being answered"
    finished = "every instance in the sample is answered"

    def __init__(self, session: HumanSession, *args: Any) -> None:
        super().__init__(*args)
        self.session = session
        self.notice = ""

    def show(self, instance_id: str) -> None:
        total = len(self.queue)
        done, mine = len(self.store.decided()), self.store.decided_by(self.who)
        position = self.session.position[instance_id]
        self.console.rule(
            Text(f"#{position} of {total} · {done}/{total} answered · {self.who}: {mine}")
        )
        if self.notice:
            self.console.print(Text(self.notice, "yellow"))
            self.notice = ""
        self.console.out(explicit_user_message(self.session.by_id[instance_id]), highlight=False)

    def decide(self, key: str, instance_id: str, seconds: float) -> bool | None:
        if key not in ("y", "n"):
            return None
        self.store.answer(instance_id, self.who, "yes" if key == "y" else "no", seconds)
        return True

    def skip(self, instance_id: str, seconds: float) -> None:
        self.store.skip(instance_id, self.who, seconds)

    def undone(self, event: Event) -> None:
        position = self.session.position[event.instance_id]
        self.notice = f"undone: your answer to #{position}; answer it again"
