"""Every tool of every task's agent world survives strict function calling (issue 36).

Third-party MCP clients hand our tools to models in OpenAI's strict mode (structured outputs
for function calling), which refuses a schema outside its subset of JSON Schema and, where it
accepts one, makes the model fill every property. So each tool's schema must be a valid JSON
Schema (``jsonschema``) whose strict form is valid too. ``strict_form`` is the conversion such
a client makes (an optional property becomes a required one that may be null) and nothing
more: it adds no ``properties`` and no ``additionalProperties``, so an open object stays open
and is found. ``strict_problems`` checks the rules OpenAI documents for strict mode:

* the root is an object (not ``anyOf``); every object lists ``properties``, sets
  ``additionalProperties: false`` and lists every property in ``required``;
* only the supported types (string, number, integer, boolean, object, array, null, and
  ``enum``/``const``/``anyOf`` of them); every array has ``items``; no schema is open
  (``{}`` or a bare ``{"type": "object"}``);
* only the supported keywords: ``pattern`` and ``format`` (of the listed formats) on strings,
  ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``/``multipleOf`` on numbers,
  ``minItems``/``maxItems`` on arrays; not ``minLength``/``maxLength``, ``prefixItems``,
  ``oneOf``/``allOf``/``not``, ``if``/``then``/``else``, ``patternProperties``,
  ``default`` ...;
* the limits: objects nested at most 10 deep, at most 5,000 properties and 1,000 enum values
  in one schema; a function's name matches ``^[a-zA-Z0-9_-]{1,64}$``.

A strict client sends null for every optional argument it does not mean to give, so a world
must read null there as "not given": checked on the worlds that have optional arguments
(google_sheets, open_weather, the_cat_api).
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any, cast

import jsonschema
import pytest

from toolbench.core.agent import AgentWorld, HasAgentWorld, ToolSpec
from toolbench.core.task import Resources, Task
from toolbench.tasks.registry import BUILTIN, OWN_COMMAND, get_task

AGENT_TASKS = tuple(name for name in BUILTIN if name not in OWN_COMMAND)  # all eight

TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
COMMON = frozenset({"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"})
BY_TYPE = {
    "string": frozenset({"pattern", "format"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
    "integer": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
}
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
MAX_DEPTH, MAX_PROPERTIES, MAX_ENUM_VALUES = 10, 5_000, 1_000
FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


# -- the conversion and the check ------------------------------------------------------------


def accepts_null(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(accepts_null(branch) for branch in schema.get("anyOf", ()))


def strict_form(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as a strict-mode client sends it: every property required, an optional one
    as a union with null. Nothing else changes (an open object stays open)."""
    converted: dict[str, Any] = copy.deepcopy(dict(schema))
    properties = converted.get("properties")
    if isinstance(properties, dict):
        required = set(converted.get("required", ()))
        for name, sub in list(properties.items()):
            sub = strict_form(sub)
            if name not in required and not accepts_null(sub):
                sub = {"anyOf": [sub, {"type": "null"}]}
            properties[name] = sub
        converted["required"] = list(properties)
    if isinstance(converted.get("items"), dict):
        converted["items"] = strict_form(converted["items"])
    if isinstance(converted.get("anyOf"), list):
        converted["anyOf"] = [strict_form(branch) for branch in converted["anyOf"]]
    if isinstance(converted.get("$defs"), dict):
        converted["$defs"] = {k: strict_form(v) for k, v in converted["$defs"].items()}
    return converted


class Checker:
    """Walks one strict-form schema and collects what strict mode refuses, by JSON path."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.properties = 0
        self.enum_values = 0

    def root(self, schema: Any) -> list[str]:
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            self.problems.append("$: the root must be an object schema (not anyOf)")
        self.walk(schema, "$", 1)
        if self.properties > MAX_PROPERTIES:
            self.problems.append(f"$: {self.properties} properties (at most {MAX_PROPERTIES})")
        if self.enum_values > MAX_ENUM_VALUES:
            self.problems.append(f"$: {self.enum_values} enum values (at most {MAX_ENUM_VALUES})")
        return self.problems

    def walk(self, schema: Any, path: str, depth: int) -> None:
        if not isinstance(schema, Mapping):
            self.problems.append(f"{path}: not a schema object")
            return
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if not kinds and not any(k in schema for k in ("anyOf", "enum", "const", "$ref")):
            self.problems.append(f"{path}: no type (an open schema accepts anything)")
        for kind in kinds:
            if kind not in TYPES:
                self.problems.append(f"{path}: type {kind!r} is not supported")
        allowed = COMMON.union(*(BY_TYPE.get(kind, frozenset()) for kind in kinds))
        for keyword in schema:
            if keyword not in allowed:
                self.problems.append(f"{path}: {keyword!r} is not supported here")
        if schema.get("format") is not None and schema["format"] not in FORMATS:
            self.problems.append(f"{path}: format {schema['format']!r} is not supported")
        if isinstance(schema.get("enum"), list):
            self.enum_values += len(schema["enum"])
        if "object" in kinds:
            self.object(schema, path, depth)
        if "array" in kinds:
            if not isinstance(schema.get("items"), Mapping):
                self.problems.append(f"{path}: an array needs one 'items' schema")
            else:
                self.walk(schema["items"], f"{path}[]", depth)
        for index, branch in enumerate(schema.get("anyOf", ())):
            self.walk(branch, f"{path}|{index}", depth)
        for name, sub in (schema.get("$defs") or {}).items():
            self.walk(sub, f"$defs.{name}", 1)

    def object(self, schema: Mapping[str, Any], path: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.problems.append(f"{path}: objects nested deeper than {MAX_DEPTH}")
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            self.problems.append(f"{path}: an object must list its 'properties'")
            properties = {}
        if schema.get("additionalProperties") is not False:
            self.problems.append(f"{path}: an object needs 'additionalProperties': false")
        if sorted(schema.get("required", [])) != sorted(properties):
            self.problems.append(f"{path}: 'required' must list every property")
        self.properties += len(properties)
        for name, sub in properties.items():
            self.walk(sub, f"{path}.{name}", depth + 1)


def strict_problems(tool: ToolSpec) -> list[str]:
    """What strict function calling refuses in ``tool`` (empty when it converts cleanly)."""
    problems = []
    if not FUNCTION_NAME.fullmatch(tool.name):
        problems.append(f"the name {tool.name!r} is not a valid function name")
    jsonschema.Draft202012Validator.check_schema(tool.input_schema)
    strict = strict_form(tool.input_schema)
    jsonschema.Draft202012Validator.check_schema(strict)
    return problems + Checker().root(strict)


# -- the worlds --------------------------------------------------------------------------------


def world_of(name: str, index: int = 0) -> Iterator[AgentWorld]:
    """A world of the task's ``index``-th v0 sample (no sandbox: building one runs nothing)."""
    task: Task = get_task(name)
    data = task.load(task.versions()[0], None)
    resources = Resources(data=data, sandbox=cast(Any, None), prompter=cast(Any, None))
    world = task.agent_world(data, data.samples[index], resources)
    try:
        yield world
    finally:
        asyncio.run(world.close())


@pytest.fixture(params=AGENT_TASKS)
def world(request: pytest.FixtureRequest) -> Iterator[AgentWorld]:
    yield from world_of(request.param)


def test_the_tasks_with_agent_worlds_are_the_eight() -> None:
    able = {name for name in BUILTIN if isinstance(get_task(name), HasAgentWorld)}
    assert able == set(AGENT_TASKS)


def test_every_tool_converts_to_strict_function_calling(world: AgentWorld) -> None:
    assert world.tools
    found = {tool.name: strict_problems(tool) for tool in world.tools}
    assert {name: problems for name, problems in found.items() if problems} == {}


# -- the checker finds what strict mode refuses (so the test above can fail) ------------------


def _tool(properties: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }
    return ToolSpec("t", "", schema)


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ({"x": {"type": "object"}}, "must list its 'properties'"),
        ({"x": {"type": "array", "items": {"type": "object"}}}, "must list its 'properties'"),
        ({"x": {"type": "object", "properties": {}}}, "'additionalProperties': false"),
        ({"x": {}}, "no type"),
        ({"x": {"type": "array"}}, "needs one 'items'"),
        ({"x": {"type": "string", "maxLength": 3}}, "'maxLength' is not supported"),
        ({"x": {"type": "array", "prefixItems": [{"type": "integer"}]}}, "'prefixItems'"),
        ({"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}, "'oneOf'"),
        ({"x": {"type": "string", "default": "a"}}, "'default' is not supported"),
        ({"x": {"type": "string", "format": "uri"}}, "format 'uri'"),
    ],
)
def test_the_checker_finds_what_strict_mode_refuses(
    properties: dict[str, Any], expected: str
) -> None:
    problems = strict_problems(_tool(properties))
    assert any(expected in problem for problem in problems), problems


def test_the_checker_passes_optional_properties_as_nullable_and_refuses_a_root_union() -> None:
    optional = _tool({"a": {"type": "string"}, "b": {"type": "integer"}}, required=["a"])
    assert strict_problems(optional) == []
    assert strict_form(optional.input_schema)["properties"]["b"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}]
    }
    assert strict_form(optional.input_schema)["required"] == ["a", "b"]
    union = ToolSpec("t", "", {"anyOf": [{"type": "object"}]})
    assert any("root" in problem for problem in strict_problems(union))
    assert strict_problems(ToolSpec("a tool", "", optional.input_schema))
    with pytest.raises(jsonschema.exceptions.SchemaError):  # not JSON Schema at all
        strict_problems(_tool({"x": {"type": "tuple"}}))


# -- a strict client's nulls mean "not given" -------------------------------------------------


def as_strict_client_sends(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` as a strict client writes it: every optional property it leaves out, at every
    level, given as null (the strict form requires them all)."""
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        filled = {key: None for key in schema["properties"]}
        for key, item in value.items():
            filled[key] = as_strict_client_sends(schema["properties"].get(key, {}), item)
        return filled
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [as_strict_client_sends(schema["items"], item) for item in value]
    kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else ""
    for branch in schema.get("anyOf", ()):
        if kind and branch.get("type") == kind:
            return as_strict_client_sends(branch, value)
    return value


def strict_arguments(tool: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with a strict client's nulls, checked against the tool's strict form."""
    filled = as_strict_client_sends(tool.input_schema, dict(arguments))
    jsonschema.Draft202012Validator(strict_form(tool.input_schema)).validate(filled)
    return cast(dict[str, Any], filled)


SHEET_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("update", {"values": [["North Share"], ["=B2/F2"]], "range_name": "G1:G2", "raw": False}),
    ("update", {"values": [[1]]}),
    ("format", {"ranges": "A1:E1", "format": {"textFormat": {"bold": True}}}),
    (
        "format",
        {
            "ranges": ["D2:D9", "F2"],
            "format": {
                "numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"},
                "backgroundColor": {"red": 1, "green": 0.95, "blue": 0.8},
                "borders": {"top": {"style": "SOLID"}},
            },
        },
    ),
    ("batch_format", {"formats": [{"range": "A1:F1", "format": {"textFormat": {"fontSize": 12}}}]}),
    (
        "batch_update",
        {"data": [{"range": "C2", "values": [[1320.66]]}, {"range": "C5", "values": [[72.12]]}]},
    ),
    ("sort", {"specs": [[4, "asc"], [1, "des"]], "range": "A2:E25"}),
    ("find", {"query": "Oat Milk"}),
    ("delete_rows", {"start_index": 3}),
    ("get", {}),
]


@pytest.mark.parametrize(("name", "arguments"), SHEET_CALLS)
def test_google_sheets_reads_a_strict_clients_nulls_as_not_given(
    name: str, arguments: dict[str, Any]
) -> None:
    from toolbench.tasks.google_sheets.agent_world import sheet_line, sheet_tools

    tool = next(t for t in sheet_tools()[0] if t.name == name)
    jsonschema.Draft202012Validator(tool.input_schema).validate(arguments)
    filled = strict_arguments(tool, arguments)
    assert sheet_line(name, filled) == sheet_line(name, arguments)


@pytest.mark.parametrize("name", ["open_weather", "the_cat_api"])
def test_a_curl_world_reads_a_strict_clients_nulls_as_not_given(name: str) -> None:
    """Each of the first samples' gold calls, made with a strict client's nulls on a second
    world, gets the reply the plain call gets."""

    async def compare(plain: AgentWorld, strict: AgentWorld) -> int:
        tools = {tool.name: tool for tool in plain.tools}
        filled_some = 0
        for call in await plain.gold_calls():
            filled = strict_arguments(tools[call.name], call.arguments)
            filled_some += filled != dict(call.arguments)
            expected = await plain.call(call.name, call.arguments)
            assert not expected.is_error, expected.text
            assert await strict.call(call.name, filled) == expected
        return filled_some

    filled = 0
    for index in range(8):
        for plain in world_of(name, index):
            for strict in world_of(name, index):
                filled += asyncio.run(compare(plain, strict))
    assert filled  # some gold call left an optional parameter out
