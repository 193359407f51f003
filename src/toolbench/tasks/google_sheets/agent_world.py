"""google_sheets as an agent's world: the worksheet's gspread methods as tools.

The tools are the ``worksheet.*`` methods ``docs.FUNCTIONS`` documents (the model's own docs):
each doc's signature line is parsed (``ast``, never run) into a JSON Schema, a parameter with
a default being optional. A ``dict`` (or tuple) annotation has no schema of its own: the keys
of such a parameter are written in ``schemas.PARAMETERS`` (gspread's ``{'range', 'values'}``,
a CellFormat ...), so every tool passes strict function calling. A null given for an optional
argument (or key) is read as "not given": strict clients send one for each they leave out.
The spreadsheet-level calls (``sheet.worksheet``, ``add_worksheet``)
and the pandas helpers are not tools: they return objects, not answers, and an agent edits the
question's sheet only.

A call is validated against its schema (``jsonschema``) and written as one program line,
``worksheet.method(...)`` with every value the ``repr`` of a checked JSON value; the program of
the calls that ran runs in the sandbox on the sample's sheet wrapped in a recorder
(``recording.py``) whose snapshot is the last call's answer, which is the call's reply. Which
calls count: every call that ran, in order, scored as one program by ``SheetsTask.score``.

Golds translate by RUNNING them on the recording sheet and taking the worksheet calls they
made with their concrete arguments; a pandas gold's ``set_with_dataframe`` is recorded as the
one ``update`` (user-entered, from A1) that writes the same cells.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import jsonschema

from toolbench.core.agent import AgentWorld, ToolCall, ToolSpec, Untranslatable
from toolbench.kinds.program_task import crash_outcome
from toolbench.kinds.tool_calling.agent_world import (
    ProgramAgentWorld,
    ScoredProgramTask,
    json_reply,
)
from toolbench.kinds.tool_calling.convert import BadCall
from toolbench.tasks.google_sheets import docs, schemas
from toolbench.tasks.google_sheets.recording import make_recording_world
from toolbench.types import Sample

if TYPE_CHECKING:
    from toolbench.core.task import TaskData
    from toolbench.sandbox.memo import ProgramRunner
    from toolbench.sandbox.pool import ExecResult

RECEIVER = "worksheet"
MAX_ARGUMENT_CHARS = 200_000  # one call's arguments as JSON (a column of formulas is long)
MAX_DEPTH = 8

_SCALAR = {"type": ["string", "number", "boolean", "null"]}


def _annotation_schema(node: ast.expr | None) -> dict[str, Any]:
    """The JSON Schema of one annotation of the docs' signatures."""
    if node is None:
        return dict(_SCALAR)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return {"anyOf": [_annotation_schema(node.left), _annotation_schema(node.right)]}
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.Name):
        simple = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
        if node.id in simple:
            return {"type": simple[node.id]}
        if node.id == "list":
            return {"type": "array", "items": dict(_SCALAR)}
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "list"
    ):
        return {"type": "array", "items": _annotation_schema(node.slice)}
    # dict and tuple are left to schemas.PARAMETERS: an open object tells an agent nothing
    raise ValueError(
        f"no schema for the annotation {ast.unparse(node)!r}; describe the parameter in "
        "google_sheets/schemas.py PARAMETERS"
    )


def _parameter(tool: str, param: ast.arg) -> dict[str, Any]:
    written = schemas.PARAMETERS.get((tool, param.arg))
    return copy.deepcopy(written) if written else _annotation_schema(param.annotation)


def _signature(doc: str) -> ast.arguments | None:
    """The parameters of a doc's ``worksheet.name(...)`` line, or None for another receiver."""
    line = doc.splitlines()[-1]
    if not line.startswith(f"{RECEIVER}."):
        return None
    call, _, _ = line[len(RECEIVER) + 1 :].rpartition(" -> ")
    function = ast.parse(f"def {call}: pass").body[0]
    assert isinstance(function, ast.FunctionDef)
    return function.args


def _spec(name: str, doc: str, args: ast.arguments) -> tuple[ToolSpec, tuple[str, ...]]:
    """A tool and its positional-only names (``*specs`` of ``sort``, written positionally)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    params = list(args.args)
    first_default = len(params) - len(args.defaults)
    for index, param in enumerate(params):
        properties[param.arg] = _parameter(name, param)
        if index < first_default:
            required.append(param.arg)
    for param, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        properties[param.arg] = _parameter(name, param)
        if default is None:
            required.append(param.arg)
    positional: tuple[str, ...] = ()
    if args.vararg is not None:  # its schema (an array of the arguments) is in PARAMETERS
        properties[args.vararg.arg] = copy.deepcopy(schemas.PARAMETERS[(name, args.vararg.arg)])
        required.insert(0, args.vararg.arg)
        positional = (args.vararg.arg,)
    description = " ".join(line[1:].strip() for line in doc.splitlines() if line.startswith("#"))
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name, description, schema), positional


@functools.cache
def sheet_tools() -> tuple[tuple[ToolSpec, ...], dict[str, tuple[str, ...]]]:
    """The worksheet tools (built once) and each tool's positional (``*args``) parameters."""
    tools, positional = [], {}
    for name, doc in docs.FUNCTIONS.items():
        args = _signature(doc)
        if args is None:
            continue
        tool, star = _spec(name, doc, args)
        tools.append(tool)
        positional[name] = star
    return tuple(tools), positional


def _literal(value: Any, depth: int = 0) -> str:
    """Python source of a JSON value (checked here again: only JSON types, finite numbers)."""
    if depth > MAX_DEPTH:
        raise BadCall(f"the arguments are nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, (bool, str, int)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadCall("numbers must be finite")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item, depth + 1) for item in value) + "]"
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        items = (f"{key!r}: {_literal(item, depth + 1)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    raise BadCall(f"{type(value).__name__} is not a JSON value")


def unset_nulls(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` without the nulls given for optional properties, at every level the schema
    describes: a strict client fills each property it leaves out with null, which means "not
    given" (the default; in a format, "keep that part"), never "clear it". Walks the schema,
    not the value, so a deep value costs no deeper recursion than the schema has."""
    if isinstance(value, Mapping) and isinstance(schema.get("properties"), Mapping):
        required, properties = set(schema.get("required", ())), schema["properties"]
        return {
            key: unset_nulls(properties.get(key, {}), item)
            for key, item in value.items()
            if item is not None or key in required
        }
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [unset_nulls(schema["items"], item) for item in value]
    wanted = "object" if isinstance(value, Mapping) else "array" if isinstance(value, list) else ""
    for branch in schema.get("anyOf", ()):
        if wanted and branch.get("type") == wanted:
            return unset_nulls(branch, value)
    return value


def sheet_line(name: Any, arguments: Mapping[str, Any]) -> str:
    """The program line of one worksheet call, or ``BadCall`` in the schema's words."""
    tools, positional = sheet_tools()
    tool = next((t for t in tools if t.name == name), None) if isinstance(name, str) else None
    if tool is None:
        names = ", ".join(t.name for t in tools)
        raise BadCall(f"there is no tool named {str(name)[:60]!r}; the tools are {names}")
    try:
        size = len(json.dumps(arguments, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise BadCall("the arguments must be a JSON object of JSON values") from None
    if size > MAX_ARGUMENT_CHARS:
        raise BadCall(f"the arguments are longer than {MAX_ARGUMENT_CHARS} characters")
    arguments = unset_nulls(tool.input_schema, arguments)
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(tool.input_schema).iter_errors(dict(arguments))
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        raise BadCall(f"{tool.name}: {where}: {error.message[:300]}")
    parts = []  # the *args first, whatever order the agent wrote the keys in
    for key in positional[tool.name]:
        parts += [_literal(item) for item in arguments[key]]
    for key, value in arguments.items():
        if key not in positional[tool.name]:
            parts.append(f"{key}={_literal(value)}")
    return f"{RECEIVER}.{tool.name}({', '.join(parts)})"


def _answer(result: ExecResult) -> str:
    state = result.state if isinstance(result.state, dict) else {}
    return json_reply(state.get("result"))


class SheetsCalls:
    """Gold programs run on the recording sheet; the calls they made (see module doc)."""

    def __init__(self, world: ProgramAgentWorld, factory: Any) -> None:
        self.world, self.factory = world, factory

    async def __call__(self, action: str) -> list[ToolCall]:
        result = await self.world.sandbox.arun(self.factory, action)
        if not result.ok:
            raise Untranslatable(f"the program fails on the recording sheet: {result.error}")
        state = result.state if isinstance(result.state, dict) else {}
        calls = []
        for entry in state.get("calls", []):
            if entry.get("untranslatable"):
                raise Untranslatable(str(entry["untranslatable"]))
            calls.append(ToolCall(str(entry["name"]), dict(entry["arguments"])))
        return calls


def sheets_agent_world(
    task: ScoredProgramTask,
    data: TaskData[Any],
    sample: Sample,
    sandbox: ProgramRunner,
    workbook: tuple[str, str],
) -> AgentWorld:
    """``SheetsTask.agent_world``: a world of the sample's sheet (cheap: nothing runs),
    judged by ``task``'s scorer; ``workbook`` is the load's (path, digest)."""
    factory = functools.partial(
        make_recording_world,
        *workbook,
        sample.fields["question_sheet_name"],
        bool(sample.fields.get("check_format", False)),
    )
    tools, _ = sheet_tools()
    holder: dict[str, SheetsCalls] = {}

    async def calls_of(action: str) -> list[ToolCall]:
        return await holder["calls"](action)

    world = ProgramAgentWorld(
        task=task,
        data=data,
        sample=sample,
        sandbox=sandbox,
        tools=tools,
        factory=factory,
        line=sheet_line,
        calls_of=calls_of,
        crash=lambda message: crash_outcome(message, ()),
        reply=_answer,
    )
    holder["calls"] = SheetsCalls(world, factory)
    return world
