"""The built-in baseline's shopper: a rule-following policy that reads only the page text.

It sees what a model sees (the page, in either layout; never the goal or the catalogue):
search the instruction (without its price clause), open the first result whose price is
within the instruction's cap (paging on for up to five pages, else the first result), click
each option value the instruction names (``name: value``), then buy. A page it does not expect
(a sub-page) gets ``click[< Prev]``. The original prompt shows only the current page, and v0
pages do not show which options are selected, so the shopper remembers, per episode, the
values it has clicked; ``ShopperMemory`` holds that and is reset at each episode's first turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from toolbench.tasks.web_shop import pages
from toolbench.types import GenerationRequest

_PRICE_CAP = re.compile(r"price lower than (\d+(?:\.\d+)?) dollars")
_PRICE = re.compile(r"\$(\d+(?:\.\d+)?)")
_TOTAL = re.compile(r"^Page (\d+) \(Total results: (\d+)\)$")
_BUTTON = re.compile(r"^\s*\[(?:clicked )?button\] (.*) \[(?:clicked )?button_\]$")
MAX_PAGES = 5


@dataclass(frozen=True)
class ParsedPage:
    kind: str  # search, results, item, other
    instruction: str
    texts: tuple[str, ...]  # the page's texts in order, button markers removed


def parse_page(text: str) -> ParsedPage:
    """The page's texts, from either layout (v0 ``[SEP]``-joined, v1 one per line)."""
    if pages.SEP.strip() in text:
        texts = [part.strip() for part in text.split(pages.SEP.strip())]
    else:
        texts = []
        for line in text.splitlines():
            match = _BUTTON.match(line)
            texts.append(match.group(1) if match else line.strip())
    texts = [t for t in texts if t and not t.startswith("You have clicked ")]
    instruction = ""
    if "Instruction:" in texts:
        at = texts.index("Instruction:")
        instruction = texts[at + 1] if at + 1 < len(texts) else ""
    if texts[:1] in (["WebShop"], [pages.V1_TITLE]):
        kind = "search"
    elif any(_TOTAL.match(t) for t in texts):
        kind = "results"
    elif pages.BUY in texts:
        kind = "item"
    else:
        kind = "other"
    return ParsedPage(kind, instruction, tuple(texts))


def search_words(instruction: str) -> str:
    """The instruction without its price clause: what the shopper types."""
    cut = instruction.find(", and price lower than")
    words = instruction if cut < 0 else instruction[:cut]
    return " ".join(words.replace("[", " ").replace("]", " ").split())


def _cap(instruction: str) -> float | None:
    match = _PRICE_CAP.search(instruction)
    return float(match.group(1)) if match else None


def _results(page: ParsedPage) -> tuple[int, list[tuple[str, float | None]]]:
    """(page number, [(asin, lowest price)]) of a results page."""
    texts = list(page.texts)
    number, start = 1, 0
    for i, text in enumerate(texts):
        match = _TOTAL.match(text)
        if match:
            number, start = int(match.group(1)), i + 1
    rest = texts[start:]
    while rest and rest[0] in (pages.PREV, pages.NEXT):
        rest = rest[1:]
    items = []
    for i in range(0, len(rest) - 2, 3):
        price = _PRICE.search(rest[i + 2])
        items.append((rest[i], float(price.group(1)) if price else None))
    return number, items


@dataclass
class ShopperMemory:
    """What the shopper has clicked on item pages during the current episode."""

    clicked: set[str] = field(default_factory=set)


class Shopper:
    """The baseline's shopper across episodes: one memory per episode (task, sample id,
    epoch), started afresh at the episode's first turn."""

    def __init__(self) -> None:
        self._memories: dict[tuple[str, str, int], ShopperMemory] = {}

    def reply(self, request: GenerationRequest) -> str | None:
        """The action for the page the request shows (its sample's query)."""
        if request.sample is None:
            return None
        key = (request.sample.task, request.sample.id, request.epoch)
        if request.step == "turn-1" or key not in self._memories:
            if len(self._memories) >= 4096:
                self._memories.clear()
            self._memories[key] = ShopperMemory()
        return next_action(request.sample.query, self._memories[key])


def next_action(text: str, memory: ShopperMemory) -> str:
    page = parse_page(text)
    if page.kind == "search":
        return f"search[{search_words(page.instruction) or 'item'}]"
    if page.kind == "results":
        return _on_results(page)
    if page.kind == "item":
        return _on_item(page, memory)
    return f"click[{pages.PREV}]"


def _on_results(page: ParsedPage) -> str:
    number, items = _results(page)
    cap = _cap(page.instruction)
    for asin, price in items:
        if cap is None or price is None or price <= cap:
            return f"click[{asin}]"
    if items and number < MAX_PAGES:
        return f"click[{pages.NEXT}]"
    if items:
        return f"click[{items[0][0]}]"
    return f"search[{search_words(page.instruction) or 'item'}]"


def _on_item(page: ParsedPage, memory: ShopperMemory) -> str:
    texts = list(page.texts)
    try:
        first = texts.index(pages.PREV) + 1
        last = next(i for i, t in enumerate(texts) if t.startswith("Price: ")) - 1
    except (ValueError, StopIteration):
        return f"click[{pages.BUY}]"
    wanted = page.instruction.lower()
    for value in texts[first:last]:  # option names and values; the title comes last
        if f": {value.lower()}" in wanted and value.lower() not in memory.clicked:
            memory.clicked.add(value.lower())
            return f"click[{value}]"
    return f"click[{pages.BUY}]"
