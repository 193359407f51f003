"""The store: page texts (v0 and v1) on a hand-built shop, navigation, hostile actions."""

from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.web_shop.test_reward import DRIVE, GOAL
from toolbench.tasks.web_shop.catalogue import Product
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.world import Store

INSTR = GOAL.instruction_text
PEN = Product(
    asin="B0TESTPEN2",
    title="Voltari Gel Pen Set",
    description="Smooth ink.",
    bullets=("Quick Dry: no smudges", "Pack: twelve pens"),
    attributes=("quick dry",),
    options={},
    pricing=(4.5, 9.0),
    price=6.25,
    query="gel pens",
    category="office",
    product_category="Office Products › Writing › Pens",
    title_nouns=("voltari", "pen", "set"),
)


def _drives(n: int) -> list[Product]:
    return [
        dataclasses.replace(DRIVE, asin=f"B0DRIVE{i:03d}", title=f"Flash Drive Model {i}")
        for i in range(n)
    ]


@functools.cache
def _small_store() -> Store:
    return Store([DRIVE, PEN, *_drives(23)], [GOAL])


@pytest.fixture(scope="module")
def store() -> Store:
    return _small_store()


def test_v0_pages_exactly(store: Store) -> None:
    session = store.new_session(0)
    assert session.observation == f"WebShop [SEP] Instruction: [SEP] {INSTR} [SEP] Search"
    first = session.step("search[gel pen]").observation
    assert first == (
        f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] Page 1 (Total results: 1) "
        "[SEP] Next > [SEP] B0TESTPEN2 [SEP] Voltari Gel Pen Set [SEP] $4.5 to $9.0"
    )
    item = session.step("click[b0testpen2]").observation
    assert item == (
        f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev [SEP] "
        "Voltari Gel Pen Set [SEP] Price: $4.5 to $9.0 [SEP] Rating: N.A. [SEP] Description "
        "[SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    head = f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev"
    assert session.step("click[Description]").observation == f"{head} [SEP] Smooth ink."
    assert session.step("click[< Prev]").observation == item
    features = session.step("click[features]").observation
    assert features == f"{head} [SEP] Quick Dry: no smudges [SEP] Pack: twelve pens"
    session.step("click[< prev]")
    assert session.step("click[reviews]").observation == head
    session.step("click[< prev]")
    assert session.step("click[< prev]").observation == first


def test_v0_item_options_and_result_pages(store: Store) -> None:
    session = store.new_session(0)
    page1 = session.step("search[flash drive]").observation
    assert "Page 1 (Total results: 24) [SEP] Next > [SEP] B0" in page1
    page2 = session.step("click[next >]").observation
    assert "Page 2 (Total results: 24) [SEP] < Prev [SEP] Next > [SEP] " in page2
    session.step("click[next >]")
    page4 = session.step("click[next >]").observation  # no upper bound: an empty page
    assert page4.endswith("Page 4 (Total results: 24) [SEP] < Prev [SEP] Next >")
    session.step("search[kestrel]")
    item = session.step("click[B0TESTDRV1]").observation
    assert "< Prev [SEP] capacity [SEP] 32gb [SEP] 64gb [SEP] color [SEP] black [SEP] " in item
    assert "navy blue [SEP] Kestrel High Speed USB Flash Drive, Metal Casing [SEP] " in item
    assert session.step("click[64gb]").observation == item  # v0 shows no selection


def test_v1_pages(store: Store) -> None:
    session = store.new_session(0, layout="v1")
    assert session.observation == (
        f"Amazon Shopping Game\nInstruction:\n{INSTR}\n[button] Search [button_]"
    )
    results = session.step("search[gel pen]").observation
    assert results == (
        f"Instruction:\n{INSTR}\n[button] Back to Search [button_]\n"
        "Page 1 (Total results: 1)\n[button] Next > [button_]\n\n"
        "[button] B0TESTPEN2 [button_]\nVoltari Gel Pen Set\n$4.5 to $9.0"
    )
    session.step("search[kestrel]")
    session.step("click[b0testdrv1]")
    item = session.step("click[navy blue]").observation
    assert item.startswith(f"You have clicked navy blue.\nInstruction:\n{INSTR}\n")
    assert "color\n  [button] black [button_]\n  [clicked button] navy blue [clicked" in item
    assert item.endswith("[button] Reviews [button_]\n[button] Buy Now [button_]")
    session.step("click[< prev]")
    assert "[clicked button] B0TESTDRV1 [clicked button_]" in session.observation


def test_navigation_resets(store: Store) -> None:
    session = store.new_session(0)
    session.step("search[kestrel]")
    session.step("click[b0testdrv1]")
    session.step("click[32gb]")
    assert session.options == {"capacity": "32gb"}
    session.step("click[64gb]")  # one value per option
    assert session.options == {"capacity": "64gb"}
    session.step("search[pen]")  # search works from any page and clears the selection
    assert session.kind == "results" and session.options == {} and session.asin is None
    session.step("click[back to search]")
    assert session.kind == "search" and session.keywords is None and not session.visited


@pytest.mark.parametrize(
    "action",
    [
        "search[]", "click[]", "click[search]", "click[buy now]", "click[next >]",
        "Action: search[usb]", "search usb", "", "   ", "\n\nsearch[usb]", "buy[now]",
        "click[B0NOTHERE1]", "search[" + "[" * 50_000, "click[" + "x" * 1_000_000 + "]",
        "搜索[usb]", "click[💳]", "{\"action\": \"search[usb]\"}",
    ],
)  # fmt: skip
def test_hostile_actions_are_noops_that_cost_a_step(store: Store, action: str) -> None:
    session = store.new_session(0)
    before = session.observation
    result = session.step(action)
    assert result.observation == before and result.reward == 0.0 and not result.done
    assert result.info["valid"] is False and len(result.info["reason"]) < 200
    assert session.steps == 1


def test_buy_then_nothing_more(store: Store) -> None:
    session = store.new_session(0)
    while not session.done:
        result = session.step(ideal_action(session))
    assert result.reward == 1.0 and result.page.kind == "done"
    assert result.info["bought"] == {"asin": DRIVE.asin, "options": GOAL.goal_options}
    after = session.step("search[pen]")
    assert after.done and after.reward == 0.0 and after.info["valid"] is False


def test_wrong_purchase_is_scored_not_refused(store: Store) -> None:
    session = store.new_session(0)
    for action in ("search[gel pen]", "click[b0testpen2]", "click[buy now]"):
        result = session.step(action)
    assert result.done and result.info["reward_parts"]["r_type"] == 0.0
    assert result.reward == 0.0


def test_committed_shop_loads_once_and_every_goal_is_reachable() -> None:
    shop = Store.load()
    assert Store.load() is shop
    assert len(shop.products) >= 1000 and len(shop.goals) >= 4000
    departments = {p.category for p in shop.products}
    assert departments == {"electronics", "clothing_shoes", "beauty", "grocery", "home_kitchen"}
    with pytest.raises(KeyError):
        shop.new_session(len(shop.goals))


_WORDS = st.sampled_from(
    ["search[", "click[", "]", "[", "kestrel", "b0testdrv1", "next >", "< prev", "buy now",
     "64gb", "navy blue", "description", "back to search", "\n", " ", "é", "💳"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_WORDS, max_size=6).map("".join), max_size=12))
def test_any_action_sequence_is_total(actions: list[str]) -> None:
    session = _small_store().new_session(0, layout="v1")
    for number, action in enumerate(actions, start=1):
        result = session.step(action)
        assert session.steps == number and isinstance(result.observation, str)
        assert result.reward == 0.0 or result.done
        assert set(result.info) <= {"valid", "reason", "reward_parts", "bought"}
