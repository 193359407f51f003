"""The baseline model: its score band on our generated test sets, determinism, that it never
runs code, its program analysis, and the entity extractor it relies on.

Programs are run directly on the simulators here (tests are trusted code) to score predictions
the way the program tasks do: the final states must be equal for a success.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.data.examples import format_example
from toolbench.models.base import Model, ModelOutputError
from toolbench.models.reference.baseline import BaselineModel
from toolbench.models.reference.entities import entity_features, extract_entities, parse_number
from toolbench.models.reference.programs import parse_literals, split_blocks, template_key
from toolbench.sandbox.world import World
from toolbench.tasks.booking import docs as booking_docs
from toolbench.tasks.booking import generator as booking_gen
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search import docs as home_docs
from toolbench.tasks.home_search import generator as home_gen
from toolbench.tasks.home_search.world import make_world as home_world
from toolbench.types import Doc, GenerationRequest, Sample, TaskContext

TASKS: dict[str, tuple[Any, Any, Callable[[], World]]] = {
    "home_search": (home_gen, home_docs, home_world),
    "booking": (booking_gen, booking_docs, booking_world),
}


def context(docs: Any) -> TaskContext:
    return TaskContext(
        functions=tuple(Doc(name, text) for name, text in docs.FUNCTIONS.items()),
        examples=tuple(
            Doc(f"{i}.txt", format_example(q, p)) for i, (q, p) in enumerate(docs.EXAMPLES)
        ),
    )


def request(query: str, ctx: TaskContext) -> GenerationRequest:
    return GenerationRequest(
        prompt="(unused)", sample=Sample(id="x", task="t", query=query, labels=()), context=ctx
    )


def run(world: Callable[[], World], program: str) -> dict[str, Any] | None:
    """Final state, or None when the program crashes (a ToolError, a bad name, ...)."""
    w = world()
    try:
        exec(compile(program, "<test>", "exec"), dict(w.namespace))
    except Exception:
        return None
    state = w.snapshot()
    return state if isinstance(state, dict) else None


def predict_all(model: BaselineModel, ctx: TaskContext, queries: list[str]) -> list[str]:
    async def go() -> list[str]:
        return [(await model.generate(request(q, ctx))).text for q in queries]

    return asyncio.run(go())


@pytest.fixture(scope="module")
def scores() -> dict[str, tuple[float, float]]:
    """Success rate and mean F1 of the baseline per task on the default test set (seed 0)."""
    out = {}
    for task, (gen, docs, world) in TASKS.items():
        records = gen.generate("test", gen.DEFAULT_TEST_SIZE, gen.DEFAULT_SEED)
        preds = predict_all(BaselineModel(), context(docs), [r["prompt"] for r in records])
        successes, f1s = [], []
        for record, pred in zip(records, preds, strict=True):
            gold = run(world, record["completion"][0])
            assert gold is not None
            state = run(world, pred)
            if state is None:
                successes.append(False)
                f1s.append(0.0)
                continue
            same = sum(1 for k, v in state.items() if gold.get(k, object()) == v)
            p, r = same / max(1, len(state)), same / len(gold)
            f1s.append(2 * p * r / (p + r) if p + r else 0.0)
            successes.append(state == gold)
        out[task] = (sum(successes) / len(records), sum(f1s) / len(records))
    return out


@pytest.mark.parametrize("task", sorted(TASKS))
def test_success_is_between_nothing_and_the_oracle(
    task: str, scores: dict[str, tuple[float, float]], capsys: pytest.CaptureFixture[str]
) -> None:
    success, f1 = scores[task]
    with capsys.disabled():
        print(f"\n[baseline] {task}: success {success:.3f}, F1 {f1:.3f}")
    assert 0.2 <= success <= 0.9
    assert f1 >= success


def test_oracle_scores_full_marks_with_this_scoring() -> None:
    for gen, _, world in TASKS.values():
        for record in gen.generate("test", 20, 0):
            gold = run(world, record["completion"][0])
            assert gold is not None and run(world, record["completion"][0]) == gold


def test_model_protocol_and_errors() -> None:
    model = BaselineModel()
    assert isinstance(model, Model)
    assert model.name == "baseline" and model.cacheable is False
    with pytest.raises(ModelOutputError):
        asyncio.run(model.generate(GenerationRequest(prompt="x")))
    empty = TaskContext(functions=(), examples=())
    with pytest.raises(ModelOutputError):
        asyncio.run(model.generate(request("find a condo", empty)))
    asyncio.run(model.aclose())


@pytest.mark.parametrize("task", sorted(TASKS))
def test_deterministic_across_instances(task: str) -> None:
    gen, docs, _ = TASKS[task]
    queries = [r["prompt"] for r in gen.generate("train", 40, 5)]
    first = predict_all(BaselineModel(), context(docs), queries)
    model = BaselineModel()
    assert predict_all(model, context(docs), queries) == first
    assert predict_all(model, context(docs), queries[::-1]) == first[::-1]  # no hidden state


_SCRIPT = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from test_baseline import TASKS, context, predict_all
from toolbench.models.reference.baseline import BaselineModel
out = {{}}
for task, (gen, docs, _) in TASKS.items():
    queries = [r["prompt"] for r in gen.generate("test", 30, 0)]
    out[task] = predict_all(BaselineModel(), context(docs), queries)
print(json.dumps(out))
"""


def test_deterministic_across_hash_seeds() -> None:
    """Set and dict orders must not leak into the output (string hashing is randomised)."""
    script = _SCRIPT.format(tests=str(Path(__file__).parent))
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]


def test_never_runs_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program = f"import os\nos.system('touch {marker}')\nAPI.search()"
    ctx = TaskContext(
        functions=(),
        examples=(Doc("0.txt", format_example("find 2 houses in Boston", program)),),
    )
    text = predict_all(BaselineModel(), ctx, ["find 3 houses in Denver"])[0]
    assert "os.system" in text and not marker.exists()
    for module in ("baseline.py", "learner.py", "programs.py", "entities.py"):
        source = (Path(__file__).parents[3] / "src/toolbench/models/reference" / module).read_text()
        assert not re.search(r"(?<![.\w])(exec|eval|compile)\(|subprocess|__import__", source)


def test_generic_over_url_programs() -> None:
    """Nothing is specific to the Python tasks: query values in URLs are re-filled too."""
    base = "curl -X GET 'https://api.example.com/v1/{}?{}&key={{API_KEY}}'"
    demos = [
        ("Weather in London now", base.format("weather", "q=London")),
        ("Weather in New York in metric units", base.format("weather", "q=New+York&units=metric")),
        ("Air quality at latitude 50 and longitude 30", base.format("air", "lat=50&lon=30")),
    ]
    docs = (Doc("weather", "# Current weather; units are 'metric' or 'imperial'.\ncurl ..."),)
    ctx = TaskContext(
        functions=docs,
        examples=tuple(Doc(f"{i}", format_example(q, p)) for i, (q, p) in enumerate(demos)),
    )
    got = predict_all(
        BaselineModel(),
        ctx,
        ["Weather in San Diego in imperial units", "Air quality at latitude 12 and longitude 77"],
    )
    assert got[0] == base.format("weather", "q=San+Diego&units=imperial")
    assert got[1] == base.format("air", "lat=12&lon=77")


def test_program_analysis() -> None:
    block = "checkin_date = Date(9, 29, 2023)\nAPI.set_checkin_date(checkin_date)"
    program = f'API.select_booking_type("hotels")\n{block}\nAPI.search()'
    assert split_blocks(program) == ['API.select_booking_type("hotels")', block, "API.search()"]
    (lit,) = parse_literals(block)
    assert lit.kind == "date" and lit.value == (9, 29, 2023)
    assert template_key(block, [lit]).startswith("checkin_date = Date(<D>)")
    lits = parse_literals('API.select_home_type(["Condo", "Co-op"])\nAPI.set_num_baths(2.5)')
    assert [(x.kind, x.value) for x in lits] == [("list", ["Condo", "Co-op"]), ("num", 2.5)]
    (param,) = parse_literals("curl 'https://x.org/a?q=New+York'")
    assert (param.kind, param.value) == ("param", "New York")


# -- entity extraction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("$1,250,000", 1_250_000),
        ("1.25M", 1_250_000),
        ("$1.25M", 1_250_000),
        ("$850k", 850_000),
        ("850K", 850_000),
        ("$1.2 million", 1_200_000),
        ("4,500 dollars", 4_500),
        ("2.5", 2.5),
        ("six", 6),
        ("3rd", 3),
        ("twelfth", 12),
        ("no number", None),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "Sept 29 2025",
        "Sep 29, 2025",
        "September 29, 2025",
        "2025-09-29",
        "09/29/2025",
        "9/29/2025",
        "2025/09/29",
        "the 29th of September, 2025",
        "September 29th, 2025",
        "29 September 2025",
        "Monday, September 29, 2025",
        "monday, september 29, 2025",
    ],
)
def test_dates_in_every_supported_format(text: str) -> None:
    (entity,) = extract_entities(f"We leave on {text} in the morning")
    assert (entity.kind, entity.value) == ("date", (9, 29, 2025))
    assert entity.text == text


def test_date_without_year_borrows_it() -> None:
    dates = [e.value for e in extract_entities("from March 3 to March 9, 2025") if e.kind == "date"]
    assert dates == [(3, 3, 2025), (3, 9, 2025)]


def test_numbers_with_cues_and_money() -> None:
    found = extract_entities("a 3 bed 2.5 bath home under $850k, at least 1,200 sq ft, 12th floor")
    assert [(e.value, e.money, e.ordinal) for e in found] == [
        (3, False, False),
        (2.5, False, False),
        (850_000, True, False),
        (1200, False, False),
        (12, False, True),
    ]
    assert [e.value for e in extract_entities("3br, 1.5-bath, two garages")] == [3, 1.5, 2]


def test_places() -> None:
    text = "Find flights from St. Louis to Salt Lake City, then JFK to Winston-Salem on Monday."
    assert [e.value for e in extract_entities(text) if e.kind == "place"] == [
        "St. Louis",
        "Salt Lake City",
        "JFK",
        "Winston-Salem",
    ]
    # Request words at a sentence start and the vocabulary of demonstrations are not places.
    assert not extract_entities("Hotel please. Luxury room.", {"luxury", "hotel"})
    # Lower-cased text: unknown words after a learned cue, and known names anywhere.
    lowered = extract_entities(
        "hotel in st. louis from monday, or near denver", {"hotel"}, (), {"in"}
    )
    assert [e.value for e in lowered if e.kind == "place"] == ["St. Louis"]
    known = extract_entities("two nights near denver", (), ["Denver"])
    assert [(e.value, e.text) for e in known if e.kind == "place"] == [("Denver", "denver")]


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=200),
    st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=6), max_size=5),
    st.lists(st.text(min_size=1, max_size=12), max_size=3),
)
def test_extractor_never_raises(text: str, known: list[str], places: list[str]) -> None:
    entities = extract_entities(text, set(known), places, set(known))
    spans = [(e.start, e.end) for e in entities]
    assert spans == sorted(spans)
    for e in entities:
        assert 0 <= e.start < e.end <= len(text)
        assert text[e.start : e.end] == e.text
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" 0123456789$,.kKMmilonthsdrSeptJan/-", max_size=40))
def test_extractor_never_raises_on_number_soup(text: str) -> None:
    for e in extract_entities(text):
        assert text[e.start : e.end] == e.text


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=120))
def test_model_never_raises_on_any_query(query: str) -> None:
    text = predict_all(_MODEL, context(booking_docs), [query])[0]
    assert isinstance(text, str)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=60), st.text(min_size=1, max_size=80)), max_size=4))
def test_learning_never_raises_on_odd_demonstrations(demos: list[tuple[str, str]]) -> None:
    ctx = TaskContext(
        functions=(Doc("f", "# pick 'a' or 'b'\nAPI.f(x)"),),
        examples=tuple(Doc(str(i), format_example(q, p)) for i, (q, p) in enumerate(demos)),
    )
    model = BaselineModel()
    try:
        text = predict_all(model, ctx, ["Book 2 rooms in Paris on 2025-01-02 for $300"])[0]
    except ModelOutputError:
        return  # no usable demonstration at all
    assert isinstance(text, str)


_MODEL = BaselineModel()


# -- program shape: one consistent program per choice -----------------------------------------


def _learner(docs: Any) -> Any:
    ctx = context(docs)
    return BaselineModel().predictor(ctx.examples, ctx.functions).learner


def test_the_shape_deciding_choice_is_learned_where_there_is_one() -> None:
    mode = _learner(booking_docs).mode
    assert mode is not None and mode.key == "API.select_booking_type(<S>)"
    assert sorted(mode.demos) == ["both", "hotels", "trip tickets"]
    origin = "location_from = Loc(<S>)\nAPI.set_origin(location_from)"
    checkin = "checkin_date = Date(<D>)\nAPI.set_checkin_date(checkin_date)"
    assert origin not in mode.compatible["hotels"] and checkin in mode.required["hotels"]
    assert checkin not in mode.compatible["trip tickets"] and origin in mode.required["both"]
    # buy/rent does not decide which criteria may follow: nothing to enforce for home_search.
    assert _learner(home_docs).mode is None


_HOTEL_ONLY = ("set_origin", "set_destination", "select_transportation", "set_departure_date")
_TICKETS_ONLY = ("set_hotel_location", "set_checkin_date", "set_checkout_date", "set_num_rooms")


def test_booking_programs_keep_to_one_shape_and_do_not_crash() -> None:
    """On queries the demonstrations did not show (train split, another seed), a program
    never mixes the calls of two booking types, and nearly all run to the end."""
    queries = [r["prompt"] for r in booking_gen.generate("train", 80, 11)]
    predictions = predict_all(BaselineModel(), context(booking_docs), queries)
    crashes = 0
    for program in predictions:
        kind = re.match(r'API\.select_booking_type\("([^"]+)"\)', program)
        assert kind is not None, program
        if kind.group(1) == "hotels":
            assert not any(f"API.{name}(" in program for name in _HOTEL_ONLY), program
        if kind.group(1) == "trip tickets":
            assert not any(f"API.{name}(" in program for name in _TICKETS_ONLY), program
        crashes += run(booking_world, program) is None
    assert crashes <= 0.05 * len(queries)


def _demo_context(demos: list[tuple[str, str]]) -> TaskContext:
    docs = (Doc("set_num_rooms", "# Rooms.\nAPI.set_num_rooms(n)"),)
    return TaskContext(
        functions=docs,
        examples=tuple(Doc(f"{i}", format_example(q, p)) for i, (q, p) in enumerate(demos)),
    )


def test_equal_values_in_a_demonstration_teach_the_cues_of_the_right_call() -> None:
    """'Book 2 rooms for 2 adults' with the adults call written first: which 2 is which is
    decided by the cues the unambiguous demonstrations teach, not by the order of the calls
    (taking the first 2 for the adults would teach that 'book' and 'rooms' mean adults)."""
    rooms, adults = "API.set_num_rooms({})", "API.set_num_adults({})"
    ctx = _demo_context(
        [
            ("Book 2 rooms for 2 adults", f"{adults.format(2)}\n{rooms.format(2)}"),
            ("Book 2 rooms for 2 adults", f"{adults.format(2)}\n{rooms.format(2)}"),
            ("Need 3 rooms please", rooms.format(3)),
            ("Travelling with 4 adults", adults.format(4)),
        ]
    )
    (text,) = predict_all(BaselineModel(), ctx, ["Book 5 rooms for 6 adults"])
    assert text == f"{adults.format(6)}\n{rooms.format(5)}"


def test_a_named_choice_between_a_count_and_its_noun() -> None:
    learner = _learner(booking_docs)
    query = "Book 2 Queen Bed rooms in Boston from May 3, 2025 to May 6, 2025."
    entities = learner.entities(query)
    assert [e.value for e in entities if e.kind == "place"] == ["Boston"]  # not 'Queen Bed'
    feats = entity_features(query, entities, learner.choice_phrases)[0]
    assert "R1:room" in feats and "R1:queen" not in feats
    (text,) = predict_all(BaselineModel(), context(booking_docs), [query])
    assert "API.set_num_rooms(2)" in text and "API.set_num_adults" not in text


def test_a_range_written_with_to_fills_both_ends() -> None:
    """Our demonstrations write room-rate ranges 'between $150 and $250'; '120 to 200 USD per
    night' names the high end by its cues only, and the low end is found as its pair."""
    query = (
        "Book 1 Double rooms in Santa Fe from April 11, 2023 to April 14, 2023, within the "
        "price range of 120 to 200 USD per night."
    )
    (text,) = predict_all(BaselineModel(), context(booking_docs), [query])
    assert "API.set_min_room_price(120)" in text and "API.set_max_room_price(200)" in text
    assert "API.set_num_adults" not in text
    # Two values side by side with a noun between them are not a range.
    home = predict_all(BaselineModel(), context(home_docs), ["a 2br 4.5-bath condo in Denver"])
    assert "API.set_num_beds(2)" in home[0] and "API.set_num_baths(4.5)" in home[0]


def test_a_count_followed_by_another_slots_noun_is_left_out() -> None:
    """'for 3 night(s)' reads like 'for 3 adults', but the children count's numbers were
    always followed by a word for children, and 'night' is a cue of the room-rate slots."""
    query = (
        "Hi! I'm looking to book some bus tickets from Boise to Spokane for 3 adult(s). Can you "
        "also help me find available options for 1 Double room(s) in Spokane for 3 night(s), "
        "from 2022/12/02 to 2022/12/05?"
    )
    (text,) = predict_all(BaselineModel(), context(booking_docs), [query])
    assert "API.set_num_adults(3)" in text and "API.set_num_rooms(1)" in text
    assert "API.set_num_children" not in text
    # A room type's first word between a count and its noun is passed over too.
    (text,) = predict_all(BaselineModel(), context(booking_docs), ["a hotel, 3 king rooms"])
    assert "API.set_num_rooms(3)" in text
