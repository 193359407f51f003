"""The committed shop: rebuilt byte for byte, its fields as the memo lists them, and every goal
reachable by the expert, which scores what WebShop scores an exact purchase (1, or below 1 where
WebShop's colour normaliser loses an option: see ``exact.py``)."""

from __future__ import annotations

import re

import pytest

from tests.tasks.web_shop.exact import exact_purchase_reward
from toolbench.tasks.web_shop import build_data, catalogue
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.world import Store


def test_committed_files_are_what_the_builders_write() -> None:
    for name, blob in catalogue.encoded().items():
        assert (catalogue.SHOP_DIR / name).read_bytes() == blob, name
    store = Store.load()
    for version in ("v0", "v1"):
        for relative, text in build_data.folder_files(store, version).items():
            path = build_data.DATA_DIR / version / relative
            assert path.read_text(encoding="utf-8") == text, path
    sizes = [(catalogue.SHOP_DIR / n).stat().st_size for n in catalogue.encoded()]
    assert sum(sizes) < 2_000_000


def test_products_and_goals_have_the_fields_the_reward_needs() -> None:
    products, goals = catalogue.load()
    assert len(products) >= 1000 and len({p.asin for p in products}) == len(products)
    for product in products:
        assert re.fullmatch(r"B0[A-Z0-9]{8}", product.asin)
        assert 1 <= len(product.pricing) <= 2 and product.pricing[0] <= product.price
        assert product.price <= product.pricing[-1]
        assert product.product_category.count(" › ") >= 2 and product.title_nouns
        assert all(v == v.lower() for vs in product.options.values() for v in vs)
    by_asin = {p.asin: p for p in products}
    assert [g.id for g in goals] == list(range(len(goals)))
    for goal in goals[:500]:
        product = by_asin[goal.asin]
        assert set(goal.attributes) <= set(product.attributes) and goal.attributes
        assert all(product.options[k] and v in product.options[k]
                   for k, v in goal.goal_options.items())  # fmt: skip
        assert goal.price_upper > product.price
        if goal.price_upper < catalogue.NO_CAP:
            assert goal.instruction_text.endswith(
                f", and price lower than {goal.price_upper:.2f} dollars"
            )
        for name, value in goal.goal_options.items():
            assert f"{name}: {value}" in goal.instruction_text


def test_the_expert_buys_every_goal_exactly() -> None:
    store = Store.load()
    turns, below = [], 0
    for goal in store.goals:
        session = store.new_session(goal)
        while not session.done and session.steps < 25:
            session.step(ideal_action(session))
        assert session.bought == goal.asin and session.options == goal.goal_options, goal.id
        assert session.outcome is not None, goal.id
        assert session.outcome.reward == pytest.approx(exact_purchase_reward(goal)), goal.id
        below += session.outcome.reward < 1.0
        turns.append(session.steps)
    assert max(turns) <= 12
    assert below == 46  # goals asking for grapefruit or sandalwood (of 4,413)
