"""Slot and tool removal on our own tasks: exact twins, with what is missing named."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.aware.manipulate.slot_removal import remove_phrase, remove_slots, tidy
from toolbench.aware.manipulate.tool_removal import remove_tools
from toolbench.aware.schema import Instance, read_instances
from toolbench.aware.sources.task_apis import apis_used, curl_endpoint, doc_to_spec
from toolbench.aware.sources.tasks import load_task
from toolbench.types import Doc

TASKS = ("home_search", "booking", "open_weather", "the_cat_api", "google_sheets")


@cache
def _load(task: str) -> tuple[Instance, ...]:
    return tuple(load_task(task))


@pytest.mark.parametrize("task", ["home_search", "booking"])
def test_every_sample_gets_an_exact_slot_twin(task: str) -> None:
    originals = {i.id: i for i in _load(task)}
    result = remove_slots(list(originals.values()), seed=0)
    assert result.skipped == []
    assert len(result.instances) == len(originals)
    for twin in result.instances:
        original = originals[twin.twin_id or ""]
        slots = original.provenance.notes["slots"]
        before, after = original.dialogue[0].content, twin.dialogue[0].content
        assert twin.label == "incomplete" and twin.manipulation == "slot_removal"
        assert twin.verification.status == "accepted" and twin.verification.by == "construction"
        assert twin.provenance.removed_slots, twin.id
        for name in twin.provenance.removed_slots:
            # The words that supplied the argument are gone, and were there before.
            assert slots[name].lower() in before.lower()
            assert slots[name].lower() not in after.lower()
        for span in twin.provenance.removed_text:
            assert span in before
        assert all(name in twin.provenance.missing for name in twin.provenance.removed_slots)
        assert twin.apis == original.apis


def test_slot_removal_takes_only_required_arguments() -> None:
    twins = remove_slots(list(_load("home_search")), seed=0).instances
    assert {tuple(t.provenance.removed_slots) for t in twins} == {("location",)}
    booking = remove_slots(list(_load("booking")), seed=0).instances
    required = {"location", "location_from", "location_to", "checkin_date", "checkout_date"}
    required |= {"departure_date"}
    for twin in booking:
        # A required field is always among what vanished (others may go with it, named).
        assert set(twin.provenance.removed_slots) & required, twin.provenance


def test_repeated_words_are_removed_everywhere_and_every_lost_slot_is_named() -> None:
    slots = {"location_to": "Dallas", "location": "Dallas", "location_from": "El Paso"}
    query = "A bus from El Paso to Dallas on May 3, and a hotel in Dallas for 2 nights."
    new, removed = remove_phrase(query, slots["location_to"])
    assert "dallas" not in new.lower()
    assert removed == ["to Dallas", "in Dallas"]
    assert new == "A bus from El Paso on May 3, and a hotel for 2 nights."


@pytest.mark.parametrize("task", ["home_search", "booking"])
def test_every_sample_gets_an_exact_tool_twin(task: str) -> None:
    originals = {i.id: i for i in _load(task)}
    result = remove_tools(list(originals.values()), seed=0)
    assert result.skipped == [] and len(result.instances) == len(originals)
    for twin in result.instances:
        original = originals[twin.twin_id or ""]
        removed = twin.provenance.removed_apis
        assert removed and twin.verification.status == "accepted"
        offered = {api.name for api in twin.apis}
        assert not offered & set(removed)
        assert len(twin.apis) == len(original.apis) - len(removed)
        for gold in original.gold_calls:
            # Every gold answer needs a removed API: none can be written with what is left.
            assert set(apis_used(gold, original.apis)) & set(removed), (gold, removed)
        assert twin.dialogue == original.dialogue


def test_tool_removal_prefers_the_api_that_serves_this_request() -> None:
    twins = remove_tools(list(_load("home_search")), seed=0).instances
    removed = {name for twin in twins for name in twin.provenance.removed_apis}
    # set_location, set_buy_or_rent and search serve every request; they are only a fallback.
    assert not removed & {"set_location", "set_buy_or_rent", "search"}


def test_curl_tool_removal_takes_every_sibling_endpoint() -> None:
    twins = {t.twin_id: t for t in remove_tools(list(_load("open_weather")), seed=0).instances}
    for original in _load("open_weather"):
        twin = twins[original.id]
        if original.relevant_apis == ["current_weather_city"]:
            assert twin.provenance.removed_apis == [
                "current_weather_city",
                "current_weather_coords",
                "current_weather_zip",
            ]
            break
    else:
        pytest.fail("no current_weather_city sample")


@pytest.mark.parametrize("task", TASKS)
def test_all_tasks_build_and_skips_say_why(task: str) -> None:
    originals = list(_load(task))
    slots = remove_slots(originals, seed=3)
    tools = remove_tools(originals, seed=3)
    assert len(tools.instances) == len(originals)
    assert len(slots.instances) + len(slots.skipped) == len(originals)
    for iid, why in slots.skipped:
        original = next(i for i in originals if i.id == iid)
        # Skipped: no required argument at all ("List my faves"), or every cut would be
        # inexact or read badly; each says which.
        known = ("no required argument", "read badly", "range", "stay in the query", "too little")
        assert any(k in why for k in known), (iid, why, original.dialogue[0].content)


def test_sheets_tool_twins_wait_for_a_person() -> None:
    twins = remove_tools(list(_load("google_sheets")), seed=0).instances
    assert {t.verification.status for t in twins} == {"pending"}


def test_docs_become_json_schema() -> None:
    python_doc = Doc(
        name="set_num_beds",
        text="# How many bedrooms.\nAPI.set_num_beds(value: int, exact: bool = False)",
    )
    spec = doc_to_spec(python_doc)
    assert spec.description == "How many bedrooms."
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "exact": {"type": "boolean", "default": False},
        },
        "required": ["value"],
    }
    curl_doc = Doc(
        name="vote_add",
        text="# Vote on {image_id}.\ncurl -X POST 'https://api.x.com/v1/votes?sub_id={sub_id}' "
        '--data \'{"image_id":"{image_id}"}\'',
    )
    curl = doc_to_spec(curl_doc)
    assert curl.parameters["required"] == ["image_id"]  # the query filter is optional
    assert (
        curl_endpoint("curl -X POST 'https://api.x.com/v1/votes' --data '{}'", [curl]) == "vote_add"
    )
    assert curl_endpoint("curl -X GET 'https://api.x.com/v1/votes'", [curl]) is None


@given(
    st.text(alphabet="abc ,.?", max_size=60),
    st.from_regex(r"[abc]{1,3}", fullmatch=True),
)
def test_remove_phrase_never_leaves_the_phrase(text: str, phrase: str) -> None:
    new, removed = remove_phrase(text, phrase)
    # Whole words only: "b" is not cut out of "abc" (nor "2" out of "2024").
    whole = re.compile(rf"(?<!\w){phrase}(?!\w)")
    assert whole.search(new.lower()) is None
    assert len(removed) >= len(whole.findall(text.lower())) > 0 or not removed
    assert all(phrase in span.lower() for span in removed)
    assert new == tidy(new)


def test_cli_build_is_byte_identical_for_a_seed(
    cli: Callable[..., tuple[int, str, str]], tmp_path: Path
) -> None:
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        code, stdout, _ = cli(
            "aware",
            "build",
            "--source",
            "task:home_search",
            "--source",
            "task:the_cat_api",
            "--manipulation",
            "slot_removal,tool_removal",
            "--seed",
            "7",
            "--out",
            str(out),
        )
        assert code == 0, stdout
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert "skipped" in stdout and "no required argument" in stdout
    dataset = read_instances(tmp_path / "a.jsonl")
    by_id = {i.id: i for i in dataset}
    for instance in dataset:
        if instance.label == "incomplete":
            # Each twin follows its complete instance, which is in the same file.
            assert by_id[instance.twin_id or ""].label == "complete"
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert first["schema_version"] == 1 and first["manipulation"] == "none"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--source", "nope:x"], "unknown kind 'nope'"),
        (["--source", "apibank"], "expected KIND:PATH"),
        (["--source", "apibank:/no/such/file.json"], "does not exist"),
        (["--source", "task:home_serch"], "home_search"),
        (
            ["--source", "task:booking", "--manipulation", "slot_remval"],
            "did you mean 'slot_removal'",
        ),
        (["--source", "task:booking", "--manipulation", "utterance_removal"], "needs --model"),
        (["--source", "task:booking", "--rank", "0"], "argument --rank: '0': must be at least 1"),
    ],
)
def test_cli_build_errors_are_one_line_exit_2(
    cli: Callable[..., tuple[int, str, str]], tmp_path: Path, args: list[str], needle: str
) -> None:
    code, _, err = cli("aware", "build", *args, "--out", str(tmp_path / "x.jsonl"))
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.jsonl").exists()
