"""What a page holds (``Page``) and how it reads as text: v0 (``[SEP]``) and v1 (lines).

A ``Page`` is plain data built by the session; renderers turn it into text, and an HTML
renderer can turn the same ``Page`` into markup. ``clickables`` are the lower-cased texts a
``click[...]`` may name on the page, as WebShop collects them from the page's buttons, product
links and option buttons.

v0 is WebShop's ``text`` observation (what SambaNova's evaluator showed the model): every
visible text of the page joined by `` [SEP] ``. v1 is WebShop's ``text_rich`` layout, the one
the original README's demonstrations show: one text per line, buttons as
``[button] X [button_]``, clicked ones as ``[clicked button] X [clicked button_]``, product
links after a blank line, options indented, and ``You have clicked X.`` lines on top for the
options selected so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolbench.tasks.web_shop.catalogue import Product

SEP = " [SEP] "
BACK = "Back to Search"
NEXT = "Next >"
PREV = "< Prev"
SUB_PAGES = ("Description", "Features", "Reviews")
BUY = "Buy Now"
RATING = "N.A."
V1_TITLE = "Amazon Shopping Game"
V0_TITLE = "WebShop"
LAYOUTS = ("v0", "v1")
DONE = "Thank you for shopping with us!"


@dataclass(frozen=True)
class ResultItem:
    asin: str
    title: str
    price_text: str


@dataclass(frozen=True)
class Page:
    """One page of the shop. ``kind``: search, results, item, description, features,
    reviews, or done (after Buy Now: the product bought, ``selected`` and ``reward``)."""

    kind: str
    instruction: str
    page_number: int = 0
    total: int = 0
    results: tuple[ResultItem, ...] = ()
    product: Product | None = None
    selected: dict[str, str] = field(default_factory=dict)
    visited: frozenset[str] = frozenset()
    buttons: tuple[str, ...] = ()  # navigation and action buttons, in page order
    reward: float | None = None  # the purchase reward, on the done page

    @property
    def clickables(self) -> dict[str, tuple[str, str] | None]:
        """Lower-cased clickable text -> (option name, value) for an option, else None."""
        keys: dict[str, tuple[str, str] | None] = {b.lower(): None for b in self.buttons}
        if self.kind == "search":
            keys["search"] = None
        for item in self.results:
            keys[item.asin.lower()] = None
        if self.kind == "item" and self.product is not None:
            for name, values in self.product.options.items():
                for value in values:
                    keys[value.lower()] = (name, value)
        return keys


def _header(page: Page) -> list[str]:
    return ["Instruction:", page.instruction]


def _item_lines(product: Product) -> list[str]:
    return [product.title, f"Price: {product.price_text}", f"Rating: {RATING}"]


def _done_lines(page: Page) -> list[str]:
    """The page after a purchase (the episode is over; no model sees it)."""
    product = page.product
    assert product is not None
    chosen = ", ".join(f"{k}: {v}" for k, v in page.selected.items()) or "none"
    return [DONE, "Purchased", product.asin, product.title, f"Options: {chosen}",
            f"Reward: {page.reward}"]  # fmt: skip


def render_v0(page: Page) -> str:
    """WebShop's simple text: visible texts joined by `` [SEP] ``."""
    if page.kind == "search":
        return SEP.join([V0_TITLE, *_header(page), "Search"])
    if page.kind == "done":
        return SEP.join(_done_lines(page))
    parts = [*_header(page), BACK]
    if page.kind == "results":
        parts += _results_head(page)
        for item in page.results:
            parts += [item.asin, item.title, item.price_text]
        return SEP.join(parts)
    product = page.product
    assert product is not None
    parts.append(PREV)
    if page.kind == "item":
        for name, values in product.options.items():
            parts += [name, *values]
        parts += [*_item_lines(product), *SUB_PAGES, BUY]
    elif page.kind == "description":
        parts.append(product.description)
    elif page.kind == "features":
        parts += list(product.bullets)
    return SEP.join(part.strip() for part in parts if part.strip())


def _results_head(page: Page) -> list[str]:
    """``Page N (Total results: M)`` with its buttons: ``< Prev`` before ``Next >`` from
    page 2 on."""
    head = [f"Page {page.page_number} (Total results: {page.total})"]
    if page.page_number > 1:
        head.append(PREV)
    head.append(NEXT)
    return head


def _button(text: str, clicked: bool = False) -> str:
    if clicked:
        return f"[clicked button] {text} [clicked button_]"
    return f"[button] {text} [button_]"


def render_v1(page: Page) -> str:
    """WebShop's rich text: one text per line, buttons marked."""
    if page.kind == "search":
        return "\n".join([V1_TITLE, *_header(page), _button("Search")])
    if page.kind == "done":
        return "\n".join(_done_lines(page))
    lines = [*_header(page), _button(BACK)]
    if page.kind == "results":
        head = _results_head(page)
        lines.append(head[0])
        lines += [_button(b) for b in head[1:]]
        for item in page.results:
            visited = item.asin.lower() in page.visited
            lines += ["", _button(item.asin, visited), item.title, item.price_text]
        return "\n".join(lines)
    product = page.product
    assert product is not None
    lines.append(_button(PREV))
    clicked: list[str] = []
    if page.kind == "item":
        for name, values in product.options.items():
            lines.append(name)
            for value in values:
                chosen = page.selected.get(name) == value
                lines.append("  " + _button(value, chosen))
                if chosen:
                    clicked.append(f"You have clicked {value}.")
        lines += _item_lines(product)
        lines += [_button(b) for b in (*SUB_PAGES, BUY)]
    elif page.kind == "description":
        lines.append(product.description)
    elif page.kind == "features":
        lines += list(product.bullets)
    return "\n".join(clicked[::-1] + lines)


def render(page: Page, layout: str) -> str:
    return render_v1(page) if layout == "v1" else render_v0(page)
