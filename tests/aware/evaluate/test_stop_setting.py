"""A run's --stop reaches the awareness task's requests too (its own prompts need none)."""

from __future__ import annotations

from toolbench.aware.evaluate.task import _settings
from toolbench.prompts.builder import PromptConfig


def test_the_runs_stops_reach_the_awareness_requests() -> None:
    assert _settings(PromptConfig(stop=("\n\n", "END"))).stop == ("\n\n", "END")


def test_without_stop_flags_awareness_requests_carry_none() -> None:
    assert _settings(PromptConfig()).stop == ()
