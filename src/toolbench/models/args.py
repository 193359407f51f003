"""What a backend takes as ``--model-arg KEY=VALUE``: its own schema, and the one check of it.

Every backend option (hf's dtype, the agent's timeout, a plugin's own knobs) used to be a
field of one shared bag, so a new backend meant editing the bag, the run config, the command
line and the registry. Now a backend declares a pydantic model of its options (a
``BackendArgs``) in its registry entry; the command line (``--model-arg``, repeatable, as
inspect's ``-M`` and lm-eval's ``model_args``) and ``toolbench.run(model_args={...})`` hand the
raw values over as they are, and ``validate`` is the one place they are checked, so both
accept and refuse the same runs. Options that can change a sample's result are part of the
run's fingerprint (``fingerprint``); a field marked ``operational`` (how fast, where) is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolbench.errors import UserError, did_you_mean

#: The flag that sets a backend option; named in every message about one.
FLAG = "--model-arg"

#: A field's ``json_schema_extra`` key that keeps it out of the fingerprint.
_OPERATIONAL = "operational"

A = TypeVar("A", bound=BaseModel)


class BackendArgs(BaseModel):
    """The options of one backend. Unknown keys are refused (a misspelt option would silently
    do nothing); values are coerced from the command line's text (``"8"`` -> 8)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def fingerprint(self) -> dict[str, Any]:
        """The options that can change a result, as JSON data: every field not marked
        ``operational``. A backend whose option is a file overrides this to put the file's
        digest in (an edited file is another configuration)."""
        dumped = self.model_dump(mode="json")
        return {
            name: dumped[name]
            for name, field in type(self).model_fields.items()
            if not _is_operational(field.json_schema_extra)
        }


def operational(default: Any, description: str, **constraints: Any) -> Any:
    """A field that says how fast or where the backend runs, never what it answers: left out
    of the run's fingerprint (a resumed run may change it)."""
    return Field(
        default, description=description, json_schema_extra={_OPERATIONAL: True}, **constraints
    )


def _is_operational(extra: object) -> bool:
    return isinstance(extra, dict) and bool(extra.get(_OPERATIONAL))


class ReplicaArgs(BackendArgs):
    """The options of a backend that runs its model in this process, so that it can be served
    as Ray actors instead (``models.ray_replicas``): how many, and on which cluster."""

    replicas: int = operational(
        1, "serve the model as N Ray actors (on GPUs where the cluster has them)", ge=1
    )
    ray_address: str | None = operational(
        None, "the Ray cluster of the replicas (default: $RAY_ADDRESS, else a local one)"
    )


#: The keys ``ReplicaArgs`` adds, which ``spec.make_model`` reads for every backend.
REPLICA_KEYS = frozenset(ReplicaArgs.model_fields)


def validate(schema: type[A] | None, given: Mapping[str, Any], backend: str) -> A | None:
    """``given`` checked against ``backend``'s schema: a ``UserError`` of one line naming
    ``--model-arg KEY``, the backend and the keys it takes for an unknown key, or the key,
    its value and what is wrong for a bad value. A backend without a schema takes no keys."""
    keys = sorted(schema.model_fields) if schema is not None else []
    for key in given:
        if key not in keys:
            raise unknown_key(key, backend, keys)
    if schema is None:
        return None
    try:
        return schema.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "?"
        value = repr(given.get(key, error.get("input")))
        value = value if len(value) <= 80 else value[:77] + "..."
        raise UserError(f"{FLAG} {key}={value}: {error['msg']} (backend {backend})") from None


def unknown_key(key: str, backend: str, keys: list[str]) -> UserError:
    """``--model-arg KEY: BACKEND takes no option KEY (did you mean ...?); it takes ...``."""
    hint = did_you_mean(key, keys) if keys else ""
    hint = hint if hint.startswith(" (did you mean") else ""
    takes = f"it takes {', '.join(keys)}" if keys else "it takes no options"
    return UserError(f"{FLAG} {key}: backend {backend} has no option {key!r}{hint}; {takes}")


def fingerprint(args: BaseModel | None) -> dict[str, Any]:
    """What of ``args`` goes into the run's fingerprint (see ``BackendArgs.fingerprint``); a
    plugin's plain pydantic model: all of it."""
    if args is None:
        return {}
    if isinstance(args, BackendArgs):
        return args.fingerprint()
    return dict(args.model_dump(mode="json"))


@dataclass(frozen=True)
class OptionRow:
    """One option as ``toolbench list models`` shows it."""

    name: str
    type: str
    default: str
    help: str


def option_rows(schema: type[BaseModel] | None) -> list[OptionRow]:
    """Every option of ``schema``: its name, type, default and help, as the listing shows."""
    if schema is None:
        return []
    rows = []
    for name, field in schema.model_fields.items():
        kind = _type_name(field.annotation)
        default = "required" if field.is_required() else repr(field.get_default())
        rows.append(OptionRow(name, kind, default, field.description or ""))
    return rows


def _type_name(annotation: Any) -> str:
    """A field's type as the listing shows it: ``int``, ``auto|float32``, ``Path | None``."""
    if get_origin(annotation) is Literal:
        return "|".join(str(choice) for choice in get_args(annotation))
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("pathlib.", "")


def parse_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value), both stripped of the key's spaces; ``ValueError`` saying
    what is missing. The value stays text: the backend's schema converts it."""
    key, equals, value = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise ValueError("write KEY=VALUE, e.g. --model-arg batch_size=4")
    return key, value


def schema_args(schema: type[A], given: Mapping[str, Any]) -> A:
    """``schema`` built from the keys of ``given`` it has (a backend reading its own options
    out of values that also hold another layer's, e.g. a replica's ``replicas``)."""
    return schema.model_validate({k: v for k, v in given.items() if k in schema.model_fields})
