"""One item through the model (and, for explanations, the judge) into one run record.

Requests carry ``Sample(id=..., labels=(ideal reply,))`` so the built-in ``oracle`` answers
perfectly and ``replay:FILE`` can script any step (ids: the instance id, ``<id>#explain``,
``<id>#judge``, ``<id>#<scenario>`` for feedback). Baselines get ``fields["aware"]``: the kind
of reply wanted and the API names, never the label. Model replies are only ever parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolbench.aware.evaluate.answers import parse_verdict, parse_yes_no
from toolbench.aware.evaluate.baselines import CANNOT
from toolbench.aware.evaluate.demos import DemoPool
from toolbench.aware.evaluate.implicit import classify_reply
from toolbench.aware.evaluate.items import Item
from toolbench.aware.evaluate.prompts import (
    Messages,
    explain_messages,
    explicit_messages,
    feedback_messages,
    implicit_messages,
    judge_messages,
    reference_for,
    tools_messages,
)
from toolbench.aware.evaluate.render import native_tools, tool_name_map
from toolbench.models.base import Model, ModelOutputError
from toolbench.runner.engine import MAX_PREDICTION_CHARS, one_line, prompt_hash
from toolbench.types import Generation, GenerationRequest, InfraError, Sample


@dataclass(frozen=True)
class Settings:
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0


@dataclass
class Trace:
    """What the steps of one item cost and said."""

    generations: list[Generation] = field(default_factory=list)
    judge: list[Generation] = field(default_factory=list)
    first_hash: str = ""


def oracle_reply(item: Item, kind: str) -> str:
    can = item.expected == "yes"
    if kind in ("implicit", "tools"):
        names = [a.name for a in item.instance.apis]
        target = next((a for a in item.instance.relevant_apis if a in names), None)
        target = target or (names[0] if names else None)
        return f"API-Request: [{target}()]" if can and target else CANNOT
    return "Yes" if can else "No"


def _request(
    item: Item,
    settings: Settings,
    messages: Messages,
    sample_id: str,
    kind: str,
    ideal: str,
    tools: tuple[dict[str, object], ...] | None = None,
) -> GenerationRequest:
    view = {
        "kind": kind,
        "instance_id": item.instance.id,
        "api_names": [api.name for api in item.instance.apis],
    }
    sample = Sample(
        id=sample_id, task=f"aware-{item.task}", query="", labels=(ideal,), fields={"aware": view}
    )
    return GenerationRequest(
        messages=messages,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        seed=settings.seed,
        sample=sample,
        tools=tools,
    )


async def _ask(model: Model, request: GenerationRequest, into: list[Generation]) -> Generation:
    generation = await model.generate(request)
    into.append(generation)
    return generation


async def solve(
    item: Item, model: Model, judge: Model | None, demos: DemoPool, settings: Settings
) -> dict[str, Any]:
    trace = Trace()
    details: dict[str, Any] = {
        "instance_id": item.instance.id,
        "source": item.instance.source,
        "manipulation": item.instance.manipulation,
        "label": item.instance.label,
        "groups": list(item.groups),
        "expected": item.expected,
    }
    try:
        success, metrics, prediction = await _solve(
            item, model, judge, demos, settings, trace, details
        )
        status, message = "scored", ""
    except InfraError as exc:
        status, message, success, metrics, prediction = "infra_error", one_line(exc), False, {}, ""
    except ModelOutputError as exc:
        status, message, success, metrics, prediction = "model_error", one_line(exc), False, {}, ""
    gens = trace.generations
    if trace.judge:
        details["judge_prompt_tokens"] = sum(g.prompt_tokens for g in trace.judge)
        details["judge_completion_tokens"] = sum(g.completion_tokens for g in trace.judge)
    return {
        "task": f"aware-{item.task}",
        "id": item.id,
        "epoch": 0,
        "status": status,
        "success": success,
        "metrics": metrics,
        "message": message,
        "prediction": prediction[:MAX_PREDICTION_CHARS],
        "prompt_hash": trace.first_hash,
        "latency_s": round(sum(g.latency_s for g in gens), 4) if gens else None,
        "prompt_tokens": sum(g.prompt_tokens for g in gens),
        "completion_tokens": sum(g.completion_tokens for g in gens),
        "cached": bool(gens) and all(g.cached for g in gens),
        "details": details,
    }


def first_request(item: Item, demos: DemoPool, settings: Settings) -> GenerationRequest:
    """The request that decides an item (explain asks its explicit question first)."""
    instance = item.instance
    if item.kind in ("implicit", "tools"):
        tools = native_tools(instance.apis) if item.kind == "tools" else None
        messages = tools_messages(instance) if tools else implicit_messages(instance)
        ideal = oracle_reply(item, item.kind)
        return _request(item, settings, messages, item.id, item.kind, ideal, tools)
    if item.kind == "feedback":
        assert item.scenario is not None
        messages = feedback_messages(instance, item.scenario.call, item.scenario.result)
    else:
        messages = explicit_messages(instance, demos.choose(instance, item.shots))
    return _request(item, settings, messages, item.id, "explicit", oracle_reply(item, "explicit"))


def explanation_request(item: Item, settings: Settings, answer: str) -> GenerationRequest:
    messages = explain_messages(item.instance, answer)
    ideal = reference_for(item.instance)
    return _request(item, settings, messages, f"{item.id}#explain", "explanation", ideal)


def requests_for(
    item: Item, demos: DemoPool, settings: Settings
) -> list[tuple[str, GenerationRequest]]:
    """What ``toolbench aware prompt`` shows: each request an item can send, titled."""
    shown = [("request", first_request(item, demos, settings))]
    if item.kind == "explain":
        shown.append(("after a No: explanation", explanation_request(item, settings, "No")))
    return shown


async def _solve(
    item: Item,
    model: Model,
    judge: Model | None,
    demos: DemoPool,
    settings: Settings,
    trace: Trace,
    details: dict[str, Any],
) -> tuple[bool, dict[str, float], str]:
    instance = item.instance
    request = first_request(item, demos, settings)
    trace.first_hash = prompt_hash(request)
    generation = await _ask(model, request, trace.generations)
    if item.kind in ("implicit", "tools"):
        names = tool_name_map(instance.apis) if item.kind == "tools" else {}
        calls = _named_back(generation.tool_calls, names) if names else []
        verdict = classify_reply(generation.text, [a.name for a in instance.apis], calls)
        predicted = {"call": "yes", "unparseable": None}.get(verdict.bucket, "no")
        details.update(bucket=verdict.bucket, api=verdict.api, offered=verdict.offered)
        details["reason"] = verdict.reason
        if generation.tool_calls:
            details["tool_calls"] = generation.tool_calls
        return _scored(item, predicted, details, generation.text)
    if item.scenario is not None:
        details.update(scenario=item.scenario.name, call=item.scenario.call)
    else:
        details["demos"] = [d.instance.id for d in demos.choose(instance, item.shots)]
    predicted = parse_yes_no(generation.text)
    if item.kind != "explain":
        return _scored(item, predicted, details, generation.text)
    return await _explain(item, model, judge, settings, trace, details, generation.text, predicted)


async def _explain(
    item: Item,
    model: Model,
    judge: Model | None,
    settings: Settings,
    trace: Trace,
    details: dict[str, Any],
    answer: str,
    predicted: str | None,
) -> tuple[bool, dict[str, float], str]:
    """Explanations are asked for and judged only where the model rightly said No."""
    details["predicted"] = predicted
    if predicted != "no":
        return False, {"explained": 0.0}, answer
    assert judge is not None
    instance = item.instance
    request = explanation_request(item, settings, answer)
    explanation = (await _ask(model, request, trace.generations)).text
    judge_request = _request(
        item,
        settings,
        judge_messages(instance, explanation),
        f"{item.id}#judge",
        "judge",
        "Correct",
    )
    verdict_text = (await _ask(judge, judge_request, trace.judge)).text
    verdict = parse_verdict(verdict_text)
    details.update(
        explanation=explanation[:MAX_PREDICTION_CHARS],
        reference=reference_for(instance),
        judge_reply=verdict_text[:2000],
        judge_verdict=verdict,
        judge_prompt_hash=prompt_hash(judge_request),
    )
    metrics = {"explained": 1.0}
    if verdict is not None:
        metrics["explanation_correct"] = float(verdict)
    return bool(verdict), metrics, answer


def _scored(
    item: Item, predicted: str | None, details: dict[str, Any], text: str
) -> tuple[bool, dict[str, float], str]:
    correct = predicted == item.expected
    details["predicted"] = predicted
    return correct, {"correct": float(correct)}, text


def _named_back(calls: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """Native tool calls with their sanitised names mapped back to the dataset's API names."""
    renamed = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and function.get("name") in names:
            function = {**function, "name": names[function["name"]]}
            call = {**call, "function": function}
        renamed.append(call)
    return renamed
