"""One item through the model (and, for explanations, the judge) into its outcome.

An item is one sample of the awareness task; its model calls are steps of it: ``answer`` (the
decisive question), then for ``explain`` items ``explain`` and the judge's ``judge`` (the
``judge`` role's model, recorded as that role). Requests carry ``Sample(id=item id,
labels=(ideal reply,))`` so the built-in ``oracle`` answers each step perfectly and
``replay:FILE`` can script any step (a line's ``"step"``, or an id ``<id>#explain`` /
``<id>#judge``, replay's ``<id>#<step>`` form). The floors get ``fields["aware"]``: the kind
of reply wanted and the API names, never the label. Model replies are only ever parsed.
Whatever happens, the outcome keeps the item's details (label, groups, expected answer): a
failed item is still a wrong answer in the tables, which need to know what it was.
"""

from __future__ import annotations

from dataclasses import dataclass
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
from toolbench.core.solve import (
    MAX_PREDICTION_CHARS,
    Generate,
    SampleState,
    guarded_solve,
    prompt_hash,
)
from toolbench.errors import UserError
from toolbench.types import DEFAULT_MAX_TOKENS, GenerationRequest, Outcome, Sample, Status


@dataclass(frozen=True)
class Settings:
    """The generation settings every request of a run carries."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int | None = 0
    # The run's --stop sequences; the awareness prompts themselves need none.
    stop: tuple[str, ...] = ()


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
    step: str,
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
        id=item.id, task=f"aware-{item.task}", query="", labels=(ideal,), fields={"aware": view}
    )
    return GenerationRequest(
        messages=messages,
        stop=settings.stop,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        seed=settings.seed,
        sample=sample,
        tools=tools,
        step=step,
        ideal=ideal,
    )


async def solve(
    item: Item,
    ask: Generate,
    grade: Generate | None,
    demos: DemoPool,
    settings: Settings,
    state: SampleState,
) -> Outcome:
    """The item's outcome, details included; nothing the model or the judge says can make
    this raise (a failure is the outcome's status, and the prediction is then empty)."""
    details: dict[str, Any] = {
        "instance_id": item.instance.id,
        "source": item.instance.source,
        "manipulation": item.instance.manipulation,
        "label": item.instance.label,
        "groups": list(item.groups),
        "expected": item.expected,
    }
    outcome = await guarded_solve(
        lambda: _solve(item, ask, grade, demos, settings, state, details), state
    )
    outcome.details = details
    if outcome.status is not Status.SCORED:
        state.prediction = ""
    judged = [call for call in state.calls if call.role == "judge"]
    if judged:
        details["judge_prompt_tokens"] = sum(c.prompt_tokens for c in judged)
        details["judge_completion_tokens"] = sum(c.completion_tokens for c in judged)
    return outcome


def first_request(item: Item, demos: DemoPool, settings: Settings) -> GenerationRequest:
    """The request that decides an item (explain asks its explicit question first)."""
    instance = item.instance
    if item.kind in ("implicit", "tools"):
        tools = native_tools(instance.apis) if item.kind == "tools" else None
        messages = tools_messages(instance) if tools else implicit_messages(instance)
        ideal = oracle_reply(item, item.kind)
        return _request(item, settings, messages, "answer", item.kind, ideal, tools)
    if item.kind == "feedback":
        assert item.scenario is not None
        messages = feedback_messages(instance, item.scenario.call, item.scenario.result)
    else:
        messages = explicit_messages(instance, demos.choose(instance, item.shots))
    return _request(item, settings, messages, "answer", "explicit", oracle_reply(item, "explicit"))


def explanation_request(item: Item, settings: Settings, answer: str) -> GenerationRequest:
    messages = explain_messages(item.instance, answer)
    ideal = reference_for(item.instance)
    return _request(item, settings, messages, "explain", "explanation", ideal)


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
    ask: Generate,
    grade: Generate | None,
    demos: DemoPool,
    settings: Settings,
    state: SampleState,
    details: dict[str, Any],
) -> Outcome:
    instance = item.instance
    generation = await ask(first_request(item, demos, settings))
    state.prediction = generation.text
    if item.kind in ("implicit", "tools"):
        names = tool_name_map(instance.apis) if item.kind == "tools" else {}
        calls = _named_back(generation.tool_calls, names) if names else []
        verdict = classify_reply(generation.text, [a.name for a in instance.apis], calls)
        predicted = {"call": "yes", "unparseable": None}.get(verdict.bucket, "no")
        details.update(bucket=verdict.bucket, api=verdict.api, offered=verdict.offered)
        details["reason"] = verdict.reason
        if generation.tool_calls:
            details["tool_calls"] = generation.tool_calls
        return _scored(item, predicted, details)
    if item.scenario is not None:
        details.update(scenario=item.scenario.name, call=item.scenario.call)
    else:
        details["demos"] = [d.instance.id for d in demos.choose(instance, item.shots)]
    predicted = parse_yes_no(generation.text)
    if item.kind != "explain":
        return _scored(item, predicted, details)
    return await _explain(item, ask, grade, settings, details, generation.text, predicted)


async def _explain(
    item: Item,
    ask: Generate,
    grade: Generate | None,
    settings: Settings,
    details: dict[str, Any],
    answer: str,
    predicted: str | None,
) -> Outcome:
    """Explanations are asked for and judged only where the model rightly said No."""
    details["predicted"] = predicted
    if predicted != "no":
        return Outcome(Status.SCORED, success=False, metrics={"explained": 0.0})
    if grade is None:
        raise UserError("explain items need a judge: run with the role judge=SPEC (--judge)")
    instance = item.instance
    request = explanation_request(item, settings, answer)
    explanation = (await ask(request)).text
    judge_request = _request(
        item, settings, judge_messages(instance, explanation), "judge", "judge", "Correct"
    )
    verdict_text = (await grade(judge_request)).text
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
    return Outcome(Status.SCORED, success=bool(verdict), metrics=metrics)


def _scored(item: Item, predicted: str | None, details: dict[str, Any]) -> Outcome:
    correct = predicted == item.expected
    details["predicted"] = predicted
    return Outcome(Status.SCORED, success=correct, metrics={"correct": float(correct)})


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
