"""Tool calls to program lines, and gold programs to tool calls.

A model's tool call is data: a name and a JSON string that may be anything (invalid JSON,
wrong types, unknown names, NaN, megabytes, deep nesting). ``call_line`` validates it against
the tool's parameters and builds one program line from the validated values only, every
literal written by ``repr``/``str`` of a value whose type we checked; nothing the model wrote
is ever pasted into the program as code. Anything that does not fit is a ``BadCall`` whose
message goes back to the model as the call's result.

Values inside the declared types are not judged here (a home type outside the enum, a
thirteenth month): the simulator judges them exactly as it judges a program, so the tool
modes and the program modes score the same calls the same way.

``gold_calls`` goes the other way for the oracle: it parses (never runs) a gold program with
``ast`` and turns each ``API.method(...)`` line into a tool call, resolving ``x = Loc(...)`` /
``x = Date(...)`` assignments the golds use.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping
from typing import Any

from toolbench.kinds.tool_calling.schema import DATE_FIELDS, RECEIVER, Kind, Param, ToolSet

MAX_ARGUMENT_CHARS = 20_000  # the raw JSON arguments of one call
MAX_STRING_CHARS = 500  # one string value
MAX_LIST_ITEMS = 20
MAX_INTEGER = 10**15  # magnitude; keeps programs (and their states) small


class BadCall(ValueError):
    """A tool call we cannot turn into a program line; the message is for the model."""


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _no_constants(name: str) -> Any:
    raise BadCall(f"{name} is not a JSON number")


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as a dict: a JSON object string ("" meaning no arguments), or an
    object some servers send already parsed."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        raise BadCall("the arguments must be a JSON object")
    if len(arguments) > MAX_ARGUMENT_CHARS:
        raise BadCall(f"the arguments are longer than {MAX_ARGUMENT_CHARS} characters")
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments, parse_constant=_no_constants)
    except BadCall:
        raise
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not valid JSON"
        raise BadCall(f"the arguments are not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise BadCall(f"the arguments must be a JSON object, not {type(value).__name__}")
    return value


def _string(param: Param, value: Any) -> str:
    if not isinstance(value, str):
        raise BadCall(f"'{param.name}' must be a string, not {_shown(value)}")
    if len(value) > MAX_STRING_CHARS:
        raise BadCall(f"'{param.name}' is longer than {MAX_STRING_CHARS} characters")
    return value


def _integer(name: str, value: Any) -> int:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadCall(f"'{name}' must be a whole number, not {_shown(value)}")
    if abs(value) > MAX_INTEGER:
        raise BadCall(f"'{name}' is out of range")
    return value


def _literal(param: Param, value: Any) -> str:
    """The Python source of one validated argument value."""
    kind = param.kind
    if kind is Kind.STRING:
        return repr(_string(param, value))
    if kind is Kind.INTEGER:
        return str(_integer(param.name, value))
    if kind is Kind.NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadCall(f"'{param.name}' must be a number, not {_shown(value)}")
        if isinstance(value, int):
            return str(_integer(param.name, value))
        if not math.isfinite(value) or abs(value) > MAX_INTEGER:
            raise BadCall(f"'{param.name}' is out of range")
        return repr(value)
    if kind is Kind.STRING_LIST:
        if not isinstance(value, list) or len(value) > MAX_LIST_ITEMS:
            raise BadCall(f"'{param.name}' must be a list of at most {MAX_LIST_ITEMS} strings")
        return "[" + ", ".join(repr(_string(param, item)) for item in value) + "]"
    if kind is Kind.PLACE:
        return f"Loc({_string(param, value)!r})"
    if not isinstance(value, dict) or set(value) != set(DATE_FIELDS):
        raise BadCall(f"'{param.name}' must be an object with exactly month, day and year")
    month, day, year = (_integer(f"{param.name}.{f}", value[f]) for f in DATE_FIELDS)
    return f"Date({month}, {day}, {year})"


def call_line(toolset: ToolSet, name: Any, arguments: Any) -> str:
    """The program line for one tool call, or a ``BadCall`` saying what is wrong with it."""
    tool = toolset.get(name) if isinstance(name, str) else None
    if tool is None:
        raise BadCall(
            f"there is no tool named {_shown(name)}; the tools are {', '.join(toolset.names())}"
        )
    given = parse_arguments(arguments)
    expected = [p.name for p in tool.params]
    unknown = [key for key in given if key not in expected]
    if unknown:
        listed = ", ".join(expected) or "no arguments"
        raise BadCall(f"{tool.name} has no argument {_shown(unknown[0])} (it takes {listed})")
    missing = [key for key in expected if key not in given]
    if missing:
        raise BadCall(f"{tool.name} needs the argument '{missing[0]}'")
    values = ", ".join(_literal(p, given[p.name]) for p in tool.params)
    return f"{RECEIVER}.{tool.name}({values})"


# -- gold programs -> tool calls (for the oracle) ------------------------------------------------


def _wrapped(node: ast.expr) -> Any:
    """The JSON form of ``Loc(name)`` / ``Date(m, d, y)``, or ``None`` for another node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.keywords:
        return None
    args = [ast.literal_eval(arg) for arg in node.args]
    if node.func.id == "Loc" and len(args) == 1:
        return args[0]
    if node.func.id == "Date" and len(args) == 3:
        return dict(zip(DATE_FIELDS, args, strict=True))
    return None


def _value(node: ast.expr, names: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"the gold uses {node.id!r} before setting it")
        return names[node.id]
    wrapped = _wrapped(node)
    return wrapped if wrapped is not None else ast.literal_eval(node)


def gold_calls(toolset: ToolSet, program: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls (name, arguments) a gold program makes, in order.

    Raises ``ValueError`` (or ``SyntaxError``) for a gold outside the known shapes: lines
    ``API.method(literal or wrapper or name, ...)`` and ``name = Loc(...)`` / ``Date(...)``.
    """
    names: dict[str, Any] = {}
    calls: list[tuple[str, dict[str, Any]]] = []
    for statement in ast.parse(program).body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and _wrapped(statement.value) is not None
        ):
            names[statement.targets[0].id] = _wrapped(statement.value)
            continue
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == RECEIVER
        ):
            raise ValueError(f"line {statement.lineno} is not an API call")
        tool = toolset.get(call.func.attr)
        if tool is None or len(call.args) > len(tool.params):
            raise ValueError(f"line {statement.lineno} does not fit a tool")
        arguments = {p.name: _value(a, names) for p, a in zip(tool.params, call.args, strict=False)}
        arguments.update({k.arg: _value(k.value, names) for k in call.keywords if k.arg})
        calls.append((tool.name, arguments))
    return calls
