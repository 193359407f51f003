"""What a results table reads of one run: its label, its ``run.json`` and its records.

``toolbench.report.summary.LoadedRun`` (a run folder read and checked) is one; tables written
against this protocol can be built by the packages below the report too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from toolbench.types import Status


class RunResults(Protocol):
    """A run as its tables see it."""

    @property
    def label(self) -> str: ...

    @property
    def info(self) -> dict[str, Any]: ...

    @property
    def records(self) -> list[dict[str, Any]]: ...


def model_of(run: RunResults) -> str:
    """The model the run's config names (cut to 200 characters), ``?`` when it names none."""
    config = run.info.get("config")
    return str(config.get("model", "?"))[:200] if isinstance(config, dict) else "?"


#: The key of ``counts_of`` that is not a status: model errors whose prompt did not fit the
#: model's context (``error_kind`` "context_overflow"), counted apart so a small context
#: window shows as such; they stay in ``model_error`` (and in the score).
CONTEXT_OVERFLOW = "context_overflow"


def counts_of(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many records have each status (every status present, zero or not), and how many of
    the model errors were context overflows (``CONTEXT_OVERFLOW``, a subset of
    ``model_error``, always present). Sum the statuses, not the values: the overflow key is
    not a status."""
    counts = empty_counts()
    for record in records:
        add_count(counts, record)
    return counts


def empty_counts() -> dict[str, int]:
    """``counts_of([])``: a tally to feed records to one at a time (``add_count``)."""
    return {**{status.value: 0 for status in Status}, CONTEXT_OVERFLOW: 0}


def add_count(counts: dict[str, int], record: dict[str, Any]) -> None:
    """Count one record into ``counts`` (from ``empty_counts``), in place: the counts of a log
    read as it streams."""
    status = record["status"]
    counts[status] += 1
    if status == Status.MODEL_ERROR.value and record.get("error_kind") == CONTEXT_OVERFLOW:
        counts[CONTEXT_OVERFLOW] += 1
