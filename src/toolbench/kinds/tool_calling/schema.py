"""Function-tool schemas derived from a program task's real API class and its docs.

Tools mode offers each public API method as an OpenAI function tool. The parameter names and
types come from the method's own signature (``inspect`` + ``typing.get_type_hints``), so the
schema cannot drift from what the simulator accepts; the description comes from the method's
doc in the task's ``docs.FUNCTIONS`` (the same words the other modes show); allowed values come
from a small per-task table built from the API module's constants, because annotations say
``str`` and not which strings.

The booking API's wrapper values have no JSON form of their own, so they get one: a ``Loc`` is
the place name as a string, a ``Date`` is ``{"month", "day", "year"}``. The converter
(``convert.py``) turns those back into ``Loc(...)`` / ``Date(...)`` in the program it builds.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

RECEIVER = "API"  # the name the API object has in the task's world


class Kind(str, enum.Enum):
    """The value shapes a tool parameter can take (and how each becomes a Python literal)."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    STRING_LIST = "string_list"
    PLACE = "place"  # Loc(name)
    DATE = "date"  # Date(month, day, year)


DATE_FIELDS = ("month", "day", "year")


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    allowed: tuple[str, ...] = ()  # advertised as ``enum``; the simulator judges the value

    def json_schema(self) -> dict[str, Any]:
        if self.kind is Kind.STRING:
            schema: dict[str, Any] = {"type": "string"}
            if self.allowed:
                schema["enum"] = list(self.allowed)
            return schema
        if self.kind is Kind.INTEGER:
            return {"type": "integer"}
        if self.kind is Kind.NUMBER:
            return {"type": "number"}
        if self.kind is Kind.STRING_LIST:
            items: dict[str, Any] = {"type": "string"}
            if self.allowed:
                items["enum"] = list(self.allowed)
            return {"type": "array", "items": items}
        if self.kind is Kind.PLACE:
            return {"type": "string", "description": "a place name: a city or an airport code"}
        return {
            "type": "object",
            "description": "a calendar date as numbers, e.g. March 14, 2025 is "
            '{"month": 3, "day": 14, "year": 2025}',
            "properties": {name: {"type": "integer"} for name in DATE_FIELDS},
            "required": list(DATE_FIELDS),
            "additionalProperties": False,
        }


@dataclass(frozen=True)
class ToolSpec:
    """One API method as a tool: its name, what it does, and its parameters in call order."""

    name: str
    description: str
    params: tuple[Param, ...]

    def openai(self) -> dict[str, Any]:
        """The OpenAI function-tool dict for this method."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.json_schema() for p in self.params},
                    "required": [p.name for p in self.params],
                    "additionalProperties": False,
                },
            },
        }


@dataclass(frozen=True)
class ToolSet:
    """A task's tools, in the order its docs list them."""

    tools: tuple[ToolSpec, ...]

    def get(self, name: str) -> ToolSpec | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    def openai(self) -> tuple[dict[str, Any], ...]:
        return tuple(tool.openai() for tool in self.tools)


@runtime_checkable
class HasToolset(Protocol):
    """A task whose API is offered as native tools (``--mode tools``, owned by this package):
    the runner refuses tools mode for a task without it, ``toolbench prompt --mode tools``
    prints its schemas, and a program task with it can be solved by an agent too."""

    @property
    def toolset(self) -> ToolSet: ...


def _kind_of(annotation: Any, wrappers: Mapping[type, Kind]) -> Kind:
    """The parameter kind of a resolved annotation; anything else is a programming error,
    caught when the task module is imported (and by the schema tests)."""
    if annotation in wrappers:
        return wrappers[annotation]
    simple = {str: Kind.STRING, int: Kind.INTEGER, float: Kind.NUMBER}
    if annotation in simple:
        return simple[annotation]
    if typing.get_origin(annotation) in (list, tuple) and typing.get_args(annotation)[:1] == (str,):
        return Kind.STRING_LIST
    raise TypeError(f"no tool parameter kind for the annotation {annotation!r}")


def describe(doc: str) -> str:
    """The comment lines of a task doc ('# ...'), without the signature line: the sentence the
    other modes show above the signature."""
    lines = [line[1:].strip() for line in doc.splitlines() if line.startswith("#")]
    return " ".join(lines)


def derive_toolset(
    api_class: type,
    docs: Mapping[str, str],
    allowed: Mapping[tuple[str, str], Sequence[str]] | None = None,
    wrappers: Mapping[type, Kind] | None = None,
) -> ToolSet:
    """Every method of ``api_class`` that ``docs`` describes, as a tool.

    ``allowed`` maps (method, parameter) to the values the docs name; ``wrappers`` maps the
    task's value classes (booking's ``Loc`` and ``Date``) to their kinds. Doc entries that are
    not methods (the wrappers themselves) are skipped: they are folded into the parameters.
    """
    allowed = allowed or {}
    wrappers = wrappers or {}
    tools = []
    for name, doc in docs.items():
        method = getattr(api_class, name, None)
        if name.startswith("_") or not inspect.isfunction(method):
            continue
        hints = typing.get_type_hints(method)
        params = []
        for param in list(inspect.signature(method).parameters.values())[1:]:  # skip self
            kind = _kind_of(hints[param.name], wrappers)
            params.append(Param(param.name, kind, tuple(allowed.get((name, param.name), ()))))
        tools.append(ToolSpec(name, describe(doc), tuple(params)))
    unknown = {key for key in allowed if key[0] not in {tool.name for tool in tools}}
    if unknown:
        raise ValueError(f"allowed values for methods that are not tools: {sorted(unknown)}")
    return ToolSet(tuple(tools))
