"""Pre-verification of API replacements: each check turns down the copies an audit of real
twins found, with its reason, and the selection takes the next-ranked candidate that passes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from toolbench.aware.manipulate.api_replacement import ReplacementOptions, replace_relevant_apis
from toolbench.aware.manipulate.replacement_checks import (
    CheckOptions,
    family_words,
    rejection,
)
from toolbench.aware.schema import ApiSpec, Provenance, Turn, complete_instance

RUN = "Run source code in a sandbox and return its output."


def api(name: str, description: str = "", tool: str = "") -> ApiSpec:
    return ApiSpec(name=name, description=description, origin={"tool_name": tool} if tool else {})


@pytest.mark.parametrize(
    ("original", "candidate", "similarity", "check"),
    [
        # a sibling tool's copy with the very same description
        (
            api("submission", RUN, "Judge0 CE"),
            api("submit", RUN, "Judge0 Extra CE"),
            0.98,
            "tool_family",
        ),
        (
            api("search", "Homes for sale.", "Realtor API"),
            api("list", "Listings.", "Realtor Data API"),
            0.7,
            "tool_family",
        ),
        (
            api("get", "A demo call.", "Demo Project"),
            api("get2", "Another.", "Demo Project_v2"),
            0.6,
            "tool_family",
        ),
        (
            api("5 Day Forecast", "Forecast.", "SkyCast"),
            api("Hourly", "Hours.", "SkyCast"),
            0.5,
            "same_tool",
        ),
        (
            api("validate_email", "Checks an address."),
            api("ValidateEmail", "Another checker."),
            0.8,
            "near_identical_name",
        ),
        (
            api("GUIDs", "Generate v4 UUIDs, several at once."),
            api("uuid_tool", "Generate v4 UUIDs, several at once!"),
            0.7,
            "near_identical_description",
        ),
        (
            api("ToolSearcher", "Find a tool."),
            api("SearchEngine", "Search the web."),
            0.93,
            "similarity_ceiling",
        ),
    ],
)
def test_each_check_turns_down_its_copy(
    original: ApiSpec, candidate: ApiSpec, similarity: float, check: str
) -> None:
    reason = rejection(original, candidate, similarity, CheckOptions())
    assert reason is not None and reason.startswith(check + ":"), reason


def test_genuinely_different_apis_pass() -> None:
    weather = api("GetWeather", "Current weather for a city.", "SkyCast")
    tides = api("GetTides", "Tide times for a harbour.", "Harbour Master")
    assert rejection(weather, tides, 0.61, CheckOptions()) is None
    assert rejection(weather, tides, 0.95, CheckOptions(ceiling=None)) is None
    assert rejection(weather, tides, 0.95, CheckOptions(enabled=False)) is None


def test_family_words_drop_versions_and_filler() -> None:
    assert family_words("Demo Project_v2") == family_words("Demo Project") == {"demo", "project"}
    assert family_words("Realtor Data API") == {"realtor"}
    assert family_words("Judge0 Extra CE") == family_words("Judge0 CE")
    assert family_words("Weather") != family_words("Tides")


class _Vectors:
    """A stand-in encoder: each text's vector is given by the API name before ':'."""

    identity = "fake@0"

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts: Sequence[str], progress: object = None) -> np.ndarray:
        rows = np.array([self.vectors[t.split(":")[0]] for t in texts], dtype=float)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_rejected_first_choice_gives_way_to_the_next_ranked_with_the_reason_recorded() -> None:
    original = api("Compile", RUN, "Judge0 CE")
    copy = api("CompileExtra", RUN, "Judge0 Extra CE")  # most similar: a sibling copy
    other = api("Translate", "Translate text between languages.", "Lingo")
    far = api("Weather", "Weather for a city.", "SkyCast")
    instance = complete_instance(
        id="i1",
        source="test",
        dialogue=[Turn(role="user", content="Run my Python script.")],
        apis=[original],
        relevant_apis=["Compile"],
        gold_calls=["Compile()"],
        provenance=Provenance(original_id="o1"),
    )
    encoder = _Vectors(
        {"Compile": [1, 0, 0], "CompileExtra": [0.99, 0.1, 0], "Translate": [0.6, 0.8, 0],
         "Weather": [0, 0, 1]}
    )  # fmt: skip
    result = replace_relevant_apis(
        [instance], [original, copy, other, far], encoder, ReplacementOptions(seed=0)
    )
    [twin] = result.instances
    [swap] = twin.provenance.replacements
    assert swap.replacement == "Translate" and swap.rank == 1
    [turned_down] = twin.provenance.notes["pre_verification"]
    assert turned_down["candidate"] == "CompileExtra"
    assert turned_down["why"].startswith("tool_family:")
    assert result.checks.candidates == {"tool_family": 1}
    assert result.checks.twins == {"tool_family": 1}


@pytest.mark.parametrize(
    ("reply", "serves"),
    [
        ("VERDICT: yes\nuuid_tool generates GUIDs.", True),
        ("**Verdict:** No. None of them converts currency.", False),
        ("Let me think.\nverdict = no\nreasons", False),
        ("I am not sure what you mean.", None),
        ("(\n" * 50_000, None),
        ("x" * 100_000 + "\nVERDICT: yes", None),  # past the part that is read
    ],
)
def test_verdicts_are_read_from_a_bounded_head(reply: str, serves: bool | None) -> None:
    from toolbench.aware.manipulate.replacement_judge import REASONING_CHARS, parse_verdict

    verdict = parse_verdict(reply)
    assert verdict.serves is serves
    assert len(verdict.reasoning) <= REASONING_CHARS
