"""The model protocol every backend implements, and the options the CLI passes to backends.

A model turns a ``GenerationRequest`` into a ``Generation``. Backends raise ``InfraError`` when
the service cannot answer after retries (excluded from scores), and ``ModelOutputError`` when
the model itself is at fault in a way that has no text (counted as a model error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from toolbench.types import Generation, GenerationRequest

A = TypeVar("A", bound=BaseModel)


class ModelOutputError(Exception):
    """The model produced no usable answer for this sample (e.g. replay file lacks the id)."""


@runtime_checkable
class Model(Protocol):
    #: A stable name used in run names, fingerprints and cache keys, e.g. "openai:gpt-4o-mini".
    name: str
    #: False for built-in models whose answers are cheap and must never be cached.
    cacheable: bool

    async def generate(self, request: GenerationRequest) -> Generation: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class FitsData(Protocol):
    """A model that reads the evaluation's data before it answers: the built-in ``baseline``
    takes each task's own reply policy, the awareness ``similarity`` floor fits its threshold
    on the labelled items. The runner calls ``fit`` once, after the data is loaded and before
    any sample runs, with every prepared task (``.task``, ``.data``, ``.samples``); what it
    returns goes into ``run.json`` as ``model_notes``."""

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ModelOptions:
    """What every backend may read (a server's address and key, time limits, the cache), and
    one backend's own options (``model_args``, checked by that backend's schema)."""

    base_url: str | None = None
    # Several endpoints serving one model (--base-url repeated): requests go to the one with
    # the fewest in flight (``models.endpoints``). Empty: ``base_url`` alone.
    base_urls: tuple[str, ...] = ()
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 6
    # Cache: None disables it. The CLI sets it to <cache dir>/responses.sqlite by default.
    cache_path: Path | None = None
    # Seconds one request may spend in retries (all attempts and waits together); None: the
    # retry layer's default, derived from ``timeout_s``.
    retry_budget_s: float | None = None
    # The backend's own options (``--model-arg KEY=VALUE``, ``toolbench.run(model_args=)``),
    # as given: ``spec.make_model`` checks them against the backend's schema (``models.args``)
    # before it builds, and the backend reads them with ``args``.
    model_args: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # The run's replicas are Ray actors named after this group (set once by the process that
    # starts the run), so every process of the run that builds the model finds the same ones.
    replica_group: str | None = None

    def args(self, schema: type[A]) -> A:
        """The backend's options as its ``schema`` reads them (defaults for what is not
        given); a pydantic ``ValidationError`` for a key or value the schema refuses."""
        return schema.model_validate(dict(self.model_args))

    def without_model_args(self) -> ModelOptions:
        """The same options for another model of the run (a role's judge): the backend
        options given are the evaluated model's, not every model's."""
        return replace(self, model_args={}, replica_group=None)
