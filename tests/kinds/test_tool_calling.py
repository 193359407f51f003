"""Tools mode's parts on their own: schemas derived from the API classes and docs, tool calls
turned into program lines (never an exception, never model text as code), golds turned into
tool calls, and cache keys that see tool calls and tool messages."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.kinds.tool_calling import BadCall, ToolSet, call_line, gold_calls
from toolbench.models.cache import cache_key
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.booking import TASK as BOOKING_TASK
from toolbench.tasks.booking import docs as booking_docs
from toolbench.tasks.booking.tools import TOOLSET as BOOKING
from toolbench.tasks.home_search import TASK as HOME_TASK
from toolbench.tasks.home_search import docs as home_docs
from toolbench.tasks.home_search.tools import TOOLSET as HOME
from toolbench.types import GenerationRequest


def _function(toolset: ToolSet, name: str) -> dict[str, Any]:
    tool = next(t for t in toolset.openai() if t["function"]["name"] == name)
    function: dict[str, Any] = tool["function"]
    return function


# -- schemas -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toolset", "functions"), [(HOME, home_docs.FUNCTIONS), (BOOKING, booking_docs.FUNCTIONS)]
)
def test_every_documented_method_is_a_tool_with_the_docs_parameter_names(
    toolset: ToolSet, functions: dict[str, str]
) -> None:
    methods = [name for name in functions if name not in ("Loc", "Date")]
    assert toolset.names() == methods
    for name in methods:
        signature = functions[name].splitlines()[-1]
        names = re.findall(r"(\w+):", signature)
        function = _function(toolset, name)
        parameters = function["parameters"]
        assert list(parameters["properties"]) == names
        assert parameters["required"] == names
        assert parameters["additionalProperties"] is False
        assert function["description"] and "API." not in function["description"]


def test_home_search_schema_types_and_allowed_values() -> None:
    buy_or_rent = _function(HOME, "set_buy_or_rent")["parameters"]["properties"]["value"]
    assert buy_or_rent == {"type": "string", "enum": ["buy", "rent"]}
    home_types = _function(HOME, "select_home_type")["parameters"]["properties"]["home_types"]
    assert home_types["type"] == "array"
    assert set(home_types["items"]["enum"]) == {
        "House", "Townhouse", "Condo", "Land", "Multi-family", "Mobile", "Co-op", "Apartment"
    }  # fmt: skip
    baths = _function(HOME, "set_num_baths")["parameters"]["properties"]["value"]
    assert baths == {"type": "number"}
    assert _function(HOME, "set_num_beds")["parameters"]["properties"]["value"] == {
        "type": "integer"
    }
    assert _function(HOME, "search")["parameters"]["properties"] == {}


def test_booking_schema_represents_loc_and_date_as_json() -> None:
    origin = _function(BOOKING, "set_origin")["parameters"]["properties"]["value"]
    assert origin["type"] == "string"
    date = _function(BOOKING, "set_checkin_date")["parameters"]["properties"]["value"]
    assert date["type"] == "object" and date["required"] == ["month", "day", "year"]
    assert all(date["properties"][f] == {"type": "integer"} for f in ("month", "day", "year"))
    kinds = _function(BOOKING, "select_booking_type")["parameters"]["properties"]
    assert kinds["booking_type"]["enum"] == ["hotels", "trip tickets", "both"]
    rooms = _function(BOOKING, "select_room_type")["parameters"]["properties"]["value"]
    assert rooms["enum"] == ["King Bed", "Queen Bed", "Double", "Luxury"]
    json.dumps(BOOKING.openai())  # plain JSON data, as sent to a server


# -- tool calls -> program lines -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("toolset", "name", "arguments", "line"),
    [
        (HOME, "set_location", '{"value": "Boise"}', "API.set_location('Boise')"),
        (HOME, "set_num_beds", '{"value": 3.0}', "API.set_num_beds(3)"),
        (HOME, "set_num_baths", '{"value": 2.5}', "API.set_num_baths(2.5)"),
        (HOME, "select_home_type", '{"home_types": ["Condo"]}', "API.select_home_type(['Condo'])"),
        (HOME, "search", "", "API.search()"),
        (HOME, "search", "{}", "API.search()"),
        (HOME, "set_location", {"value": "It's"}, 'API.set_location("It\'s")'),
        (BOOKING, "set_origin", '{"value": "SFO"}', "API.set_origin(Loc('SFO'))"),
        (
            BOOKING,
            "set_return_date",
            '{"value": {"year": 2025, "month": 3, "day": 14}}',
            "API.set_return_date(Date(3, 14, 2025))",
        ),
        (  # a value outside the enum is the simulator's to judge, as in the program modes
            BOOKING,
            "select_room_type",
            '{"value": "Suite"}',
            "API.select_room_type('Suite')",
        ),
    ],
)
def test_a_valid_call_becomes_one_line_of_repr_quoted_values(
    toolset: ToolSet, name: str, arguments: Any, line: str
) -> None:
    assert call_line(toolset, name, arguments) == line


@pytest.mark.parametrize(
    ("toolset", "name", "arguments", "message"),
    [
        (HOME, "delete_everything", "{}", "no tool named 'delete_everything'"),
        (HOME, None, "{}", "no tool named None"),
        (HOME, "set_location", '{"value": "Boise"', "not valid JSON"),
        (HOME, "set_location", '["Boise"]', "must be a JSON object"),
        (HOME, "set_location", "{}", "needs the argument 'value'"),
        (HOME, "set_location", '{"value": "a", "city": "b"}', "no argument 'city'"),
        (HOME, "set_location", '{"value": 7}', "must be a string"),
        (HOME, "set_num_beds", '{"value": "3"}', "must be a whole number"),
        (HOME, "set_num_beds", '{"value": true}', "must be a whole number"),
        (HOME, "set_num_beds", '{"value": 2.5}', "must be a whole number"),
        (HOME, "set_num_beds", '{"value": 1e300}', "out of range"),
        (HOME, "set_num_baths", '{"value": NaN}', "NaN is not a JSON number"),
        (HOME, "set_num_baths", '{"value": Infinity}', "not a JSON number"),
        (HOME, "select_home_type", '{"home_types": "Condo"}', "list of at most"),
        (HOME, "set_location", '{"value": "' + "x" * 600 + '"}', "longer than 500"),
        (HOME, "set_location", "[" * 100_000, "longer than 20000"),
        (HOME, "set_location", "[" * 5_000 + "]" * 5_000, "not valid JSON"),
        (BOOKING, "set_origin", '{"value": {"name": "Boise"}}', "must be a string"),
        (BOOKING, "set_checkin_date", '{"value": "2025-03-14"}', "month, day and year"),
        (BOOKING, "set_checkin_date", '{"value": {"month": 3, "day": 14}}', "month, day and year"),
    ],
)
def test_a_bad_call_is_an_error_message_for_the_model(
    toolset: ToolSet, name: Any, arguments: Any, message: str
) -> None:
    with pytest.raises(BadCall, match=re.escape(message)):
        call_line(toolset, name, arguments)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_ARGUMENTS = st.one_of(
    st.text(max_size=80),
    st.dictionaries(st.sampled_from(["value", "home_types", "x", ""]), _JSON, max_size=3).map(
        json.dumps
    ),
    st.fixed_dictionaries({"value": _JSON}).map(json.dumps),
    st.fixed_dictionaries(
        {"value": st.fixed_dictionaries({f: _JSON for f in ("month", "day", "year")})}
    ).map(json.dumps),
)
_NAMES = st.sampled_from([*HOME.names(), *BOOKING.names(), "Loc", "__import__", ""])


def _is_literal_call(line: str) -> bool:
    """The line is one ``API.method(...)`` whose arguments are literals or Loc/Date of
    literals: nothing else can reach the program."""
    (statement,) = ast.parse(line).body
    call = statement.value if isinstance(statement, ast.Expr) else None
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    assert isinstance(call.func.value, ast.Name) and call.func.value.id == "API"
    for arg in call.args:
        if isinstance(arg, ast.Call):
            assert isinstance(arg.func, ast.Name) and arg.func.id in ("Loc", "Date")
            [ast.literal_eval(a) for a in arg.args]
        else:
            ast.literal_eval(arg)
    return not call.keywords


@settings(max_examples=400, deadline=None)
@given(toolset=st.sampled_from([HOME, BOOKING]), name=_NAMES, arguments=_ARGUMENTS)
def test_any_call_gives_a_literal_line_or_a_bad_call(
    toolset: ToolSet, name: str, arguments: str
) -> None:
    try:
        line = call_line(toolset, name, arguments)
    except BadCall as exc:
        assert str(exc)
    else:
        assert _is_literal_call(line)


# -- golds -> tool calls -------------------------------------------------------------------------


def test_gold_calls_resolve_loc_and_date_names_and_keywords() -> None:
    program = (
        'API.select_booking_type("trip tickets")\nlocation_from = Loc("Boston")\n'
        "API.set_origin(location_from)\nAPI.set_departure_date(Date(11, 15, 2024))\n"
        "API.set_num_adults(value=2)\nAPI.search()"
    )
    assert gold_calls(BOOKING, program) == [
        ("select_booking_type", {"booking_type": "trip tickets"}),
        ("set_origin", {"value": "Boston"}),
        ("set_departure_date", {"value": {"month": 11, "day": 15, "year": 2024}}),
        ("set_num_adults", {"value": 2}),
        ("search", {}),
    ]


@pytest.mark.parametrize(
    "program", ["for i in range(3):\n    API.search()", "API.nope()", "API.set_origin(where)"]
)
def test_a_gold_outside_the_known_shapes_is_refused(program: str) -> None:
    with pytest.raises(ValueError):
        gold_calls(BOOKING, program)


def test_every_v0_gold_round_trips_through_tool_calls_to_the_same_state() -> None:
    """gold -> tool calls -> our program lines reaches the gold's own world state."""
    with SandboxPool(workers=1) as pool:
        for task, toolset in ((HOME_TASK, HOME), (BOOKING_TASK, BOOKING)):
            samples = task.load("v0", None).samples
            golds = [s.labels[0] for s in samples]
            rebuilt = [
                "\n".join(
                    call_line(toolset, tool, json.dumps(args))
                    for tool, args in gold_calls(toolset, gold)
                )
                for gold in golds
            ]
            want = pool.run_many(task.world, golds)
            got = pool.run_many(task.world, rebuilt)
            assert [r.state for r in got] == [r.state for r in want]
            assert all(r.ok for r in got)


# -- cache keys ----------------------------------------------------------------------------------


def test_cache_keys_cover_tool_calls_and_tool_messages() -> None:
    def key(result: str, call_id: str = "c1", arguments: str = '{"value": "Boise"}') -> str:
        call = {"id": call_id, "type": "function", "function": {"name": "set_location"}}
        call["function"] = {"name": "set_location", "arguments": arguments}
        messages = (
            {"role": "user", "content": "Task: homes in Boise"},
            {"role": "assistant", "content": None, "tool_calls": (call,)},
            {"role": "tool", "tool_call_id": call_id, "content": result},
        )
        request = GenerationRequest(messages=messages, tools=HOME.openai(), step="turn-2")
        return cache_key("openai:m", None, request)

    assert key("ok") == key("ok")
    assert key("ok") != key("error: set_location must be the first call")
    assert key("ok") != key("ok", call_id="c2")
    assert key("ok") != key("ok", arguments='{"value": "Boston"}')
