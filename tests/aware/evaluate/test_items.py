"""Demonstrations, feedback scenarios, report groups and native tool names."""

from __future__ import annotations

import json

import pytest

from toolbench.aware.evaluate.demos import DemoPool, family
from toolbench.aware.evaluate.feedback import scenarios_for
from toolbench.aware.evaluate.items import build_items, report_groups
from toolbench.aware.evaluate.render import native_tools, tool_name_map
from toolbench.aware.schema import ApiSpec, Instance, Provenance, Replacement, Turn, Verification
from toolbench.errors import UserError

WEATHER = ApiSpec(
    name="GetWeather",
    description="Weather for a city on a date.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
        "required": ["city", "date"],
    },
)
NEWS = ApiSpec(name="GetNews", description="Headlines of the day.")


def pair(n: int, manipulation: str = "utterance_removal") -> tuple[Instance, Instance]:
    complete = Instance(
        id=f"c{n}",
        source="apibank",
        dialogue=[Turn(role="user", content="Weather in Lisbon on May 14?")],
        apis=[WEATHER, NEWS],
        relevant_apis=["GetWeather"],
        gold_calls=["GetWeather(city='Lisbon', date='May 14')"],
        label="complete",
        provenance=Provenance(original_id=f"o{n}"),
        verification=Verification(status="accepted"),
    )
    if manipulation == "utterance_removal":
        changes = {
            "dialogue": [Turn(role="user", content="Weather on May 14?")],
            "provenance": Provenance(original_id=f"o{n}", removed_text=["in Lisbon"]),
        }
    else:
        other = ApiSpec(name="GetTides", description="Tide times for a harbour.")
        changes = {
            "apis": [other, NEWS],
            "provenance": Provenance(
                original_id=f"o{n}",
                replacements=[
                    Replacement(
                        original="GetWeather", replacement="GetTides", similarity=0.61, rank=1
                    )
                ],
            ),
        }
    incomplete = complete.model_copy(
        update={"id": f"c{n}~{manipulation}", "label": "incomplete", "twin_id": f"c{n}",
                "manipulation": manipulation, **changes}
    )  # fmt: skip
    return complete, incomplete


def test_demonstrations_are_balanced_seeded_and_never_the_family() -> None:
    instances = [i for n in range(6) for i in pair(n)]
    pool = DemoPool(instances, seed=0)
    for item in instances:
        demos = pool.choose(item, 4)
        labels = sorted(d.instance.label for d in demos)
        assert labels == ["complete", "complete", "incomplete", "incomplete"]
        assert not any(family(d.instance) & family(item) for d in demos)
        assert [d.instance.id for d in demos] == [d.instance.id for d in pool.choose(item, 4)]
    with pytest.raises(UserError, match="--shots 12"):
        pool.check(12)
    with pytest.raises(UserError, match="even"):
        pool.check(3)


def test_feedback_scenarios_for_a_removal() -> None:
    complete, incomplete = pair(0)
    failed, hallucinated = scenarios_for(incomplete, complete)
    assert failed.name == "incomplete_failed" and failed.expected == "no"
    # the city is no longer said, so it is sent empty and the API names it missing
    assert failed.call == "GetWeather(city='', date='May 14')"
    assert json.loads(failed.result) == {"error": "missing required argument(s): city"}
    assert hallucinated.call == complete.gold_calls[0] and "success" in hallucinated.result


def test_feedback_scenario_for_a_replacement_names_the_unavailable_api() -> None:
    complete, incomplete = pair(0, "api_replacement")
    (failed,) = scenarios_for(incomplete, complete)
    assert "unknown API 'GetWeather'" in failed.result


def test_items_groups_and_feedback_counts() -> None:
    c0, u0 = pair(0)
    _, r0 = pair(0, "api_replacement")
    c1, u1 = pair(1)
    instances = [c0, u0, r0, c1, u1]
    groups = report_groups(instances)
    assert groups["c0"] == ("api_replacement", "utterance_removal")
    assert groups["c1"] == ("utterance_removal",)
    items = build_items(instances, ["explicit", "feedback", "explain"], [0, 2])
    tasks = [i.task for i in items]
    assert tasks.count("explicit-0shot") == tasks.count("explicit-2shot") == 5
    assert tasks.count("explain") == 3  # incomplete instances only
    feedback = sorted(i.id for i in items if i.task == "feedback")
    # complete_failed once per complete instance, even with two twins
    assert feedback == sorted(
        ["c0#complete_failed", "c1#complete_failed", "c0~utterance_removal#incomplete_failed",
         "c0~utterance_removal#incomplete_hallucinated", "c0~api_replacement#incomplete_failed",
         "c1~utterance_removal#incomplete_failed",
         "c1~utterance_removal#incomplete_hallucinated"]
    )  # fmt: skip


def test_native_tool_names_are_valid_unique_and_map_back() -> None:
    odd = [ApiSpec(name="weather.get now"), ApiSpec(name="weather_get_now"), ApiSpec(name="x" * 80)]
    tools = native_tools(odd)
    names = [t["function"]["name"] for t in tools]  # type: ignore[index]
    assert len(set(names)) == 3 and all(len(n) <= 64 for n in names)
    assert all(n.replace("_", "a").replace("-", "a").isalnum() for n in names)
    assert tool_name_map(odd) == {n: api.name for n, api in zip(names, odd, strict=True)}
