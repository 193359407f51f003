"""StableToolBench / OpenBMB ToolBench query files as complete single-turn instances.

A query file (``G1_instruction.json``...) is a JSON list of queries, each with the APIs offered
(``api_list``) and the ones a solution needs (``"relevant APIs"`` as ``[tool, api]`` pairs).
Each query becomes one complete instance: the query as the user turn, every offered API as a
JSON-schema ``ApiSpec``.

API names follow ToolBench's own function naming, ``<api>_for_<tool>`` with both parts
standardised (lower case, runs of other characters -> ``_``, a leading digit gets ``get_``,
Python-ish reserved words get ``is_``) and the last 64 characters kept, so the names are the
ones ToolBench-trained models saw and match ``^[a-zA-Z0-9_]{1,64}$`` (what function-calling
APIs accept). Two APIs of one query that still collide get ``_2``, ``_3``...

``load_api_pool`` gives every distinct API of the files: the pool API replacement draws
similar-but-irrelevant APIs from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, complete_instance
from toolbench.aware.sources._files import (
    check_unique_ids,
    input_files,
    read_json_list,
    record_errors,
    require,
    where_record,
)
from toolbench.errors import UserError

SOURCE = "toolbench"
GENERATOR = "toolbench-loader"
MAX_NAME = 64
_WHAT = "StableToolBench query files (G1_instruction.json ...)"
_RELEVANT = "relevant APIs"
_NOT_NAME_CHARS = re.compile(r"[^a-z0-9_]+")
_RUNS = re.compile(r"_+")
#: Names ToolBench renames because they clash with keywords of the generated code.
_RENAMED = {"from", "class", "return", "false", "true", "id", "and", ""}
#: ToolBench parameter types -> JSON schema. Unknown types are strings, as ToolBench treats them.
_JSON_TYPES = {
    "STRING": "string",
    "STR": "string",
    "ENUM": "string",
    "NUMBER": "number",
    "FLOAT": "number",
    "DOUBLE": "number",
    "INTEGER": "integer",
    "INT": "integer",
    "BOOLEAN": "boolean",
    "BOOL": "boolean",
    "ARRAY": "array",
    "LIST": "array",
    "OBJECT": "object",
    "JSON": "object",
    "DICT": "object",
}

ApiKey = tuple[str, str]  # (tool_name, api_name): an API's identity in ToolBench


@dataclass(frozen=True)
class _Api:
    key: ApiKey
    raw: dict[str, Any]
    where: str


def load_stabletoolbench(path: Path) -> list[Instance]:
    """Complete instances from a query file, or every ``*.json`` query file in a folder."""
    instances: list[Instance] = []
    ids: list[tuple[str, str]] = []
    for file in input_files(path, _is_query_file, _WHAT):
        for index, record in enumerate(read_json_list(file, "StableToolBench queries")):
            where = where_record(file, index, record, id_key="query_id")
            with record_errors(where):
                instance = _query_instance(file, record, where)
            instances.append(instance)
            ids.append((instance.id, where))
    check_unique_ids(ids)
    return instances


def load_api_pool(path: Path) -> list[ApiSpec]:
    """Every distinct API (by tool and API name) in the file(s), in first-seen order.

    Names are the same as in the loaded instances; two different APIs whose names collide get a
    numeric suffix here too (in order of appearance), so pool names are unique.
    """
    seen: dict[ApiKey, _Api] = {}
    for file in input_files(path, _is_query_file, _WHAT):
        for index, record in enumerate(read_json_list(file, "StableToolBench queries")):
            for api in _apis_of(record, where_record(file, index, record, id_key="query_id")):
                seen.setdefault(api.key, api)
    return _specs(list(seen.values()))


def _is_query_file(path: Path) -> bool:
    return path.suffix == ".json"


def _query_instance(file: Path, record: Any, where: str) -> Instance:
    if not isinstance(record, dict):
        raise UserError(f"{where}: each query must be a JSON object")
    query = require(record, "query", str, where)
    query_id = require(record, "query_id", (int, str), where)
    apis = _unique_apis(_apis_of(record, where))
    specs = _specs(apis)
    name_of = {api.key: spec.name for api, spec in zip(apis, specs, strict=True)}
    relevant = [name_of[key] for key in _relevant_keys(record, where, set(name_of))]
    return complete_instance(
        id=f"toolbench-{file.stem}-{query_id}",
        source=SOURCE,
        dialogue=[Turn(role="user", content=query)],
        apis=specs,
        relevant_apis=list(dict.fromkeys(relevant)),
        gold_calls=[],
        provenance=Provenance(
            original_id=str(query_id),
            source_file=file.name,
            generator=GENERATOR,
        ),
    )


def _apis_of(record: Any, where: str) -> Iterator[_Api]:
    if not isinstance(record, dict):
        raise UserError(f"{where}: each query must be a JSON object")
    api_list = require(record, "api_list", list, where)
    for number, raw in enumerate(api_list):
        api_where = f"{where}: api_list[{number}]"
        if not isinstance(raw, dict):
            raise UserError(f"{api_where}: each API must be a JSON object")
        tool = require(raw, "tool_name", str, api_where)
        api = require(raw, "api_name", str, api_where)
        yield _Api(key=(tool, api), raw=raw, where=api_where)


def _unique_apis(apis: Iterator[_Api]) -> list[_Api]:
    """One entry per (tool, api): a query listing an API twice offers it once."""
    unique: dict[ApiKey, _Api] = {}
    for api in apis:
        unique.setdefault(api.key, api)
    return list(unique.values())


def _relevant_keys(record: dict[str, Any], where: str, offered: set[ApiKey]) -> list[ApiKey]:
    pairs = require(record, _RELEVANT, list, where)
    keys: list[ApiKey] = []
    for number, pair in enumerate(pairs):
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise UserError(
                f"{where}: '{_RELEVANT}'[{number}] must be a [tool_name, api_name] pair"
            )
        key = (pair[0], pair[1])
        if key not in offered:
            raise UserError(
                f"{where}: relevant API {pair[1]!r} of tool {pair[0]!r} is not in its api_list"
            )
        keys.append(key)
    if not keys:
        raise UserError(f"{where}: '{_RELEVANT}' is empty; a query needs at least one")
    return keys


# ---------------------------------------------------------------------------------------------
# names


def standardize(text: str) -> str:
    """ToolBench's name standardisation (ASCII only, so names stay ``[a-z0-9_]``)."""
    name = _RUNS.sub("_", _NOT_NAME_CHARS.sub("_", text.lower())).strip("_")
    if name[:1].isdigit():
        name = f"get_{name}"
    return name


def function_name(tool_name: str, api_name: str) -> str:
    """``<api>_for_<tool>`` as ToolBench names functions, at most 64 characters."""
    api = standardize(api_name)
    if api in _RENAMED:
        api = f"is_{api}"
    # ToolBench keeps the last 64 characters (the tool part survives a long API name).
    return f"{api}_for_{standardize(tool_name)}"[-MAX_NAME:]


def _unique_names(names: list[str]) -> list[str]:
    """Collisions get ``_2``, ``_3``... (the base shortened so the name stays <= 64)."""
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        candidate, number = name, 1
        while candidate in taken:
            number += 1
            suffix = f"_{number}"
            candidate = name[: MAX_NAME - len(suffix)] + suffix
        taken.add(candidate)
        out.append(candidate)
    return out


# ---------------------------------------------------------------------------------------------
# specs


def _specs(apis: list[_Api]) -> list[ApiSpec]:
    names = _unique_names([function_name(*api.key) for api in apis])
    return [_spec(api, name) for api, name in zip(apis, names, strict=True)]


def _spec(api: _Api, name: str) -> ApiSpec:
    raw = api.raw
    required = _parameters(raw, "required_parameters", api.where)
    optional = _parameters(raw, "optional_parameters", api.where)
    properties: dict[str, Any] = {}
    for param in required + optional:
        properties.setdefault(param["name"], _property(param))
    return ApiSpec(
        name=name,
        description=str(raw.get("api_description") or "").strip(),
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(dict.fromkeys(p["name"] for p in required)),
        },
        origin={
            "category_name": str(raw.get("category_name") or ""),
            "tool_name": api.key[0],
            "api_name": api.key[1],
            "method": str(raw.get("method") or ""),
        },
    )


def _parameters(raw: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    params = raw.get(key) or []
    if not isinstance(params, list):
        raise UserError(f"{where}: '{key}' must be a list of parameters")
    for number, param in enumerate(params):
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise UserError(f"{where}: {key}[{number}] must be an object with a 'name'")
    return params


def _property(param: dict[str, Any]) -> dict[str, Any]:
    """A ToolBench parameter as a JSON-schema property; its default (an example value) kept."""
    raw_type = str(param.get("type") or "STRING").strip().upper()
    schema: dict[str, Any] = {
        "type": _JSON_TYPES.get(raw_type.split(" ", 1)[0], "string"),
        "description": str(param.get("description") or ""),
    }
    default = param.get("default")
    if default not in (None, ""):
        schema["default"] = default
    return schema
