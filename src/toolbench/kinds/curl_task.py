"""Tasks whose action is one curl command against an HTTP API (open_weather, the_cat_api).

The first line of the reply that starts with ``curl`` is parsed (never run by a shell) into a
request for the task's host only, sent to a fresh simulated world (or, with --live, the real
API), and its response compared with each gold's, key by key as the original did. Requests
that change state are also judged by the world they leave behind: adding the wrong image to
favourites gets the same "SUCCESS" as the right one, but not the same favourites.

Whatever the model writes, scoring ends in an ``Outcome``: a refused or unsendable line and an
error response (including the executor's 500 for a simulator that raised) are ``model_error``
with a one-line reason; a live outage is ``infra_error``.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.routing import Match

from toolbench.core.agent import AgentWorld
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import (
    LiveOptions,
    Resources,
    TaskBase,
    TaskData,
    TaskDefaults,
    TaskGenerator,
)
from toolbench.errors import UserError
from toolbench.kinds.curl_agent import WRITE_METHODS, CurlAgentWorld, Endpoint, endpoints_of
from toolbench.kinds.folder import load_folder, package_versions
from toolbench.kinds.http_exec import (
    HttpExecutor,
    HttpResult,
    LiveExecutor,
    SimulatedExecutor,
    one_line,
    response_view,
)
from toolbench.kinds.program_task import PROGRAM_METRICS, crash_outcome
from toolbench.kinds.scoring import best_match
from toolbench.kinds.service import SIMULATED_API_KEY, SimulatedService
from toolbench.kinds.single_turn import QueryPrompt, solve_single_turn
from toolbench.sandbox.curl import CurlError, HttpRequest, first_curl_line, parse_curl
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import InfraError, Outcome, Sample, Status


@dataclass(frozen=True)
class Gold:
    """A gold request's outcome: the response as compared, and the world it left."""

    view: dict[Any, Any]
    state: Any
    writes: bool
    endpoint: str | None = None  # "METHOD /route/{template}" when the task judges endpoints


@dataclass
class CurlTask(QueryPrompt, TaskBase):
    name: str
    summary: str
    service: SimulatedService = field()
    package_dir: Path = field()
    live_key_env: str  # environment variable holding the real API key for --live
    generator: TaskGenerator = field()  # ``toolbench data generate`` (``cli.data.Generates``)
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = PROGRAM_METRICS
    drop_keys: tuple[str, ...] = ()  # response keys that differ run to run (a new resource's id)
    live_key_header: str | None = None  # e.g. "x-api-key" (else the key fills {API_KEY})
    # For original data lines that carry no world state: derive one from the gold requests.
    derive_state: Callable[[Sequence[str]], dict[str, Any]] | None = None
    # A request to another endpoint (method + route template) than the closest gold's is never
    # a success, even when both answer alike (e.g. two empty lists).
    same_endpoint: bool = False
    # As tools for agents (``curl_agent``): doc file name -> tool name, and parameter name ->
    # JSON Schema type (as JSON text; parameters not named are strings).
    tool_names: Mapping[str, str] = field(default_factory=dict)
    param_types: Mapping[str, str] = field(default_factory=dict)

    def versions(self) -> list[str]:
        return package_versions(self.package_dir)

    # -- loading -------------------------------------------------------------------------------

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[HttpExecutor]:
        data = load_folder(self.name, self.package_dir, version, data_dir)
        return data.with_runtime(self._executor(live))

    async def prepare(self, data: TaskData[HttpExecutor], sandbox: ProgramRunner) -> None:
        """Offline, every gold is validated up front (a failing one is a data error). Live,
        golds run next to their prediction, so an outage is that sample's infra error."""
        if not isinstance(data.runtime, LiveExecutor):
            data.gold = await self._run_golds(data)

    def _executor(self, live: LiveOptions | None) -> HttpExecutor:
        if live is None:
            return SimulatedExecutor(self.service)
        key = os.environ.get(self.live_key_env)
        if not key:
            raise UserError(f"--live needs the API key in ${self.live_key_env}")
        headers = ((self.live_key_header, key),) if self.live_key_header else ()
        return LiveExecutor(headers, live.cache_dir / "live.sqlite" if live.cache_dir else None)

    def api_key(self, data: TaskData[HttpExecutor]) -> str:
        if isinstance(data.runtime, LiveExecutor) and self.live_key_header is None:
            return os.environ.get(self.live_key_env, "")
        return SIMULATED_API_KEY

    def world_fields(self, sample: Sample) -> Mapping[str, Any]:
        if "state" not in sample.fields and self.derive_state is not None:
            return {**sample.fields, "state": self.derive_state(sample.labels)}
        return sample.fields

    async def _gold(
        self, data: TaskData[HttpExecutor], sample: Sample, index: int, label: str
    ) -> Gold:
        where = f"{sample.source}: gold request {index + 1}"
        try:
            request = parse_curl(
                label, api_key=self.api_key(data), allowed_hosts=self.service.hosts
            )
            result = await data.runtime.execute(request, self.world_fields(sample))
        except CurlError as exc:
            raise UserError(f"{where} is not a valid curl line ({exc}); fix this line") from exc
        if result.status >= 400:
            raise UserError(
                f"{where} fails in the {self.name} API (HTTP {result.status}: "
                f"{_brief(result.body)}); fix this line"
            )
        endpoint = self._endpoint(request) if self.same_endpoint else None
        return Gold(self._view(result), result.state, request.method in WRITE_METHODS, endpoint)

    def _endpoint(self, request: HttpRequest) -> str | None:
        """``METHOD /route/{template}`` of the simulated app's route serving ``request``."""
        return route_of(self.service.app, request.method, request.path)

    async def _golds_of(self, data: TaskData[HttpExecutor], sample: Sample) -> list[Gold]:
        """A sample's gold outcomes; live runs execute them here, next to the prediction."""
        if sample.id not in data.gold:
            data.gold[sample.id] = [
                await self._gold(data, sample, i, label) for i, label in enumerate(sample.labels)
            ]
        golds: list[Gold] = data.gold[sample.id]
        return golds

    async def _run_golds(self, data: TaskData[HttpExecutor]) -> dict[str, list[Any]]:
        jobs = [(s, i, label) for s in data.samples for i, label in enumerate(s.labels)]
        golds = await asyncio.gather(*(self._gold(data, *job) for job in jobs))
        by_sample: dict[str, list[Any]] = {s.id: [] for s in data.samples}
        for (sample, _, _), gold in zip(jobs, golds, strict=True):
            by_sample[sample.id].append(gold)
        return by_sample

    def _view(self, result: HttpResult) -> dict[Any, Any]:
        return response_view(result.body, self.drop_keys)

    # -- solving and scoring -------------------------------------------------------------------

    async def solve(
        self, state: SampleState, generate: Generate, resources: Resources[HttpExecutor]
    ) -> Outcome:
        return await solve_single_turn(self, state, generate, resources)

    def extract_action(self, text: str) -> str:
        return first_curl_line(text) or ""

    async def score(
        self, data: TaskData[HttpExecutor], sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome:
        if not action:
            return crash_outcome("no curl command in the reply")
        if sample.fields.get("compare_string_only"):
            return self._score_string(sample, action)
        try:
            request = parse_curl(
                action, api_key=self.api_key(data), allowed_hosts=self.service.hosts
            )
            result = await data.runtime.execute(request, self.world_fields(sample))
        except CurlError as exc:
            return crash_outcome(f"rejected curl: {one_line(str(exc))}")
        except InfraError as exc:
            return Outcome(status=Status.INFRA_ERROR, message=one_line(str(exc)))
        return await self.judge(data, sample, request, result)

    async def judge(
        self,
        data: TaskData[HttpExecutor],
        sample: Sample,
        request: HttpRequest,
        result: HttpResult,
    ) -> Outcome:
        """The outcome of ``request`` having got ``result`` (whose ``state`` is the world it
        left): the closest gold's response, world and endpoint must match. A model's curl line
        and an agent's answer call (``curl_agent``) are both judged here."""
        if result.status >= 400:
            return crash_outcome(f"HTTP {result.status}: {_brief(result.body)}")
        try:
            golds = await self._golds_of(data, sample)
        except InfraError as exc:
            return Outcome(status=Status.INFRA_ERROR, message=one_line(str(exc)))
        index, (precision, recall, f1) = best_match(self._view(result), [g.view for g in golds])
        gold = golds[index]
        same_world = gold.state == result.state
        same_endpoint = not self.same_endpoint or self._endpoint(request) == gold.endpoint
        return Outcome(
            status=Status.SCORED,
            success=f1 == 1.0 and same_world and same_endpoint,
            metrics={"precision": precision, "recall": recall, "f1": f1},
            details={
                "closest_label": index,
                "http_status": result.status,
                "same_state": same_world,
                "same_endpoint": same_endpoint,
            },
        )

    def _score_string(self, sample: Sample, action: str) -> Outcome:
        """The original's rule for these lines: whitespace-normalised text equality, and a
        mismatch counts as a crash."""
        line = _normalise(action)
        for index, label in enumerate(sample.labels):
            if line == _normalise(label):
                return Outcome(
                    status=Status.SCORED,
                    success=True,
                    metrics={"precision": 1.0, "recall": 1.0, "f1": 1.0},
                    details={"closest_label": index, "compared": "string"},
                )
        return crash_outcome("string comparison with the gold request failed")

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)

    # -- as tools for agents -------------------------------------------------------------------

    def endpoints(self, data: TaskData[HttpExecutor]) -> tuple[Endpoint, ...]:
        """The API as tools, from the docs this load's model reads (built once per docs)."""
        return endpoints_of(
            self.name,
            data.context.functions,
            tuple(sorted(self.tool_names.items())),
            tuple(sorted(self.param_types.items())),
        )

    def agent_world(
        self, data: TaskData[HttpExecutor], sample: Sample, resources: Resources[HttpExecutor]
    ) -> AgentWorld:
        return CurlAgentWorld(self, data, sample)


def route_of(app: Any, method: str, path: str) -> str | None:
    """The first route of a Starlette/FastAPI ``app`` that fully matches (trailing slash
    ignored, as the simulated services do), as ``METHOD template``; None if none does."""
    scope = {"type": "http", "method": method, "path": path.rstrip("/") or "/", "root_path": ""}
    for route in getattr(app, "routes", ()):
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return f"{method} {getattr(route, 'path', '')}"
    return None


def _normalise(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text).strip()
    return re.sub(r"\n+", "\n", text).strip(" \n")


def _brief(body: Any) -> str:
    """An error body (or message) as one short printable line for the run log: a service may
    echo hostile input (NUL bytes, bidi controls, megabytes) back in its error text."""
    if isinstance(body, dict):
        body = body.get("message", body)
    return one_line(str(body))
