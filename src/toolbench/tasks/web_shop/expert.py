"""The expert policy: the ideal next action on the current page (what ``oracle`` answers).

It reads only the session's state and the goal, so it recovers from any detour: search with
the goal's query (or, when that query does not list the goal product, its title), page to the
product, open it, select each goal option not yet selected, buy. Buying the goal product with
the goal options at its price under the cap is the exact purchase: reward 1, except where
WebShop's colour normaliser loses an option ("grapefruit" read as "grape"), which WebShop
scores below 1 too (goals 143, 152, 156, 231 of the test ids).
"""

from __future__ import annotations

from toolbench.tasks.web_shop.world import PRODUCT_WINDOW, Session


def search_phrase(session: Session) -> str:
    """The goal's query when its results list the goal product, else the product's title."""
    goal, store = session.goal, session.store
    query = goal.query
    if any(store.products[i].asin == goal.asin for i in store.search(query)):
        return query
    return goal.name.lower()


def ideal_action(session: Session) -> str:
    goal = session.goal
    if session.kind == "search":
        return f"search[{search_phrase(session)}]"
    if session.kind == "results":
        return _on_results(session)
    if session.kind != "item" or session.asin != goal.asin:
        return "click[< Prev]"
    product = session.store.by_asin[goal.asin]
    for name in sorted(goal.goal_options):
        value = goal.goal_options[name]
        if session.options.get(name) != value and value in product.options.get(name, ()):
            return f"click[{value}]"
    return "click[Buy Now]"


def _on_results(session: Session) -> str:
    goal, store = session.goal, session.store
    positions = [store.products[i].asin for i in session.results]
    if goal.asin not in positions:
        return f"search[{search_phrase(session)}]"
    wanted_page = positions.index(goal.asin) // PRODUCT_WINDOW + 1
    if wanted_page == session.page_number:
        return f"click[{goal.asin}]"
    return "click[Next >]" if wanted_page > session.page_number else "click[< Prev]"
