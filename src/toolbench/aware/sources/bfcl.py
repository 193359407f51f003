"""Berkeley Function Calling Leaderboard (v3/v4) categories that are incomplete by design.

BFCL files are JSON lines despite their ``.json`` names. Four categories are read; the category
comes from the file name (``BFCL_v4_<category>.json``):

* ``irrelevance`` / ``live_irrelevance``: none of the offered functions can serve the request.
  Each record is one incomplete instance (``tool_removal``: the right tool is absent), accepted
  as labelled by BFCL. ``system`` messages (some live records have them) have no turn role here,
  so they are kept in ``provenance.notes["system"]``.
* ``multi_turn_miss_param``: at one turn (ground truth ``[]``) the user leaves out something a
  call needs, and the next user turn supplies it. The incomplete instance is the dialogue up
  to that turn (``slot_removal``); its complete twin (id + ``-complete``) adds the supplying
  turn and has that turn's ground truth as gold.
* ``multi_turn_miss_func``: ``missed_function`` maps a turn index to functions held out until
  then. BFCL's question at that index is empty (it is where the functions are handed over) and
  the request that needs them is the turn before it, whose ground truth is ``[]``. The
  incomplete instance is the dialogue up to that request without the held-out functions
  (``tool_removal``); the complete twin offers them and its gold is the calls BFCL expects once
  they are there.

Multi-turn records name their API classes (``involved_classes``); the function docs are in
BFCL's ``multi_turn_func_doc/`` folder (one JSON-lines file per class, mapped as BFCL maps
them) and the ground truth in ``possible_answer/<same file name>``. Both are looked for beside
the data file and one folder up. Earlier turns' gold calls become tool turns (content: the call
as BFCL writes it), so the dialogue shows what was already done. ``excluded_function`` is kept
in the notes and not applied: BFCL itself offers every function of the involved classes.

Other BFCL categories (simple, multiple, multi_turn_base...) in a folder are skipped; a file
whose name is not a BFCL category at all is an error, so a misnamed irrelevance file cannot
vanish unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.aware.schema import (
    ApiSpec,
    Instance,
    Provenance,
    Role,
    Turn,
    Verification,
    complete_instance,
)
from toolbench.aware.sources._calls import CallSyntaxError, ParsedCall, parse_call
from toolbench.aware.sources._files import (
    check_unique_ids,
    input_files,
    iter_json_lines,
    record_errors,
    require,
    where_line,
)
from toolbench.errors import UserError

SOURCE = "bfcl"
IRRELEVANCE = "irrelevance"
LIVE_IRRELEVANCE = "live_irrelevance"
MISS_PARAM = "multi_turn_miss_param"
MISS_FUNC = "multi_turn_miss_func"
CATEGORIES = (IRRELEVANCE, LIVE_IRRELEVANCE, MISS_PARAM, MISS_FUNC)
MISSING_IRRELEVANT = "none of the offered functions can serve the request"
FUNC_DOC_DIR = "multi_turn_func_doc"
ANSWER_DIR = "possible_answer"
#: BFCL's class -> function-doc file (bfcl_eval.constants MULTI_TURN_FUNC_DOC_FILE_MAPPING).
FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
#: BFCL categories this loader does not read (skipped in a folder, named in errors).
OTHER_CATEGORIES = frozenset(
    {
        "simple",
        "simple_python",
        "simple_java",
        "simple_javascript",
        "multiple",
        "parallel",
        "parallel_multiple",
        "java",
        "javascript",
        "sql",
        "chatable",
        "rest",
        "relevance",
        "exec_simple",
        "exec_multiple",
        "exec_parallel",
        "exec_parallel_multiple",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
        "live_relevance",
        "multi_turn_base",
        "multi_turn_long_context",
        "multi_turn_composite",
        "memory",
        "web_search",
        "format_sensitivity",
    }
)
_VERSIONED = re.compile(r"^BFCL_v\d+_\w+$")
_TYPES = {
    "dict": "object",
    "object": "object",
    "hashmap": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "int": "integer",
    "integer": "integer",
    "long": "integer",
    "str": "string",
    "string": "string",
    "char": "string",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "arraylist": "array",
    "tuple": "array",
    "null": "null",
}
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "tool": "tool"}
_ACCEPTED = Verification(status="accepted", by="source")


def category_of(path: Path) -> str | None:
    """The category this loader reads from the file name, or None."""
    stem = path.name.split(".", 1)[0]
    for category in (LIVE_IRRELEVANCE, IRRELEVANCE, MISS_PARAM, MISS_FUNC):
        if category in stem:
            return category
    return None


def _other_bfcl_file(path: Path) -> bool:
    stem = path.name.split(".", 1)[0]
    return bool(_VERSIONED.match(stem)) or stem in OTHER_CATEGORIES


def load_bfcl(path: Path) -> list[Instance]:
    """Instances from one BFCL file, or from every file of a BFCL data folder (sorted)."""
    instances: list[Instance] = []
    ids: list[tuple[str, str]] = []
    for file, category in _category_files(path):
        if category in (IRRELEVANCE, LIVE_IRRELEVANCE):
            loaded = _irrelevance_file(file, category)
        else:
            loaded = _MultiTurnFile(file, category).instances()
        instances.extend(loaded)
        ids.extend((i.id, f"{file} (id={i.provenance.original_id})") for i in loaded)
    check_unique_ids(ids)
    return instances


def _category_files(path: Path) -> list[tuple[Path, str]]:
    wanted = ", ".join(CATEGORIES)
    if path.is_file():
        category = category_of(path)
        if category is None:
            raise UserError(
                f"{path}: not a BFCL category this loader reads; the file name must contain "
                f"one of: {wanted} (as BFCL_v4_<category>.json does)"
            )
        return [(path, category)]
    files = input_files(path, lambda p: p.suffix in (".json", ".jsonl"), "BFCL data files")
    chosen = []
    for file in files:
        category = category_of(file)
        if category is not None:
            chosen.append((file, category))
        elif not _other_bfcl_file(file):
            raise UserError(
                f"{file}: not a BFCL data file name (expected BFCL_v<N>_<category>.json); "
                "rename it or move it out of the folder"
            )
    if not chosen:
        raise UserError(f"{path}: no BFCL file of a category this loader reads ({wanted})")
    return chosen


# ---------------------------------------------------------------------------------------------
# function docs and dialogue turns


def function_specs(functions: Iterable[Any], where: str) -> list[ApiSpec]:
    """BFCL function docs -> ``ApiSpec``s (JSON-schema parameters), identical repeats merged."""
    specs: dict[str, tuple[Any, ApiSpec]] = {}
    for number, doc in enumerate(functions):
        doc_where = f"{where}: function {number}"
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"]:
            raise UserError(f"{doc_where}: each function doc must be an object with a 'name'")
        name = doc["name"]
        if name in specs:
            if specs[name][0] != doc:
                raise UserError(f"{doc_where}: '{name}' is documented twice, differently")
            continue
        specs[name] = (doc, _function_spec(doc, doc_where))
    return [spec for _, spec in specs.values()]


def _function_spec(doc: dict[str, Any], where: str) -> ApiSpec:
    parameters = doc.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise UserError(f"{where}: 'parameters' of '{doc['name']}' must be an object")
    schema = json_schema(parameters)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    return ApiSpec(
        name=doc["name"],
        description=str(doc.get("description") or ""),
        parameters=schema,
        origin={k: v for k, v in doc.items() if k not in ("name", "description", "parameters")},
    )


def json_schema(node: Any) -> Any:
    """BFCL's schema dialect -> JSON schema, recursively.

    ``dict`` -> ``object``, ``float`` -> ``number``, ``tuple`` -> ``array`` (and the other
    Python/Java names); ``any`` means no constraint, so the ``type`` goes. A type JSON schema
    has no name for is kept as ``x-bfcl-type`` rather than lost.
    """
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            _put_type(out, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: json_schema(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = json_schema(value)
        else:
            out[key] = value
    return out


def _put_type(out: dict[str, Any], bfcl_type: str) -> None:
    lowered = bfcl_type.strip().lower()
    if lowered == "any":
        return
    if lowered in _TYPES:
        out["type"] = _TYPES[lowered]
    else:
        out["x-bfcl-type"] = bfcl_type


def question_turns(question: Any, where: str) -> tuple[list[list[Turn]], list[str]]:
    """BFCL ``question`` -> turns grouped per BFCL turn, plus the system messages' texts."""
    if isinstance(question, str):  # BFCL v1 wrote a plain string
        return [[Turn(role="user", content=question)]], []
    if not isinstance(question, list):
        raise UserError(f"{where}: 'question' must be a list of turns")
    groups = [question] if question and all(isinstance(m, dict) for m in question) else question
    turns: list[list[Turn]] = []
    system: list[str] = []
    for number, group in enumerate(groups):
        if not isinstance(group, list):
            raise UserError(f"{where}: question[{number}] must be a list of messages")
        turns.append([])
        for message in group:
            role, content = _message(message, f"{where}: question[{number}]")
            if role == "system":
                system.append(content)
            else:
                turns[-1].append(Turn(role=_ROLES[role], content=content))
    return turns, system


def _message(message: Any, where: str) -> tuple[str, str]:
    if not isinstance(message, dict):
        raise UserError(f"{where}: each message must be an object with 'role' and 'content'")
    role = message.get("role")
    if role != "system" and role not in _ROLES:
        raise UserError(
            f"{where}: message role {role!r} is not one of user, assistant, tool, system"
        )
    content = message.get("content")
    if not isinstance(content, str):
        raise UserError(f"{where}: a {role} message has no text 'content'")
    return str(role), content


# ---------------------------------------------------------------------------------------------
# irrelevance


def _irrelevance_file(file: Path, category: str) -> list[Instance]:
    instances = []
    for number, record in iter_json_lines(file, f"BFCL {category} records"):
        where = where_line(file, number, record)
        with record_errors(where):
            instances.append(_irrelevance_instance(file, category, record, where))
    return instances


def _irrelevance_instance(
    file: Path, category: str, record: dict[str, Any], where: str
) -> Instance:
    record_id = require(record, "id", str, where)
    groups, system = question_turns(require(record, "question", (list, str), where), where)
    dialogue = [turn for group in groups for turn in group]
    if not dialogue:
        raise UserError(f"{where}: 'question' holds no user or assistant message")
    notes: dict[str, Any] = {"category": category}
    if system:
        notes["system"] = system
    return Instance(
        id=f"bfcl-{record_id}",
        source=SOURCE,
        dialogue=dialogue,
        apis=function_specs(require(record, "function", list, where), where),
        relevant_apis=[],
        gold_calls=[],
        label="incomplete",
        manipulation="tool_removal",
        twin_id=None,
        provenance=Provenance(
            original_id=record_id,
            source_file=file.name,
            missing=MISSING_IRRELEVANT,
            generator=f"bfcl:{category}",
            notes=notes,
        ),
        verification=_ACCEPTED,
    )


# ---------------------------------------------------------------------------------------------
# multi-turn


@dataclass
class _Record:
    """One multi-turn record with everything resolved: turns, ground truth, function docs."""

    record_id: str
    where: str
    source_file: str
    turns: list[list[Turn]]
    truth: list[list[str]]
    specs: list[ApiSpec]
    notes: dict[str, Any]

    def params(self, name: str) -> list[str]:
        for spec in self.specs:
            if spec.name == name:
                return list(spec.parameters.get("properties", {}))
        return []

    def history(self, upto: int) -> list[Turn]:
        """Turns before ``upto``: each turn's messages, then its gold calls as tool turns."""
        out: list[Turn] = []
        for index in range(upto):
            out.extend(self.turns[index])
            out.extend(self._call_turn(text) for text in self.truth[index])
        return out

    def _call_turn(self, text: str) -> Turn:
        try:
            call = parse_call(text)
        except CallSyntaxError:  # context only: keep the text even if it cannot be read
            return Turn(role="tool", content=text)
        return Turn(
            role="tool",
            content=text,
            tool_name=call.name,
            tool_arguments=call.arguments(self.params(call.name)),
        )

    def called(self, calls: list[str], offered: list[ApiSpec]) -> list[str]:
        """Names the gold ``calls`` use, each checked to be among ``offered``."""
        names = {spec.name for spec in offered}
        used: list[str] = []
        for text in calls:
            call = self._gold_call(text)
            if call.name not in names:
                raise UserError(
                    f"{self.where}: the ground truth calls '{call.name}', which the involved "
                    "classes' function docs do not offer at that turn"
                )
            used.append(call.name)
        return list(dict.fromkeys(used))

    def _gold_call(self, text: str) -> ParsedCall:
        try:
            return parse_call(text)
        except CallSyntaxError as exc:
            raise UserError(
                f"{self.where}: ground truth call {text!r} cannot be read ({exc})"
            ) from None


@dataclass
class _MultiTurnFile:
    file: Path
    category: str
    _docs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def instances(self) -> list[Instance]:
        truth = self._ground_truth()
        doc_dir = self._doc_dir()
        out: list[Instance] = []
        for number, raw in iter_json_lines(self.file, f"BFCL {self.category} records"):
            record = self._record(raw, where_line(self.file, number, raw), truth, doc_dir)
            with record_errors(record.where):
                pairs = _miss_param(record) if self.category == MISS_PARAM else _miss_func(record)
            for incomplete, complete in pairs:
                out.extend([incomplete, complete])
        return out

    # -- the files beside the data ----------------------------------------------------------

    def _beside(self, folder: str, name: str = "") -> list[Path]:
        return [self.file.parent / folder / name, self.file.parent.parent / folder / name]

    def _ground_truth(self) -> dict[str, tuple[list[list[str]], str]]:
        candidates = self._beside(ANSWER_DIR, self.file.name)
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise UserError(
                f"{self.file}: its ground truth is missing; looked for "
                f"{' and '.join(str(p) for p in candidates)} (BFCL ships it as "
                f"{ANSWER_DIR}/{self.file.name})"
            )
        answers: dict[str, tuple[list[list[str]], str]] = {}
        for number, record in iter_json_lines(found, "BFCL possible answers"):
            where = where_line(found, number, record)
            answer_id = require(record, "id", str, where)
            answers[answer_id] = (
                _turn_calls(require(record, "ground_truth", list, where), where),
                where,
            )
        return answers

    def _doc_dir(self) -> Path:
        candidates = self._beside(FUNC_DOC_DIR)
        found = next((p for p in candidates if p.is_dir()), None)
        if found is None:
            raise UserError(
                f"{self.file}: the multi-turn function docs are missing; looked for the folder "
                f"{' and '.join(str(p) for p in candidates)} (BFCL ships {FUNC_DOC_DIR}/ "
                "beside the data)"
            )
        return found

    def _class_docs(self, doc_dir: Path, name: str, where: str) -> list[dict[str, Any]]:
        if name not in FUNC_DOC_FILES:
            raise UserError(
                f"{where}: unknown involved class {name!r} (BFCL's classes: "
                f"{', '.join(sorted(FUNC_DOC_FILES))})"
            )
        if name not in self._docs:
            path = doc_dir / FUNC_DOC_FILES[name]
            if not path.is_file():
                raise UserError(
                    f"{where}: the function docs of {name} are missing; looked for {path}"
                )
            self._docs[name] = [doc for _, doc in iter_json_lines(path, f"{name} function docs")]
        return self._docs[name]

    # -- one record ---------------------------------------------------------------------------

    def _record(
        self,
        raw: dict[str, Any],
        where: str,
        truth: dict[str, tuple[list[list[str]], str]],
        doc_dir: Path,
    ) -> _Record:
        record_id = require(raw, "id", str, where)
        turns, _ = question_turns(require(raw, "question", list, where), where)
        classes = require(raw, "involved_classes", list, where)
        if record_id not in truth:
            raise UserError(f"{where}: no ground truth with id '{record_id}' in {ANSWER_DIR}/")
        calls, answer_where = truth[record_id]
        if len(calls) != len(turns):
            raise UserError(
                f"{answer_where}: {len(calls)} ground-truth turns for {len(turns)} question "
                "turns; they must match one to one"
            )
        docs = [doc for name in classes for doc in self._class_docs(doc_dir, str(name), where)]
        notes: dict[str, Any] = {"category": self.category, "involved_classes": list(classes)}
        for key in ("excluded_function", "missed_function"):
            if key in raw:
                notes[key] = raw[key]
        return _Record(
            record_id=record_id,
            where=where,
            source_file=self.file.name,
            turns=turns,
            truth=calls,
            specs=function_specs(docs, f"{where}: involved classes"),
            notes=notes,
        )


def _turn_calls(value: list[Any], where: str) -> list[list[str]]:
    if not all(isinstance(t, list) and all(isinstance(c, str) for c in t) for t in value):
        raise UserError(f"{where}: 'ground_truth' must be a list (per turn) of call strings")
    return value


def _user_text(turns: list[Turn]) -> str:
    return "\n".join(turn.content for turn in turns if turn.role == "user")


def _pair(
    record: _Record,
    *,
    base_id: str,
    turn: int,
    complete_dialogue: list[Turn],
    complete_apis: list[ApiSpec],
    gold: list[str],
    incomplete_dialogue: list[Turn],
    incomplete_apis: list[ApiSpec],
    **changes: Any,
) -> tuple[Instance, Instance]:
    category = record.notes["category"]
    notes = {**record.notes, "turn": turn}
    complete = complete_instance(
        id=f"{base_id}-complete",
        source=SOURCE,
        dialogue=complete_dialogue,
        apis=complete_apis,
        relevant_apis=record.called(gold, complete_apis),
        gold_calls=gold,
        provenance=Provenance(
            original_id=record.record_id,
            source_file=record.source_file,
            generator=f"bfcl:{category}",
            notes=notes,
        ),
    )
    incomplete = Instance(
        id=base_id,
        source=SOURCE,
        dialogue=incomplete_dialogue,
        apis=incomplete_apis,
        relevant_apis=[],
        gold_calls=gold,
        label="incomplete",
        manipulation="slot_removal" if category == MISS_PARAM else "tool_removal",
        twin_id=complete.id,
        provenance=Provenance(
            original_id=record.record_id,
            source_file=record.source_file,
            generator=f"bfcl:{category}",
            notes=notes,
            **changes,
        ),
        verification=_ACCEPTED,
    )
    return incomplete, complete


def _pair_id(record: _Record, turn: int, count: int) -> str:
    base = f"bfcl-{record.record_id}"
    return base if count == 1 else f"{base}-turn{turn}"


def _miss_param(record: _Record) -> list[tuple[Instance, Instance]]:
    """One pair per turn whose ground truth is ``[]`` and whose next turn supplies the gap."""
    turns, truth = record.turns, record.truth
    gaps = [
        k
        for k in range(len(turns) - 1)
        if not truth[k] and _user_text(turns[k]) and _user_text(turns[k + 1]) and truth[k + 1]
    ]
    if not gaps:
        raise UserError(
            f"{record.where}: no turn with ground truth [] followed by a user turn that "
            "supplies the missing information (what multi_turn_miss_param records hold)"
        )
    pairs = []
    for k in gaps:
        asked = record.history(k) + turns[k]
        supplied = _user_text(turns[k + 1])
        pairs.append(
            _pair(
                record,
                base_id=_pair_id(record, k, len(gaps)),
                turn=k,
                complete_dialogue=asked + turns[k + 1],
                complete_apis=record.specs,
                gold=truth[k + 1],
                incomplete_dialogue=asked,
                incomplete_apis=record.specs,
                removed_text=[supplied],
                missing=(
                    "the request leaves out information a call needs; the user supplies it "
                    f"only in the next turn: {supplied!r}"
                ),
            )
        )
    return pairs


def _missed_functions(record: _Record, raw: Any) -> list[tuple[int, list[str]]]:
    if not isinstance(raw, dict) or not raw:
        raise UserError(
            f"{record.where}: 'missed_function' must map a turn index to the held-out "
            'function names (e.g. {"3": ["sort"]})'
        )
    out: list[tuple[int, list[str]]] = []
    for key, names in raw.items():
        if not (str(key).isdigit() and isinstance(names, list) and names):
            raise UserError(f"{record.where}: missed_function[{key!r}] must list function names")
        if not all(isinstance(n, str) for n in names):
            raise UserError(f"{record.where}: missed_function[{key!r}] must list function names")
        out.append((int(key), list(names)))
    return sorted(out)


def _miss_func(record: _Record) -> list[tuple[Instance, Instance]]:
    """One pair per held-out turn: the request before it, without and with the functions."""
    missed = _missed_functions(record, record.notes.get("missed_function"))
    known = {spec.name for spec in record.specs}
    pairs = []
    for k, names in missed:
        if not 1 <= k < len(record.turns) or record.turns[k] or not _user_text(record.turns[k - 1]):
            raise UserError(
                f"{record.where}: missed_function turn {k} must be an empty question turn that "
                "follows a user request (as BFCL writes multi_turn_miss_func records)"
            )
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UserError(
                f"{record.where}: missed function(s) {', '.join(unknown)} not in the involved "
                "classes' function docs"
            )
        later = {n for turn, more in missed if turn > k for n in more}
        with_them = [spec for spec in record.specs if spec.name not in later]
        without = [spec for spec in with_them if spec.name not in names]
        request = record.history(k - 1) + record.turns[k - 1]
        pairs.append(
            _pair(
                record,
                base_id=_pair_id(record, k, len(missed)),
                turn=k,
                complete_dialogue=request,
                complete_apis=with_them,
                gold=record.truth[k - 1] + record.truth[k],
                incomplete_dialogue=request,
                incomplete_apis=without,
                removed_apis=list(names),
                missing=(
                    f"the request needs {', '.join(names)}, which none of the offered "
                    "functions provides"
                ),
            )
        )
    return pairs
