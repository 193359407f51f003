"""The shop as a pure, deterministic state machine: ``Store`` (catalogue, goals, search) and
``Session`` (one shopper's episode).

API (stable; the text task, the HTML server and the gymnasium env all drive it)::

    store = Store.load()                         # once per process (cached); ~0.3 s
    session = store.new_session(goal_id, layout="v0")   # or a Goal; layout "v0" | "v1"
    session.observation                          # the current page as text
    session.page                                 # the same page as data (pages.Page)
    result = session.step("search[usb flash drive]")
    result.observation, result.page, result.reward, result.done, result.info
    pages.render(result.page, "v1")              # the same page in the other layout

``Page`` (``pages.py``) is plain data for any front end: ``kind`` (search, results, item,
description, features, reviews, done), ``instruction``, ``page_number``/``total``/``results``
(``ResultItem(asin, title, price_text)``), ``product`` (a ``catalogue.Product``),
``selected`` options, ``visited`` ASINs (lower case), ``buttons`` in page order, ``reward``
on the done page, and ``clickables`` (the lower-cased texts a ``click[...]`` may name).

``step`` never raises on an action: an action that is not ``search[...]`` / ``click[...]``
for something on the current page changes nothing, returns reward 0 and ``info["valid"]``
False with a short ``info["reason"]``, and still counts as a step (WebShop's rule). After
``click[buy now]`` the episode is done: ``reward`` is the purchase reward,
``info["reward_parts"]`` its parts (see ``reward.py``), the page is the ``done`` page, and
further steps are no-ops.
Navigation follows WebShop: search from any page (50 results, 10 per page), ``Next >`` /
``< Prev`` between result pages (no upper bound), ``< Prev`` from an item back to its results
page and from Description/Features/Reviews back to the item, ``Back to Search`` to the start
page with everything cleared; clicking an option value selects it (one value per option).
A session holds no randomness and no clock: the same actions give the same pages.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.tasks.web_shop import catalogue, pages
from toolbench.tasks.web_shop.actions import parse_action
from toolbench.tasks.web_shop.catalogue import Goal, Product
from toolbench.tasks.web_shop.pages import Page, ResultItem
from toolbench.tasks.web_shop.reward import Reward, reward
from toolbench.tasks.web_shop.search import ProductIndex

PRODUCT_WINDOW = 10  # results per page
MAX_REASON_CHARS = 120


@dataclass(frozen=True)
class StepResult:
    observation: str
    page: Page
    reward: float
    done: bool
    info: dict[str, Any]


class Store:
    """The catalogue, its goals and its search index; read-only once built."""

    def __init__(self, products: Sequence[Product], goals: Sequence[Goal]) -> None:
        self.products = list(products)
        self.goals = list(goals)
        self.by_asin = {p.asin: p for p in self.products}
        self.index = ProductIndex(self.products)
        self._searches: dict[str, tuple[int, ...]] = {}

    @classmethod
    def load(cls, folder: Path | None = None) -> Store:
        """The committed shop (cached per folder, so a process builds the index once)."""
        return _load(str(folder or catalogue.SHOP_DIR))

    def goal(self, goal_id: int) -> Goal:
        if not 0 <= goal_id < len(self.goals):
            raise KeyError(f"goal {goal_id} does not exist (0..{len(self.goals) - 1})")
        return self.goals[goal_id]

    def search(self, query: str) -> tuple[int, ...]:
        """Catalogue positions of the results for ``query`` (memoised: queries repeat)."""
        hit = self._searches.get(query)
        if hit is None:
            hit = tuple(self.index.search(query))
            if len(self._searches) < 100_000:
                self._searches[query] = hit
        return hit

    def new_session(self, goal: Goal | int, layout: str = "v0") -> Session:
        if layout not in pages.LAYOUTS:
            raise ValueError(f"layout must be one of {pages.LAYOUTS}, not {layout!r}")
        return Session(self, goal if isinstance(goal, Goal) else self.goal(goal), layout)


@functools.lru_cache(maxsize=4)
def _load(folder: str) -> Store:
    products, goals = catalogue.load(Path(folder))
    return Store(products, goals)


@dataclass
class Session:
    """One episode's state. Build it with ``Store.new_session``."""

    store: Store = field(repr=False)
    goal: Goal
    layout: str = "v0"
    kind: str = "search"  # the page shown: search, results, item, description, ...
    keywords: str | None = None
    results: tuple[int, ...] = ()
    page_number: int = 1
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    visited: set[str] = field(default_factory=set)
    done: bool = False
    steps: int = 0
    outcome: Reward | None = None
    bought: str | None = None

    @property
    def page(self) -> Page:
        instruction = self.goal.instruction_text
        if self.kind == "search":
            return Page("search", instruction, buttons=("Search",))
        if self.kind == "results":
            window = self.results[
                (self.page_number - 1) * PRODUCT_WINDOW : self.page_number * PRODUCT_WINDOW
            ]
            items = tuple(
                ResultItem(p.asin, p.title, p.price_text)
                for p in (self.store.products[i] for i in window)
            )
            buttons = (pages.BACK, *(() if self.page_number == 1 else (pages.PREV,)), pages.NEXT)
            return Page("results", instruction, self.page_number, len(self.results), items,
                        visited=frozenset(self.visited), buttons=buttons)  # fmt: skip
        product = self.store.by_asin[self.asin or ""]
        if self.kind == "done":
            value = None if self.outcome is None else self.outcome.reward
            return Page("done", instruction, product=product, selected=dict(self.options),
                        reward=value)  # fmt: skip
        buttons = (pages.BACK, pages.PREV)
        if self.kind == "item":
            buttons += (*pages.SUB_PAGES, pages.BUY)
        return Page(self.kind, instruction, product=product, selected=dict(self.options),
                    visited=frozenset(self.visited), buttons=buttons)  # fmt: skip

    @property
    def observation(self) -> str:
        return pages.render(self.page, self.layout)

    def step(self, action: str) -> StepResult:
        """Apply one action (any text); see the module doc for the rules."""
        self.steps += 1
        info: dict[str, Any] = {"valid": False}
        if self.done:
            info["reason"] = "the episode is over"
            return self._result(0.0, info)
        parsed = parse_action(action)
        if parsed.name == "search" and parsed.arg:
            self._search(parsed.arg)
            info["valid"] = True
        elif parsed.name == "click" and parsed.arg is not None:
            clickables = self.page.clickables
            if parsed.arg != "search" and parsed.arg in clickables:
                info["valid"] = True
                return self._click(parsed.arg, clickables[parsed.arg], info)
            info["reason"] = f"nothing to click named {_short(parsed.arg)} on this page"
        elif parsed.name in ("search", "click"):
            info["reason"] = f"{parsed.name}[...] needs a non-empty argument"
        else:
            info["reason"] = "not an action: write search[keywords] or click[button]"
        return self._result(0.0, info)

    def _search(self, keywords: str) -> None:
        self.keywords = keywords
        self.results = self.store.search(" ".join(keywords.split(" ")))
        self.kind, self.page_number, self.asin, self.options = "results", 1, None, {}

    def _click(
        self, target: str, option: tuple[str, str] | None, info: dict[str, Any]
    ) -> StepResult:
        if option is not None:
            self.options[option[0]] = option[1]
        elif target == "back to search":
            self.kind, self.keywords, self.results, self.page_number = "search", None, (), 1
            self.asin, self.options, self.visited = None, {}, set()
        elif target == "next >":
            self.page_number += 1
        elif target == "< prev":
            self._prev()
        elif target in ("description", "features", "reviews"):
            self.kind = target
        elif target == "buy now":
            return self._buy(info)
        else:  # a product link on a results page
            product = self.store.products[self._position(target)]
            self.kind, self.asin, self.options = "item", product.asin, {}
            self.visited.add(target)
        return self._result(0.0, info)

    def _prev(self) -> None:
        if self.kind == "results":
            self.page_number -= 1
        elif self.kind == "item":
            self.kind, self.asin, self.options = "results", None, {}
        else:
            self.kind = "item"

    def _position(self, asin_lower: str) -> int:
        for i in self.results:
            if self.store.products[i].asin.lower() == asin_lower:
                return i
        raise KeyError(asin_lower)  # unreachable: only listed ASINs are clickable

    def _buy(self, info: dict[str, Any]) -> StepResult:
        product = self.store.by_asin[self.asin or ""]
        self.outcome = reward(product, self.goal, product.price, self.options)
        self.done, self.bought, self.kind = True, product.asin, "done"
        info["reward_parts"] = self.outcome.as_json()
        info["bought"] = {"asin": product.asin, "options": dict(self.options)}
        return self._result(self.outcome.reward, info)

    def _result(self, value: float, info: dict[str, Any]) -> StepResult:
        page = self.page
        return StepResult(pages.render(page, self.layout), page, value, self.done, info)


def _short(text: str) -> str:
    return repr(text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "...")
