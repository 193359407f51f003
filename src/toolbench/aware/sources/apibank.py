"""API-Bank test data (``level-1-api.json``, ``level-2-api.json``) as complete instances.

Each record of those files is one point in a dialogue where the gold answer is an API request:
``instruction`` ends with the offered APIs (one JSON description per line after
"API descriptions:"), ``input`` is the dialogue so far ("User: ...", "AI: ...", and earlier
requests as "API-Request: [Name(...)]->result"), closed by the prompt line "Generate API
Request:", and ``expected_output`` is the gold request. Every record becomes one complete
instance: the dialogue as turns, the offered APIs as JSON-schema ``ApiSpec``s, the gold call.

Two documented exceptions, both records that need tool retrieval, which the paper leaves out:
a record whose gold request calls an API that the instruction does not describe (level-2
records that found the API through ToolSearcher) cannot be a complete instance, because the
API the gold needs is not offered; and a record whose gold request *is* the ToolSearcher call
(level 2's retrieval step) asks about searching for a tool, not about using one. They are
skipped; ``read_apibank`` reports each one and ``load_apibank`` logs one warning per reason
with the count and an example, not a line per record.

Ids are ``apibank-<dialogue file stem>-<record id>``: the record id counts within the dialogue
file named by the record's ``file`` field, so the pair is what identifies a record.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.aware.schema import ApiSpec, Instance, Provenance, Role, Turn, complete_instance
from toolbench.aware.sources._calls import CallSyntaxError, ParsedCall, parse_call
from toolbench.aware.sources._files import (
    check_unique_ids,
    input_files,
    read_json_list,
    record_errors,
    require,
    where_record,
)
from toolbench.errors import UserError

SOURCE = "apibank"
GENERATOR = "apibank-loader"
_WHAT = "API-Bank test-data files (level-1-api.json / level-2-api.json)"
_DESCRIPTIONS_MARK = "API descriptions:"
_PROMPT_LINE = "Generate API Request:"
_REQUEST_PREFIX = "API-Request:"
_ROLE_LINE = re.compile(r"^(User|AI|API-Request|API):[ \t]?")
_ROLES: dict[str, Role] = {"User": "user", "AI": "assistant", "API-Request": "tool", "API": "tool"}
_TOOL_LINE = re.compile(r"^\s*(\[.*?\])\s*->(.*)$", re.DOTALL)
_CALLED_NAME = re.compile(r"^\s*\[?\s*([A-Za-z_][\w.]*)\s*\(")
_OPTIONAL = re.compile(r"\boptional\b", re.IGNORECASE)
#: API-Bank writes Python type names; JSON schema has its own. Unknown types get no "type".
_JSON_TYPES = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}

logger = logging.getLogger(__name__)
TOOL_SEARCHER = "ToolSearcher"
NEEDS_RETRIEVAL = "it needs tool retrieval"
IS_RETRIEVAL = "it is tool retrieval itself"


@dataclass(frozen=True)
class ApiBankLoad:
    instances: list[Instance] = field(default_factory=list)
    #: One line per skipped record: where it is and why it cannot be a complete instance.
    skipped: list[str] = field(default_factory=list)


def load_apibank(path: Path) -> list[Instance]:
    """Complete instances from an API-Bank test-data file, or every ``*.json`` in a folder."""
    loaded = read_apibank(path)
    for line in skip_summary(loaded.skipped):
        logger.warning("%s", line)
    return loaded.instances


def skip_summary(skipped: list[str]) -> list[str]:
    """One line per reason: how many records, and the first one as an example."""
    by_reason: dict[str, list[str]] = {}
    for line in skipped:
        reason = IS_RETRIEVAL if line.endswith(IS_RETRIEVAL) else NEEDS_RETRIEVAL
        by_reason.setdefault(reason, []).append(line)
    return [
        f"skipped {len(lines)} API-Bank record{'s' if len(lines) != 1 else ''}: "
        f"{reason} (e.g. {lines[0]})"
        for reason, lines in by_reason.items()
    ]


def read_apibank(path: Path) -> ApiBankLoad:
    """``load_apibank`` plus the list of records it left out and why."""
    loaded = ApiBankLoad()
    ids: list[tuple[str, str]] = []
    for file in input_files(path, lambda p: p.suffix == ".json", _WHAT):
        for index, record in enumerate(read_json_list(file, "API-Bank test data")):
            where = where_record(file, index, record)
            with record_errors(where):
                instance = _record_instance(file, record, where, loaded.skipped)
            if instance is not None:
                loaded.instances.append(instance)
                ids.append((instance.id, where))
    check_unique_ids(ids)
    return loaded


def _record_instance(file: Path, record: Any, where: str, skipped: list[str]) -> Instance | None:
    if not isinstance(record, dict):
        raise UserError(f"{where}: each record must be a JSON object")
    record_id = require(record, "id", (int, str), where)
    dialogue_file = require(record, "file", str, where)
    if not dialogue_file.strip():
        raise UserError(f"{where}: 'file' is empty; it names the dialogue the record is from")
    apis = parse_api_descriptions(require(record, "instruction", str, where), where)
    dialogue = parse_dialogue(require(record, "input", str, where), where)
    gold_text, call = parse_expected_output(require(record, "expected_output", str, where), where)
    offered = {api.name for api in apis}
    if call.name not in offered:
        skipped.append(
            f"{where}: the gold request calls '{call.name}', which the instruction does not "
            f"describe (offered: {', '.join(sorted(offered))}); {NEEDS_RETRIEVAL}"
        )
        return None
    if call.name == TOOL_SEARCHER:
        skipped.append(f"{where}: the gold request is the {TOOL_SEARCHER} call; {IS_RETRIEVAL}")
        return None
    return _instance(file, record_id, dialogue_file, dialogue, apis, gold_text, call.name)


def _instance(
    file: Path,
    record_id: int | str,
    dialogue_file: str,
    dialogue: list[Turn],
    apis: list[ApiSpec],
    gold_text: str,
    api_name: str,
) -> Instance:
    return complete_instance(
        id=f"apibank-{Path(dialogue_file).stem}-{record_id}",
        source=SOURCE,
        dialogue=dialogue,
        apis=apis,
        relevant_apis=[api_name],
        gold_calls=[gold_text],
        provenance=Provenance(
            original_id=str(record_id),
            source_file=file.name,
            generator=GENERATOR,
            notes={"file": dialogue_file},
        ),
    )


# ---------------------------------------------------------------------------------------------
# expected_output


def parse_expected_output(text: str, where: str = "expected_output") -> tuple[str, ParsedCall]:
    """``API-Request: [Name(key='v', ...)]`` -> (``Name(key='v', ...)``, the parsed call).

    Raises ``UserError`` (naming ``where``) for anything that is not one API request.
    """
    request = text.strip()
    if request.startswith(_REQUEST_PREFIX):
        request = request[len(_REQUEST_PREFIX) :].strip()
    if request.startswith("[") and request.endswith("]"):
        request = request[1:-1].strip()
    try:
        call = parse_call(request)
    except CallSyntaxError as exc:
        raise UserError(
            f"{where}: expected_output {_clip(text)!r} is not one API request like "
            f"\"API-Request: [Name(key='value')]\" ({exc})"
        ) from None
    return request, call


# ---------------------------------------------------------------------------------------------
# input (the dialogue)


def parse_dialogue(text: str, where: str = "input") -> list[Turn]:
    """The ``input`` dialogue as turns, without the closing "Generate API Request:" prompt.

    A line that does not start with a role ("User:", "AI:", "API-Request:") continues the
    utterance above it, so multi-line utterances and multi-line API results stay whole.
    Raises ``UserError`` (naming ``where``) when the text has no turns or starts mid-utterance.
    """
    lines = _drop_prompt_line(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    blocks: list[tuple[str, list[str]]] = []
    for number, line in enumerate(lines, start=1):
        match = _ROLE_LINE.match(line)
        if match is not None:
            blocks.append((match.group(1), [line[match.end() :]]))
        elif blocks:
            blocks[-1][1].append(line)
        elif line.strip():
            raise UserError(
                f"{where}: input line {number} ({_clip(line)!r}) does not start with "
                "'User:', 'AI:' or 'API-Request:'"
            )
    if not blocks:
        raise UserError(f"{where}: 'input' holds no dialogue turns (expected 'User: ...' lines)")
    return [_turn(_ROLES[role], "\n".join(body).strip()) for role, body in blocks]


def _drop_prompt_line(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if lines and lines[-1].strip() == _PROMPT_LINE:
        lines = lines[:-1]
    return lines


def _turn(role: Role, content: str) -> Turn:
    if role != "tool":
        return Turn(role=role, content=content)
    name, arguments = _request_of(content)
    return Turn(role="tool", content=content, tool_name=name, tool_arguments=arguments)


def _request_of(content: str) -> tuple[str | None, dict[str, Any] | None]:
    """The call behind an earlier ``[Name(...)]->result`` line, as far as it can be read.

    These turns are context, so a request that does not parse keeps its text (and the called
    name when visible) rather than failing the whole record.
    """
    match = _TOOL_LINE.match(content)
    if match is not None:
        try:
            call = parse_call(match.group(1))
        except CallSyntaxError:
            pass
        else:
            return call.name, call.arguments()
    named = _CALLED_NAME.match(content)
    return (named.group(1) if named else None), None


# ---------------------------------------------------------------------------------------------
# instruction (the offered APIs)


def parse_api_descriptions(instruction: str, where: str = "instruction") -> list[ApiSpec]:
    """The JSON API descriptions after "API descriptions:", as ``ApiSpec``s in order."""
    start = instruction.find(_DESCRIPTIONS_MARK)
    if start < 0:
        raise UserError(f"{where}: 'instruction' has no '{_DESCRIPTIONS_MARK}' section")
    specs: dict[str, tuple[dict[str, Any], ApiSpec]] = {}
    for number, description in enumerate(
        _json_objects(instruction[start + len(_DESCRIPTIONS_MARK) :], where), start=1
    ):
        spec = api_spec(description, f"{where}: API description {number}")
        if spec.name in specs and specs[spec.name][0] != description:
            raise UserError(f"{where}: the instruction describes '{spec.name}' twice, differently")
        specs.setdefault(spec.name, (description, spec))
    if not specs:
        raise UserError(f"{where}: no API descriptions after '{_DESCRIPTIONS_MARK}'")
    return [spec for _, spec in specs.values()]


def _json_objects(text: str, where: str) -> list[dict[str, Any]]:
    """Consecutive JSON objects (one per line in API-Bank, but any whitespace will do)."""
    decoder = json.JSONDecoder()
    objects: list[dict[str, Any]] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return objects
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{where}: API description {len(objects) + 1} in 'instruction' is not valid "
                f"JSON ({exc.msg})"
            ) from None
        if not isinstance(value, dict):
            raise UserError(f"{where}: API description {len(objects) + 1} is not a JSON object")
        objects.append(value)


def api_spec(description: dict[str, Any], where: str) -> ApiSpec:
    """One API-Bank description -> ``ApiSpec`` (input parameters as a JSON-schema object)."""
    name = description.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: has no 'name'")
    inputs = description.get("input_parameters") or {}
    if not isinstance(inputs, dict):
        raise UserError(f"{where}: 'input_parameters' of '{name}' must be an object")
    properties = {
        key: _property(value, f"{where}: parameter '{key}'") for key, value in inputs.items()
    }
    required = [
        key for key in inputs if not _OPTIONAL.search(properties[key].get("description", ""))
    ]
    return ApiSpec(
        name=name,
        description=str(description.get("description") or ""),
        parameters={"type": "object", "properties": properties, "required": required},
        origin={
            key: value
            for key, value in description.items()
            if key not in ("name", "description", "input_parameters")
        },
    )


def _property(spec: Any, where: str) -> dict[str, Any]:
    if isinstance(spec, str):  # a bare type name
        spec = {"type": spec}
    if not isinstance(spec, dict):
        raise UserError(f"{where}: expected {{type, description}}, found {type(spec).__name__}")
    schema: dict[str, Any] = {}
    json_type = _JSON_TYPES.get(str(spec.get("type", "")).strip().lower())
    if json_type is not None:
        schema["type"] = json_type
    schema["description"] = str(spec.get("description") or "")
    return schema


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
