"""web_shop as an agent's world: the expert's path as calls buys every goal with the reward the
oracle gets, replies are the pages the episode's prompt shows, refused calls change nothing,
and the tools come from the task's own docs."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.tasks.web_shop.exact import exact_purchase_reward
from toolbench.core.agent import HasAgentWorld, ToolCall, Untranslatable
from toolbench.core.solve import SampleState
from toolbench.core.task import Resources, TaskData
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.tasks.web_shop import TASK
from toolbench.tasks.web_shop.actions import parse_action
from toolbench.tasks.web_shop.agent_world import (
    MAX_ARGUMENT_CHARS,
    BadCall,
    WebShopWorld,
    action_calls,
    call_action,
)
from toolbench.tasks.web_shop.docs import FUNCTIONS
from toolbench.tasks.web_shop.task import MAX_STEPS
from toolbench.types import Generation, GenerationRequest, Outcome, Status

DATA: dict[str, TaskData] = {}


def data(version: str = "v0") -> TaskData:
    if version not in DATA:
        DATA[version] = TASK.load(version, None)
    return DATA[version]


def world(goal: int = 0, version: str = "v0") -> WebShopWorld:
    loaded = data(version)
    sample = next(s for s in loaded.samples if s.id == str(goal))
    return cast(WebShopWorld, TASK.agent_world(loaded, sample, cast(Any, None)))


async def play(w: WebShopWorld, calls: list[ToolCall]) -> list[str]:
    replies = []
    for call in calls:
        reply = await w.call(call.name, call.arguments)
        assert not reply.is_error, (call, reply.text)
        replies.append(reply.text)
    return replies


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_gold_calls_buy_every_goal_with_the_oracles_reward(version: str) -> None:
    loaded = data(version)

    async def main() -> None:
        for sample in loaded.samples:
            w = cast(WebShopWorld, TASK.agent_world(loaded, sample, cast(Any, None)))
            calls = await w.gold_calls()
            await play(w, calls)
            outcome = await w.outcome()
            expected = exact_purchase_reward(w.session.goal)
            assert outcome.status is Status.SCORED and outcome.success is True, sample.id
            assert outcome.metrics["reward"] == pytest.approx(expected), sample.id
            assert outcome.metrics["purchase_match_rate"] == float(expected == 1.0)
            assert outcome.metrics["mean_turns"] == len(calls)
            assert (await w.outcome()).metrics == outcome.metrics  # judging changes nothing

    asyncio.run(main())


def native_episode(goal: int, version: str) -> tuple[Outcome, list[str]]:
    """The task's own ``solve`` with a model answering each turn's ``ideal`` (the oracle):
    its outcome and the pages its prompts showed."""
    loaded = data(version)
    sample = next(s for s in loaded.samples if s.id == str(goal))
    prompter = Prompter(loaded.context, PromptConfig(top_k_api=0, top_k_example=0))
    resources = Resources(data=loaded, sandbox=cast(Any, None), prompter=prompter)
    pages: list[str] = []

    async def generate(request: GenerationRequest) -> Generation:
        assert request.sample is not None and request.ideal is not None
        pages.append(request.sample.query)
        return Generation(text=request.ideal)

    state = SampleState(sample=sample, epoch=0)
    outcome = asyncio.run(TASK.solve(state, cast(Any, generate), resources))
    return outcome, pages


@pytest.mark.parametrize(("goal", "version"), [(0, "v0"), (143, "v0"), (7, "v1")])
def test_agent_and_model_see_the_same_pages_and_get_the_same_outcome(
    goal: int, version: str
) -> None:
    native, pages = native_episode(goal, version)
    w = world(goal, version)
    replies = asyncio.run(play(w, asyncio.run(w.gold_calls())))
    assert pages[0] == w.store.new_session(goal, version).observation
    assert replies[:-1] == pages[1:]  # the last reply is the page after the purchase
    assert "Thank you for shopping with us!" in replies[-1]
    agent = asyncio.run(w.outcome())
    assert (agent.status, agent.success, agent.metrics) == (
        native.status,
        native.success,
        native.metrics,
    )
    assert w.request == w.session.goal.instruction_text


def test_a_wrong_search_never_reaches_the_product_and_fails() -> None:
    w = world(0)
    calls = asyncio.run(w.gold_calls())
    assert calls[0].name == "search"
    calls[0] = ToolCall("search", {"query": "zzqx unrelated words"})
    replies = [asyncio.run(w.call(c.name, c.arguments)) for c in calls]
    assert any(r.is_error for r in replies)  # the product and Buy Now are not on the page
    outcome = asyncio.run(w.outcome())
    assert outcome.success is False and outcome.metrics["reward"] == 0.0


def test_a_wrong_option_value_buys_with_less_than_full_reward() -> None:
    w = world(0)
    calls = asyncio.run(w.gold_calls())
    product = w.store.by_asin[w.session.goal.asin]
    at = next(i for i, c in enumerate(calls) if c.arguments.get("target") == "blonde")
    other = next(v for v in product.options["color"] if v != "blonde")
    calls[at] = ToolCall("click", {"target": other})
    asyncio.run(play(w, calls))
    outcome = asyncio.run(w.outcome())
    assert outcome.success is True  # a purchase was made (SambaNova's success)...
    assert outcome.metrics["reward"] < 1.0 and outcome.metrics["purchase_match_rate"] == 0.0


BAD_CALLS: list[tuple[str, Any]] = [
    ("buy", {"target": "x"}),
    ("search", {}),
    ("search", {"query": 3}),
    ("search", {"query": None}),
    ("search", {"query": "shoes", "page": 2}),
    ("click", {"query": "Buy Now"}),
    ("search", {"query": ""}),
    ("search", {"query": "   "}),
    ("search", {"query": "a[b"}),
    ("search", {"query": "shoes\nclick[Buy Now]"}),
    ("search", {"query": "x" * (MAX_ARGUMENT_CHARS + 1)}),
    ("click", {"target": "Buy Now"}),  # not on the start page: the store refuses it
    ("click", {"target": "search"}),
    ("click", ["Buy Now"]),
    ("click", "Buy Now"),
    (cast(Any, ["search"]), {"query": "shoes"}),
    (cast(Any, None), {}),
]


@pytest.mark.parametrize(("name", "arguments"), BAD_CALLS)
def test_bad_calls_are_error_replies_that_change_nothing(name: str, arguments: Any) -> None:
    w = world(3)
    before = (w.session.observation, w.session.steps, list(w.actions))
    reply = asyncio.run(w.call(name, arguments))
    assert reply.is_error and reply.text.strip()
    assert (w.session.observation, w.session.steps, list(w.actions)) == before


def test_a_click_the_page_lacks_says_so_in_the_stores_words() -> None:
    w = world(3)
    reply = asyncio.run(w.call("click", {"target": "Next >"}))
    assert reply.is_error and reply.text == "nothing to click named 'next >' on this page"


def test_after_the_purchase_and_after_the_turn_limit_calls_are_refused() -> None:
    w = world(0)
    asyncio.run(play(w, asyncio.run(w.gold_calls())))
    bought = asyncio.run(w.outcome())
    reply = asyncio.run(w.call("search", {"query": "shoes"}))
    assert reply.is_error and "over" in reply.text
    assert asyncio.run(w.outcome()).metrics == bought.metrics

    idle = world(1)
    for _ in range(MAX_STEPS):
        assert not asyncio.run(idle.call("search", {"query": "shoes"})).is_error
    reply = asyncio.run(idle.call("search", {"query": "shoes"}))
    assert reply.is_error and str(MAX_STEPS) in reply.text
    outcome = asyncio.run(idle.outcome())
    assert outcome.status is Status.SCORED and outcome.success is False
    assert outcome.metrics == {"reward": 0.0, "purchase_match_rate": 0.0, "mean_turns": 25.0}


def test_no_calls_is_an_episode_that_bought_nothing() -> None:
    outcome = asyncio.run(world(2).outcome())
    assert outcome.status is Status.SCORED and outcome.success is False
    assert outcome.metrics["reward"] == 0.0


def test_failed_is_a_model_error_with_metrics_at_zero() -> None:
    outcome = world(0).failed("x")
    assert outcome.status is Status.MODEL_ERROR and outcome.success is False
    assert outcome.message == "x"
    assert outcome.metrics == {"reward": 0.0, "purchase_match_rate": 0.0}
    assert TASK.aggregate([outcome])["crash_rate"] == 1.0


def test_tools_are_the_docs_actions_with_valid_schemas() -> None:
    tools = world(0).tools
    assert sorted(t.name for t in tools) == sorted(FUNCTIONS) == ["click", "search"]
    for tool in tools:
        Draft202012Validator.check_schema(dict(tool.input_schema))
        assert tool.input_schema["type"] == "object" and tool.input_schema["required"]
        assert tool.input_schema["additionalProperties"] is False
        said = FUNCTIONS[tool.name].splitlines()[1].lstrip("# ")
        assert said in tool.description
    assert world(1).tools is world(0).tools  # built once


def test_translate_native_actions() -> None:
    w = world(0)
    calls = asyncio.run(w.translate("search[Red Shoes]\n\nclick[B0X] trailing words\n"))
    assert calls == [
        ToolCall("search", {"query": "Red Shoes"}),
        ToolCall("click", {"target": "B0X"}),
    ]
    for bad in ("Action: search[x]", "buy[x]", "search[]", "click[a[b]", "hello"):
        with pytest.raises(Untranslatable):
            asyncio.run(w.translate(bad))
    assert asyncio.run(w.translate("")) == []


def test_building_a_world_is_cheap_and_reads_no_gold() -> None:
    loaded = data("v0")
    loaded.gold.clear()
    started = time.perf_counter()
    for sample in loaded.samples[:50]:
        TASK.agent_world(loaded, sample, cast(Any, None))
    assert time.perf_counter() - started < 1.0
    assert isinstance(TASK, HasAgentWorld) is True


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["search", "click"]))
def test_a_call_is_refused_or_parses_back_to_itself(value: str, name: str) -> None:
    key = "query" if name == "search" else "target"
    try:
        action = call_action(name, {key: value})
    except BadCall:
        return
    parsed = parse_action(action)
    assert (parsed.name, parsed.arg) == (name, value.lower())


_LINE = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["search[", "click[", " click[", "Action: search[", "buy[", ""]),
        st.text(alphabet="aB []<>\n", max_size=12),
        st.sampled_from(["]", "] tail", "]]", ""]),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=5).map("\n".join))
def test_translate_gives_calls_that_redo_each_line_or_refuses(text: str) -> None:
    try:
        calls = action_calls(text)
    except Untranslatable:
        return
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert len(calls) == len(lines)
    for call, line in zip(calls, lines, strict=True):
        key = "query" if call.name == "search" else "target"
        assert parse_action(call_action(call.name, call.arguments)) == parse_action(line)
        assert call.arguments[key]
