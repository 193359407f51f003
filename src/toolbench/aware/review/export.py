"""Write review decisions back into the dataset's ``verification`` fields.

The decisions live in the store (append-only, shared by reviewers); the dataset file is what
evaluation reads. Export is the one step that joins them: each incomplete instance with an
effective decision gets ``status`` accepted/rejected, the reason codes and the reviewer. Every
other instance is written back unchanged, so automatic rejections from generation and the
status of complete instances (accepted by their source) survive. The file is rewritten
atomically (temp file + rename) and the count is checked, so an export can never lose or
duplicate an instance.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolbench.aware.review.store import Decision, ReviewStore, default_db_path
from toolbench.aware.schema import Instance, Verification, read_instances, write_instances


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote. Status counts are over the incomplete instances of the output."""

    out: Path
    instances: int
    #: Instances whose verification now comes from a review decision.
    applied: int
    #: Decisions on complete instances, which are not reviewed and so were not applied.
    ignored: int
    status_counts: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        counts = ", ".join(f"{n} {status}" for status, n in self.status_counts.items())
        ignored = f"; {self.ignored} on complete instances ignored" if self.ignored else ""
        return (
            f"{self.instances} instances written to {self.out}, {self.applied} from review "
            f"decisions{ignored} (incomplete: {counts})"
        )


def apply_decision(instance: Instance, decision: Decision | None) -> Instance:
    """The instance with its verification from ``decision``; unchanged without one."""
    if decision is None or instance.label != "incomplete":
        return instance
    verification = Verification(
        status=decision.status,
        reasons=list(decision.reasons),
        by=decision.reviewer,
        note=decision.note,
    )
    return instance.model_copy(update={"verification": verification})


def export_decisions(
    dataset: Path, out: Path | None = None, *, db: Path | None = None
) -> ExportSummary:
    """Write ``dataset`` (to ``out``, default in place) with the store's decisions applied.

    Exports hold an exclusive lock from reading the store to renaming the file: two reviewers
    finishing at once must not let the one that read the store first rename last."""
    store_path = db if db is not None else default_db_path(dataset)
    if not store_path.exists():
        return _export_locked(dataset, out, store_path)  # says there is nothing to export
    lock_path = store_path.with_name(store_path.name + ".export.lock")
    with lock_path.open("a") as lock, contextlib.ExitStack() as stack:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stack.callback(fcntl.flock, lock, fcntl.LOCK_UN)
        return _export_locked(dataset, out, store_path)


def _export_locked(dataset: Path, out: Path | None, store_path: Path) -> ExportSummary:
    instances = read_instances(dataset)
    with ReviewStore(store_path, [i.id for i in instances], dataset=dataset, create=False) as store:
        decisions = store.current_decisions()
    target = out if out is not None else dataset
    applied = sum(1 for i in instances if i.label == "incomplete" and i.id in decisions)
    ignored = sum(1 for i in instances if i.label != "incomplete" and i.id in decisions)
    status_counts = {"pending": 0, "accepted": 0, "rejected": 0}

    def rows() -> Iterator[Instance]:
        for instance in instances:
            updated = apply_decision(instance, decisions.get(instance.id))
            if updated.label == "incomplete":
                status_counts[updated.verification.status] += 1
            yield updated

    written = write_instances(target, rows())
    if written != len(instances):  # pragma: no cover - guards the invariant, not a branch
        raise RuntimeError(f"export wrote {written} instances, expected {len(instances)}")
    return ExportSummary(
        out=target,
        instances=written,
        applied=applied,
        ignored=ignored,
        status_counts=status_counts,
    )
