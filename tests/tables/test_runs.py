"""What a table reads of a run: status counts and the model name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolbench.tables.runs import RunResults, counts_of, model_of


@dataclass
class Run:
    label: str = "run"
    info: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)


def test_counts_name_every_status_even_when_none_has_it() -> None:
    records = [{"status": "scored"}, {"status": "scored"}, {"status": "infra_error"}]
    assert counts_of(records) == {"scored": 2, "model_error": 0, "infra_error": 1}
    assert counts_of([]) == {"scored": 0, "model_error": 0, "infra_error": 0}


def test_model_is_the_configs_cut_to_200_characters_or_a_question_mark() -> None:
    run: RunResults = Run(info={"config": {"model": "m" * 300}})
    assert model_of(run) == "m" * 200
    assert model_of(Run(info={"config": "not a mapping"})) == "?"
    assert model_of(Run(info={"config": {}})) == "?"
    assert model_of(Run()) == "?"
