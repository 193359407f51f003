"""The awareness dataset record: one instance per JSON line, versioned and validated on load.

An instance is a dialogue plus the APIs offered to the model, labelled ``complete`` (some API
can be invoked with what the user said) or ``incomplete`` (a needed API is missing, or the
user left out information a call requires). Incomplete instances made from a complete one keep
``twin_id`` pointing at it, and ``provenance`` records exactly what was changed, so evaluation
(issue 6) can ask a model *what* is missing and a judge can check the answer.

Files are written with one canonical serialisation (``dump_line``) so the same build with the
same seed gives the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolbench.errors import UserError, json_problem

SCHEMA_VERSION = 1

Label = Literal["complete", "incomplete"]
Manipulation = Literal[
    "none", "api_replacement", "utterance_removal", "slot_removal", "tool_removal"
]
MANIPULATIONS: tuple[str, ...] = (
    "none",
    "api_replacement",
    "utterance_removal",
    "slot_removal",
    "tool_removal",
)
Role = Literal["user", "assistant", "tool"]
Status = Literal["pending", "accepted", "rejected"]


class _Strict(BaseModel):
    # Unknown keys are an error: a typo in a hand-edited file must not vanish silently.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Strict):
    """One utterance. Tool turns carry the call that produced them when the source has it."""

    role: Role
    content: str
    tool_name: str | None = None
    tool_arguments: dict[str, Any] | None = None


class ApiSpec(_Strict):
    """An API as offered to the model: ``parameters`` is a JSON-schema object.

    ``name`` is unique within an instance. ``origin`` keeps source-specific identity (e.g.
    StableToolBench's tool and API names) so nothing from the source is lost.
    """

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    origin: dict[str, Any] = Field(default_factory=dict)

    def embedding_text(self) -> str:
        """What the dense encoder sees, as the paper: the name and the description."""
        return f"{self.name}: {self.description}".strip()


class Replacement(_Strict):
    """A relevant API swapped for a similar irrelevant one from the dataset's pool."""

    original: str
    replacement: str
    similarity: float
    rank: int = Field(ge=1)


class Provenance(_Strict):
    """Where an instance came from and exactly what was changed to make it."""

    original_id: str
    source_file: str = ""
    replacements: list[Replacement] = Field(default_factory=list)
    #: Text removed from the user's words (verbatim spans of the original dialogue).
    removed_text: list[str] = Field(default_factory=list)
    #: Arguments whose values the removal took away (e.g. "location", "checkin_date").
    removed_slots: list[str] = Field(default_factory=list)
    #: APIs taken out of the offered list (tool removal).
    removed_apis: list[str] = Field(default_factory=list)
    #: One sentence a person (or a judge model) can check an explanation against.
    missing: str = ""
    #: What made the instance: "apibank-loader", "api_replacement encoder=<id>", a model spec...
    generator: str = ""
    seed: int | None = None
    #: Anything else the source or the manipulation wants to keep (model rationale, BFCL fields).
    notes: dict[str, Any] = Field(default_factory=dict)


class Verification(_Strict):
    status: Status = "pending"
    reasons: list[str] = Field(default_factory=list)
    #: "auto" for automatic checks, "construction" for exact-by-construction, else a reviewer.
    by: str = ""
    #: The reviewer's free-text note (required in practice for the reason "other").
    note: str = ""


class Instance(_Strict):
    schema_version: int = SCHEMA_VERSION
    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    dialogue: list[Turn] = Field(min_length=1)
    apis: list[ApiSpec]
    #: Names (within ``apis`` of the complete instance) of the APIs the gold call needs.
    relevant_apis: list[str] = Field(default_factory=list)
    #: Gold calls of the complete instance as text, when the source has them.
    gold_calls: list[str] = Field(default_factory=list)
    label: Label
    manipulation: Manipulation = "none"
    #: For an incomplete instance made from a complete one: that instance's id.
    twin_id: str | None = None
    provenance: Provenance
    verification: Verification = Field(default_factory=Verification)

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {self.schema_version} is not supported (this toolbench reads "
                f"{SCHEMA_VERSION})"
            )
        names = [api.name for api in self.apis]
        if len(set(names)) != len(names):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"API names must be unique within an instance: {dupes}")
        if self.manipulation == "none" and self.label != "complete":
            raise ValueError("an unmanipulated instance (manipulation 'none') must be complete")
        if self.label == "complete" and self.twin_id is not None:
            raise ValueError("twin_id links an incomplete instance to its complete twin")
        return self

    def user_turns(self) -> list[Turn]:
        return [turn for turn in self.dialogue if turn.role == "user"]


def dump_line(instance: Instance) -> str:
    """The one canonical serialisation (field order of the model, no ASCII escaping)."""
    return json.dumps(instance.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def write_instances(path: Path, instances: Iterable[Instance]) -> int:
    """Write atomically (temp file + rename); returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for instance in instances:
            handle.write(dump_line(instance) + "\n")
            count += 1
    tmp.replace(path)
    return count


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def iter_instances(path: Path) -> Iterator[Instance]:
    """Read and validate a dataset; any bad line is a ``UserError`` naming file and line."""
    if not path.is_file():
        raise UserError(f"{path}: no such dataset file (build one with 'toolbench aware build')")
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number}: not valid JSON ({json_problem(exc)})") from None
            if not isinstance(record, dict):
                raise UserError(f"{path}:{number}: each line must be a JSON object")
            try:
                instance = Instance.model_validate(record)
            except ValidationError as exc:
                raise UserError(
                    f"{path}:{number}: not an awareness instance ({_first_error(exc)})"
                ) from None
            if instance.id in seen:
                raise UserError(f"{path}:{number}: duplicate instance id '{instance.id}'")
            seen.add(instance.id)
            yield instance


def read_instances(path: Path) -> list[Instance]:
    return list(iter_instances(path))


def complete_instance(
    *,
    id: str,
    source: str,
    dialogue: list[Turn],
    apis: list[ApiSpec],
    relevant_apis: list[str],
    gold_calls: list[str],
    provenance: Provenance,
) -> Instance:
    """A complete, unmanipulated instance as loaded from a source (accepted by definition)."""
    return Instance(
        id=id,
        source=source,
        dialogue=dialogue,
        apis=apis,
        relevant_apis=relevant_apis,
        gold_calls=gold_calls,
        label="complete",
        manipulation="none",
        provenance=provenance,
        verification=Verification(status="accepted", by="source"),
    )
