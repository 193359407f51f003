"""tabletop as tools: the robot and perception API, one tool per function, on the sample's table.

A model writes a Python program against the API (and the sub-LMPs, which ask the model
again); an agent *is* the model, so it does the thinking itself and calls the API functions
as tools: ``put_first_on_second``, ``get_obj_pos``, ``get_obj_names``, ``say``, ... (the
table's ``API_NAMES``; parameter names are the functions' own). Arguments are JSON: object
and place names as strings, positions as ``[x, y]`` lists; a reply is the function's return
value as JSON text (numpy arrays and tuples as lists). Positions keep their float32 values
exactly (``get_obj_pos`` answers ``-0.4699999988079071``, not ``-0.47``): passed back, such a
number is the float32 value the program would have passed, so the same table results.

Which calls count: every call runs on the sample's table (our ``world.Table``, in this
process: plain Python on JSON values, no code is run). A refused call (an unknown object, a
point out of reach, a wrong type) is an error reply in the table's own words and changes
nothing. ``outcome`` is the task's checks (``judging.judge``) on the table as it stands, as for
a program's final table: only where blocks ended up matters, as in the original.

``translate`` runs a program (the top-level ``tabletop_ui`` code; every nested LMP and
generated function answered by the task's expert, as the oracle answers them) in the
sandbox, on a table whose API records each call that succeeded with its concrete arguments
(``recording_world``); those calls, replayed, leave the same table. A program that crashes,
or passes values no JSON call can carry, is ``Untranslatable``. The gold is the expert's
program for the instruction.

The docs: the original's model read no API docs (its prompts are demonstrations only), so
the tool descriptions are ``API_DOCS`` here, one line per function, said as README.md's
table says it; the parameters come from the functions' signatures.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable
from toolbench.core.bounded import bounded_text
from toolbench.prompts.builder import Mode, PromptConfig
from toolbench.sandbox import HostRefused
from toolbench.sandbox.world import ToolError, World
from toolbench.tasks.tabletop import experts, lmp
from toolbench.tasks.tabletop.judging import crashed, judge, session_of
from toolbench.tasks.tabletop.world import (
    ALLOWED_MODULES,
    API_NAMES,
    MAX_SAID_CHARS,
    Table,
    fixed_scope,
)
from toolbench.types import Generation, GenerationRequest, Outcome, Sample

if TYPE_CHECKING:
    from toolbench.core.task import Resources, TaskData

MAX_REPLY_CHARS = 20_000
MAX_NAME_CHARS = 1_000  # an object or place name, or a message
MAX_POINTS = 10_000  # denormalize_xy's points per call (the table's own limit)
MAX_RECORDED = 1_000  # calls one translated program may make
# The functions that change the table (or what it keeps): a translated program's call of
# another function that no JSON call can carry is left out, as it changes nothing.
EFFECTS = frozenset({"put_first_on_second", "say"})

# A name's length is checked by ``_convert`` (strict function calling knows no maxLength).
_NAME = {"type": "string"}
_NUMBER = {"type": "number"}
_POINT = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 3}
_XY = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
# parameter -> (JSON Schema, what it is)
_PARAMS: dict[str, tuple[dict[str, Any], str]] = {
    "obj_name": (_NAME, "an object's name as get_obj_names gives it"),
    "pos": (_POINT, "a position [x, y] in metres (a z is ignored)"),
    "pos_normalized": (
        {"anyOf": [_XY, {"type": "array", "items": _XY, "maxItems": MAX_POINTS}]},
        "a point [x, y] in [0, 1] table coordinates, or a list of such points",
    ),
    "arg1": ({"anyOf": [_NAME, _POINT]}, "the block to pick: its name, or a position [x, y]"),
    "arg2": (
        {"anyOf": [_NAME, _POINT]},
        "where to put it: an object's or a named place's name, or a position [x, y]",
    ),
    "msg": (_NAME, "what to say"),
}
API_DOCS: dict[str, str] = {
    "get_obj_pos": "The current [x, y] (float32 values) of an object or a named place "
    "('top left corner', 'middle', 'bottom side', ...). 'the' is deleted and '_' read as a "
    "space; an unknown name retries circle->bowl, square->block and without 'small'.",
    "get_obj_names": "The names of the objects on the table, blocks then bowls.",
    "is_obj_visible": "Whether the name is one of the objects on the table.",
    "get_bbox": "The object's bounding box ((minx, miny, minz), (maxx, maxy, maxz)) in metres.",
    "get_color": "The RGBA colour of the first colour word in the name (null without one).",
    "denormalize_xy": "Table coordinates in [0, 1] x [0, 1] to metres: p * 0.5 + "
    "(-0.25, -0.75), for one point or a list of points.",
    "get_corner_name": "The name of the table corner nearest the position (the bottom right "
    "one comes back as 'botom right corner', which get_obj_pos does not know).",
    "get_side_name": "The name of the table side nearest the position.",
    "put_first_on_second": "Pick the topmost block within 3 cm of the first place and set it "
    "down at the second (on the table, in a bowl, or on top of the blocks there). Nothing is "
    "picked if no block is there. The table is x in [-0.3, 0.3], y in [-0.8, -0.2] (top is "
    "larger y, right larger x); points beyond 0.9 m of the robot are out of reach.",
    "say": "Say something to the user.",
}


@functools.cache
def api_tools() -> tuple[ToolSpec, ...]:
    """One tool per API function: its docs line, its parameters from its signature."""
    specs: list[ToolSpec] = []
    for name in API_NAMES:
        params = _parameters(name)
        specs.append(
            ToolSpec(
                name=name,
                description=API_DOCS[name],
                input_schema={
                    "type": "object",
                    "properties": {
                        p: {**_PARAMS[p][0], "description": _PARAMS[p][1]} for p in params
                    },
                    "required": list(params),
                    "additionalProperties": False,
                },
            )
        )
    return tuple(specs)


@functools.cache
def _parameters(name: str) -> tuple[str, ...]:
    return tuple(inspect.signature(getattr(Table, name)).parameters)[1:]  # without self


class TabletopWorld:
    """One sample's table, driven by tool calls (see module doc), judged by the task's own
    checks (``judging``); ``fix_corner_name`` is the task's option."""

    def __init__(
        self, data: TaskData, sample: Sample, resources: Resources, *, fix_corner_name: bool
    ) -> None:
        self.data, self.sample, self.resources = data, sample, resources
        self.fix_corner_name = fix_corner_name
        self.configs: dict[str, Any] = sample.fields["configs"]
        self.table = Table(self.configs, fix_corner_name=fix_corner_name)

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return api_tools()

    @property
    def request(self) -> str:
        query, context = lmp.top_call(self.sample.query, _objects(self.configs))
        return f"{query}\n{context}"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        if not isinstance(name, str) or name not in API_NAMES:
            shown = bounded_text(str(name), 100)
            return ToolReply(f"unknown tool {shown!r}; the tools are {', '.join(API_NAMES)}", True)
        values = _arguments(name, arguments)
        if isinstance(values, str):
            return ToolReply(f"{name}: {values}", True)
        try:
            result = getattr(self.table, name)(*values)
        except ToolError as exc:
            return ToolReply(f"{name}: {bounded_text(str(exc), 1_000)}", True)
        return ToolReply(bounded_text(json.dumps(_jsonable(result)), MAX_REPLY_CHARS))

    async def outcome(self) -> Outcome:
        initial = self.data.gold[self.sample.id][0]
        return judge(self.sample, initial, self.table.snapshot(), {})

    def failed(self, message: str) -> Outcome:
        return crashed(message)

    async def translate(self, action: str) -> list[ToolCall]:
        return await self._record(action)

    async def gold_calls(self) -> list[ToolCall]:
        query, context = lmp.top_call(self.sample.query, _objects(self.configs))
        return await self._record(experts.ideal_program(lmp.TOP_LMP, query, context))

    async def close(self) -> None:
        return None

    async def _record(self, code: str) -> list[ToolCall]:
        """Run ``code`` as the sample's ``tabletop_ui`` answer in the sandbox, sub-LMPs answered
        by the expert, and read back the API calls it made (see module doc)."""
        session = session_of(self.sample, 0, functools.partial(_answer, code), _COMPLETION)
        factory = functools.partial(
            recording_world, self.configs, fix_corner_name=self.fix_corner_name
        )
        program = lmp.program_for(self.sample.query, _objects(self.configs))
        result = await self.resources.sandbox.arun(factory, program, session)
        if not result.ok:
            raise Untranslatable(f"the program does not run: {result.error or result.kind}")
        recorded = result.state["calls"]
        if result.state.get("unrecordable"):
            raise Untranslatable(str(result.state["unrecordable"]))
        return [ToolCall(str(c["name"]), dict(c["arguments"])) for c in recorded]


def _objects(configs: Mapping[str, Any]) -> list[str]:
    return [*configs["block_list"], *configs["bowl_list"]]


def _completion() -> Any:
    return PromptConfig(mode=Mode.COMPLETION, seed=None)


_COMPLETION = _completion()


async def _answer(code: str, request: GenerationRequest) -> Generation:
    """The model's side while translating: ``code`` for the top level, the expert below."""
    if request.step == lmp.TOP_LMP:
        return Generation(code)
    if not isinstance(request.ideal, str):
        raise HostRefused(f"no expert program for the {request.step} call")
    return Generation(request.ideal)


# -- arguments and replies -----------------------------------------------------------------


def _arguments(name: str, arguments: Any) -> list[Any] | str:
    """The call's values in parameter order, or what is wrong with them (one line)."""
    params = _parameters(name)
    if not isinstance(arguments, Mapping):
        return "arguments must be an object"
    extra = sorted(str(k)[:50] for k in arguments if k not in params)
    if extra:
        return f"unexpected argument(s) {extra}; it takes {list(params) or 'none'}"
    values: list[Any] = []
    for param in params:
        if param not in arguments:
            return f"missing argument {param!r}"
        value = _convert(param, arguments[param])
        if isinstance(value, _Bad):
            return f"{param!r} {value.why}"
        values.append(value)
    return values


class _Bad:
    def __init__(self, why: str) -> None:
        self.why = why


def _convert(param: str, value: Any) -> Any:
    """A JSON argument as the function takes it: names as strings, positions as float64
    arrays (a program's float32 array holds the same values), or ``_Bad``."""
    if param in ("obj_name", "msg") or (param in ("arg1", "arg2") and isinstance(value, str)):
        if not isinstance(value, str):
            return _Bad("must be a string")
        if len(value) > MAX_NAME_CHARS:
            return _Bad(f"is longer than {MAX_NAME_CHARS} characters")
        return value
    if param == "pos_normalized":
        if _is_point(value, 2):
            return np.array(value, dtype=np.float64)
        if (
            isinstance(value, list)
            and 0 < len(value) <= MAX_POINTS
            and all(_is_point(v, 2) for v in value)
        ):
            return np.array(value, dtype=np.float64)
        return _Bad("must be a point [x, y] of numbers or a list of such points")
    if not _is_point(value, 3):
        return _Bad("must be a position [x, y] (or [x, y, z]) of finite numbers")
    return np.array(value, dtype=np.float64)


def _is_point(value: Any, most: int) -> bool:
    return isinstance(value, list) and 2 <= len(value) <= most and all(map(_finite, value))


def _finite(value: Any) -> bool:
    """A JSON number the arm can take (an integer too large for a float is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _jsonable(value: Any) -> Any:
    """A return value as JSON data: arrays and tuples as lists, numpy numbers as Python's
    (a float32 as the float64 of the same value, so it goes back exactly)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


# -- the recording world (runs in the sandbox worker) --------------------------------------


def recording_world(configs: dict[str, Any], fix_corner_name: bool = False) -> World:
    """The sample's LMP world (``lmp.tabletop_world``) whose API functions also record each
    call that returned, with its arguments as JSON, in the snapshot (``calls``); a call that
    no JSON tool call can carry sets ``unrecordable``."""
    table = Table(configs, fix_corner_name=fix_corner_name)
    log: dict[str, Any] = {"calls": [], "unrecordable": ""}
    api = {name: _recorded(name, fn, log) for name, fn in table.api().items()}
    runtime = lmp.Runtime({**fixed_scope(), **api})

    def tabletop_ui(query: Any, context: Any = "") -> None:
        runtime.call(lmp.TOP_LMP, query, context, {})

    return World(
        namespace={lmp.TOP_LMP: tabletop_ui},
        snapshot=lambda: {"table": table.snapshot(), **log},
        allowed_modules=ALLOWED_MODULES,
        writable_types=frozenset({np.ndarray}),
    )


def _recorded(name: str, fn: Callable[..., Any], log: dict[str, Any]) -> Callable[..., Any]:
    params = _parameters(name)

    def api(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)  # a refusal raises: nothing happened, nothing recorded
        if log["unrecordable"]:
            return result
        if len(log["calls"]) >= MAX_RECORDED:
            log["unrecordable"] = f"the program makes more than {MAX_RECORDED} API calls"
            return result
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs).arguments
            arguments = {p: _recordable(p, bound[p]) for p in params}
        except (TypeError, ValueError, KeyError) as exc:
            if name in EFFECTS:
                log["unrecordable"] = f"{name} was called with {bounded_text(str(exc), 200)}"
            return result
        log["calls"].append({"name": name, "arguments": arguments})
        return result

    api.__name__ = api.__qualname__ = name
    return api


def _recordable(param: str, value: Any) -> Any:
    """An argument as the JSON a tool call would carry; ValueError when it has none."""
    if param == "msg":  # say() keeps what it can print, cut; so does its record
        try:
            text = value if isinstance(value, str) else str(value)
        except Exception:
            text = f"<{type(value).__name__}>"
        return text[:MAX_SAID_CHARS]
    if isinstance(value, str):
        if len(value) > MAX_NAME_CHARS:
            raise ValueError(f"a name longer than {MAX_NAME_CHARS} characters")
        return value
    array = np.asarray(value, dtype=np.float64)  # what the table read it as
    if array.size > 2 * MAX_POINTS:
        raise ValueError("too many numbers")
    data = array.tolist()
    if _convert(param, data).__class__ is _Bad:
        raise ValueError(f"{param}={bounded_text(repr(data), 100)}")
    return data


def prepare_sandbox_worker() -> None:
    """As the task's own worlds: the table's imports and guarded builtins, paid once."""
    lmp.prepare_sandbox_worker()
