"""The seeded data generators and the hand-written docs/demonstrations of home_search and booking.

Gold programs are run directly on the simulators (tests are trusted code), so every record is
checked to be executable, and every slot is checked to be a substring of its query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from toolbench.kinds.pools import shape
from toolbench.sandbox.world import World
from toolbench.tasks.booking import docs as booking_docs
from toolbench.tasks.booking import generator as booking_gen
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search import docs as home_docs
from toolbench.tasks.home_search import generator as home_gen
from toolbench.tasks.home_search.world import make_world as home_world

# Keys that search() fills in by itself, with a function telling the default from the state.
DEFAULTS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "home_search": {"min_price": lambda s: 0, "min_square_feet": lambda s: 0},
    "booking": {
        "min_price_ticket": lambda s: 0,
        "min_price_room": lambda s: 0,
        "num_rooms": lambda s: 1,
        "departure_date": lambda s: s.get("checkin_date"),
        "return_date": lambda s: s.get("checkout_date"),
    },
}
TASKS = [
    pytest.param("home_search", home_gen, home_docs, home_world, id="home_search"),
    pytest.param("booking", booking_gen, booking_docs, booking_world, id="booking"),
]


def run(world_factory: Callable[[], World], program: str) -> dict[str, Any]:
    world = world_factory()
    exec(compile(program, "<test>", "exec"), dict(world.namespace))
    state = world.snapshot()
    assert isinstance(state, dict)
    return state


@pytest.fixture(scope="module")
def test_sets() -> dict[str, list[dict[str, Any]]]:
    return {
        "home_search": home_gen.generate("test", home_gen.DEFAULT_TEST_SIZE, 0),
        "booking": booking_gen.generate("test", booking_gen.DEFAULT_TEST_SIZE, 0),
    }


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_deterministic_and_sized(task: str, gen: ModuleType, docs: Any, world: Any) -> None:
    first = json.dumps(gen.generate("test", 40, 3))
    assert first == json.dumps(gen.generate("test", 40, 3))
    assert first != json.dumps(gen.generate("test", 40, 4))
    for n in (0, 1, 17):
        assert len(gen.generate("train", n, 0)) == n
    assert gen.DEFAULT_SEED == 0
    assert {"home_search": 100, "booking": 120}[task] == gen.DEFAULT_TEST_SIZE
    with pytest.raises(ValueError):
        gen.generate("dev", 1, 0)


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_records_run_and_slots_are_substrings(
    task: str, gen: ModuleType, docs: Any, world: Any
) -> None:
    records = gen.generate("test", gen.DEFAULT_TEST_SIZE, 0) + gen.generate("train", 300, 0)
    for record in records:
        assert set(record) == {"prompt", "completion", "slots"}
        query, (program,), slots = record["prompt"], record["completion"], record["slots"]
        state = run(world, program)
        assert set(slots) <= set(state), (query, program)
        for key, text in slots.items():
            assert text and text in query, (key, text, query)
            value = state[key]
            if isinstance(value, str) and key.startswith("location"):
                assert value.lower() in text.lower(), (key, value, query)
        for key in set(state) - set(slots):
            assert key in DEFAULTS[task], (key, query, program)
            assert state[key] == DEFAULTS[task][key](state), (key, query, program)
        json.dumps(record)


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_train_and_test_are_disjoint(task: str, gen: ModuleType, docs: Any, world: Any) -> None:
    test = {r["prompt"].lower() for r in gen.generate("test", gen.DEFAULT_TEST_SIZE, 0)}
    train = [r["prompt"].lower() for r in gen.generate("train", 500, 0)]
    assert not test & set(train)
    assert len(set(train)) == len(train)


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_variety(
    task: str, gen: ModuleType, docs: Any, world: Any, test_sets: dict[str, list[dict[str, Any]]]
) -> None:
    records = test_sets[task]
    shapes = {shape(r["prompt"]) for r in records}
    assert len(shapes) >= 0.8 * len(records)
    openers = {" ".join(r["prompt"].lower().split()[:2]) for r in records}
    assert len(openers) >= 20
    sizes = {len(r["slots"]) for r in records}
    assert len(sizes) >= 5  # from a couple of criteria to many
    # Numbers and dates are written in several styles.
    text = " ".join(r["prompt"] for r in records)
    styles = {
        "home_search": [
            r"\$\d{1,3}(,\d{3})+", r"\b\d+(\.\d+)?[kKM]\b", r"\b\d{4,}\b", r"\bthe \w+ floor"
        ],
        "booking": [
            r"\b\d{4}-\d\d-\d\d\b", r"\b\d\d?/\d\d?/\d{4}\b", r"\b\d{4}/\d\d/\d\d\b",
            r"the \d+(st|nd|rd|th) of", r"[A-Z][a-z]+ \d\d?,? \d{4}",
        ],
    }[task]  # fmt: skip
    for pattern in styles:
        assert re.search(pattern, text), pattern


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_every_function_is_used_in_gold_and_demos(
    task: str, gen: ModuleType, docs: Any, world: Any, test_sets: dict[str, list[dict[str, Any]]]
) -> None:
    gold = "\n".join(r["completion"][0] for r in test_sets[task])
    demos = "\n".join(program for _, program in docs.EXAMPLES)
    for name in docs.FUNCTIONS:
        assert re.search(rf"\b{name}\(", gold), name
        assert re.search(rf"\b{name}\(", demos), name


def test_choice_values_are_all_covered(test_sets: dict[str, list[dict[str, Any]]]) -> None:
    home = "\n".join(r["completion"][0] for r in test_sets["home_search"])
    for word in ('"buy"', '"rent"', "Multi-family", "Co-op", "Mobile", "Land", "Apartment"):
        assert word in home
    booking = "\n".join(r["completion"][0] for r in test_sets["booking"])
    values = ["hotels", "trip tickets", "both", "flight", "train", "bus", "cruise"]
    for word in [*values, "King Bed", "Queen Bed", "Double", "Luxury"]:
        assert f'"{word}"' in booking


@pytest.mark.parametrize(("task", "gen", "docs", "world"), TASKS)
def test_docs_shape_and_demonstrations_run(
    task: str, gen: ModuleType, docs: Any, world: Any
) -> None:
    api = world().namespace["API"]
    public = {n for n in dir(api) if not n.startswith("_") and callable(getattr(api, n))}
    extra = {"Loc", "Date"} if task == "booking" else set()
    assert set(docs.FUNCTIONS) == public - {"clear"} | extra
    for name, text in docs.FUNCTIONS.items():
        description, signature = text.split("\n")
        assert description.startswith("# ") and len(description) > 20
        assert re.match(rf"^(API\.)?{name}\(", signature), signature
    assert len(docs.EXAMPLES) >= 12
    queries = [query for query, _ in docs.EXAMPLES]
    assert len(set(queries)) == len(queries)
    for query, program in docs.EXAMPLES:
        state = run(world, program)
        assert state and "\n" not in query
        assert program.rstrip().endswith("API.search()")


def test_demonstrations_are_not_in_test_data(test_sets: dict[str, list[dict[str, Any]]]) -> None:
    for task, docs in (("home_search", home_docs), ("booking", booking_docs)):
        prompts = {r["prompt"] for r in test_sets[task]}
        assert not prompts & {query for query, _ in docs.EXAMPLES}
