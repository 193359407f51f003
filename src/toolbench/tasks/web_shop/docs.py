"""API docs and demonstrations for web_shop, written for this project.

``FUNCTIONS`` describes the two actions. Demonstrations are single steps of expert episodes
on goals outside the test ids (``DEMO_GOALS``), one file per step in the original layout
(``Task: <page>`` / ``Action:`` / the action), rendered in the version's page layout, plus a
few recoveries (leaving a wrong product, a sub-page) so every page kind has an example.
"""

from __future__ import annotations

from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.world import Store

FUNCTIONS: dict[str, str] = {
    "search": (
        "search[keywords]\n"
        "# Types the keywords into the shop's search box and shows page 1 of the results "
        "(10 products a page, 50 at most). It works from any page and clears the product "
        "and options chosen so far. Example: search[waterproof bluetooth speaker]"
    ),
    "click": (
        "click[text]\n"
        "# Clicks something shown on the current page, named by its text: a product's ASIN "
        "on a results page; an option value on a product page (it selects that value); "
        "Description, Features or Reviews; Buy Now (ends the episode with the product and "
        "options selected); < Prev, Next > and Back to Search. Example: click[Buy Now]"
    ),
}
DEMO_GOALS = (4000, 4001, 4002, 4003, 4004, 4005)
DETOUR_GOAL = 4006


def demonstrations(store: Store, layout: str) -> list[tuple[str, str]]:
    """(page text, action) pairs: every step of the expert's demo episodes, then detours."""
    demos: list[tuple[str, str]] = []
    for goal_id in DEMO_GOALS:
        session = store.new_session(goal_id, layout)
        while not session.done:
            action = ideal_action(session)
            demos.append((session.observation, action))
            session.step(action)
    demos += _detours(store, layout)
    return demos


def _detours(store: Store, layout: str) -> list[tuple[str, str]]:
    """A wrong product opened by mistake, and its Features page: both left with < Prev."""
    session = store.new_session(DETOUR_GOAL, layout)
    session.step(ideal_action(session))  # the search
    listed = [store.products[i].asin for i in session.results]
    wrong = next(asin for asin in listed if asin != session.goal.asin)
    session.step(f"click[{wrong}]")
    steps = [(session.observation, "click[< Prev]")]
    session.step("click[Features]")
    steps.append((session.observation, "click[< Prev]"))
    return steps
