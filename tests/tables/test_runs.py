"""What a table reads of a run: status counts (with context overflows) and the model name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolbench.tables.runs import CONTEXT_OVERFLOW, RunResults, counts_of, model_of
from toolbench.types import Status


@dataclass
class Run:
    label: str = "run"
    info: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)


def test_counts_name_every_status_even_when_none_has_it() -> None:
    records = [{"status": "scored"}, {"status": "scored"}, {"status": "infra_error"}]
    assert counts_of(records) == {
        "scored": 2,
        "model_error": 0,
        "infra_error": 1,
        "context_overflow": 0,
    }
    assert counts_of([]) == {"scored": 0, "model_error": 0, "infra_error": 0, "context_overflow": 0}


def test_context_overflows_are_counted_among_the_model_errors() -> None:
    overflow = {"status": "model_error", "error_kind": "context_overflow"}
    records = [
        overflow,
        overflow,
        {"status": "model_error"},  # a crash: a model error, not an overflow
        {"status": "model_error", "error_kind": "something else"},
        {"status": "scored"},
        # Only model errors are overflows, whatever another status's record says.
        {"status": "scored", "error_kind": "context_overflow"},
        {"status": "infra_error", "error_kind": "context_overflow"},
    ]
    counts = counts_of(records)
    assert counts == {"scored": 2, "model_error": 4, "infra_error": 1, "context_overflow": 2}
    # The statuses still add up to the records: the overflow key is not one of them.
    assert sum(counts[s.value] for s in Status) == len(records)
    assert counts[CONTEXT_OVERFLOW] <= counts["model_error"]


def test_model_is_the_configs_cut_to_200_characters_or_a_question_mark() -> None:
    run: RunResults = Run(info={"config": {"model": "m" * 300}})
    assert model_of(run) == "m" * 200
    assert model_of(Run(info={"config": "not a mapping"})) == "?"
    assert model_of(Run(info={"config": {}})) == "?"
    assert model_of(Run()) == "?"
