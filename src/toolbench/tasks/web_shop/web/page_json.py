"""A page as JSON for agent frameworks: the same ``Page`` the text renderers read.

The text observation is what a model reads; this is the structure behind it, so a framework
can list what is clickable without parsing ``[SEP]`` text. Every ``clickables`` entry is a
valid ``click[...]`` argument on that page, in page order.
"""

from __future__ import annotations

from typing import Any

from toolbench.tasks.web_shop.pages import RATING, Page


def page_json(page: Page) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": page.kind,
        "instruction": page.instruction,
        "buttons": list(page.buttons),
        "clickables": [key for key in page.clickables if key != "search"],
        "has_search_bar": page.kind == "search",
    }
    if page.kind == "results":
        data["page_number"] = page.page_number
        data["total"] = page.total
        data["results"] = [
            {"asin": item.asin, "title": item.title, "price": item.price_text,
             "visited": item.asin.lower() in page.visited}
            for item in page.results
        ]  # fmt: skip
    product = page.product
    if product is not None:
        shown: dict[str, Any] = {
            "asin": product.asin,
            "title": product.title,
            "price": product.price_text,
            "rating": RATING,
            "options": {name: list(values) for name, values in product.options.items()},
        }
        if page.kind == "description":
            shown["description"] = product.description
        elif page.kind == "features":
            shown["features"] = list(product.bullets)
        elif page.kind == "reviews":
            shown["reviews"] = []
        data["product"] = shown
        data["selected"] = dict(page.selected)
    if page.kind == "done":
        data["reward"] = page.reward
    return data
