"""Review decisions for one awareness dataset, kept in SQLite beside it.

The paper's verification step (two people reviewing every manipulated instance) needs a
decision record that survives quitting, crashes and several reviewers working on the same file
at once: that is the annotation store (``toolbench.aware.annotate.store``), here with
accept/reject decisions that carry reason codes and a note.

A store remembers which dataset it belongs to (its path and a digest of its instance ids) and
refuses to be used with a dataset whose ids differ, because the decisions would then silently
apply to the wrong instances. The digest covers ids only, so exporting decisions back into the
dataset (which changes each instance's ``verification``) keeps the store valid.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolbench.aware.annotate.store import AnnotationStore, Layout, Row, split_row
from toolbench.errors import UserError

DB_SUFFIX = ".review.sqlite"

Action = Literal["accept", "reject", "skip", "undo"]
DecisionStatus = Literal["accepted", "rejected"]
_STATUS_OF: dict[str, DecisionStatus] = {"accept": "accepted", "reject": "rejected"}

LAYOUT = Layout(
    who="reviewer",
    decisions=("accept", "reject"),
    columns=("reasons", "note"),
    columns_sql="reasons TEXT NOT NULL DEFAULT '[]',\n    note TEXT NOT NULL DEFAULT ''",
    noun="reviewer",
    within="dataset",
    decided="{id} is already decided by {who}",
    held="{id} is being reviewed by {who}",
)


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


class ReviewStore(AnnotationStore[Event]):
    """The review decisions and work leases of one dataset (``instance_ids``: its ids, checked
    against the digest recorded when the store was created; decisions for other ids are
    refused). ``create=False`` and ``clock`` are as for ``AnnotationStore``."""

    layout = LAYOUT
    what = "review decisions"
    missing = "review the dataset first, or pass the decisions file explicitly"

    def __init__(
        self,
        path: Path,
        instance_ids: Sequence[str],
        *,
        dataset: Path | None = None,
        create: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        meta = {
            "dataset": str(dataset) if dataset is not None else "",
            "ids_digest": ids_digest(instance_ids),
            "ids_count": str(len(set(instance_ids))),
        }
        super().__init__(path, instance_ids, meta, create=create, clock=clock)

    def event(self, row: Row) -> Event:
        seq, instance_id, reviewer, action, (reasons, note), at, undoes = split_row(row)
        return Event(
            seq, instance_id, reviewer, action, tuple(json.loads(reasons)), note, at, undoes
        )

    def check_meta(self, recorded: dict[str, str], meta: dict[str, str]) -> None:
        if recorded.get("ids_digest") == meta["ids_digest"]:
            return
        where = recorded.get("dataset") or "another dataset"
        raise UserError(
            f"{self.path}: these review decisions belong to {where} "
            f"({recorded.get('ids_count', '?')} instances) and the instance ids differ from "
            f"{meta['dataset'] or 'this dataset'}; pass a different decisions file (--db) or "
            "delete this one to start over"
        )

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
        rejection checkable later. ``exclusive``: see ``AnnotationStore.append``.
        """
        if action == "reject" and not reasons:
            raise ValueError("a rejection needs at least one reason")
        values = self.values(reasons, note)
        return self.append(instance_id, reviewer, action, values, exclusive=exclusive)

    @staticmethod
    def values(reasons: Sequence[str], note: str) -> tuple[str, str]:
        """The payload columns of a decision: the reason codes (as JSON) and the note."""
        return json.dumps(list(reasons)), note

    def accept(self, instance_id: str, reviewer: str, note: str = "") -> Event:
        return self.record(instance_id, reviewer, "accept", (), note)

    def reject(
        self, instance_id: str, reviewer: str, reasons: Sequence[str], note: str = ""
    ) -> Event:
        return self.record(instance_id, reviewer, "reject", reasons, note)

    def skip(self, instance_id: str, reviewer: str) -> Event:
        return self.record(instance_id, reviewer, "skip")

    # ---- reading ----

    def latest_decision(self, reviewer: str) -> tuple[int, str] | None:
        """(seq, instance id) of what ``undo(reviewer)`` would cancel now; None if nothing."""
        return self.latest(reviewer)

    def current_decisions(self) -> dict[str, Decision]:
        """Instance id -> its effective decision (latest accept/reject not undone).

        Skips are not decisions, and an undone decision lets an earlier one (perhaps another
        reviewer's) show through again.
        """
        return {
            e.instance_id: Decision(
                instance_id=e.instance_id,
                status=_STATUS_OF[e.action],
                reviewer=e.reviewer,
                reasons=e.reasons,
                note=e.note,
                seq=e.seq,
                created_at=e.created_at,
            )
            for e in self.effective()
        }
