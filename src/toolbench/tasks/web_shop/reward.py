"""The purchase reward, computed as WebShop's ``get_reward`` computes it.

reward = r_type x (attribute matches + option matches + price ok) / (#attributes + #options + 1)

- An attribute matches when a product attribute has a token-set ratio > 85 with it, else when
  it occurs in the lower-cased title, joined bullet points or description.
- Options: purchased values and goal options go through WebShop's colour normaliser (its
  list, first substring wins); a goal option of a synthetic goal is the pair ``(name, value)``,
  which stays a pair unless one of its two strings *is* a colour word, and is then compared
  as its ``str()`` (so the option name adds tokens: ``'x-large'`` vs ``('size', 'large')`` is
  83, no match). It matches when some purchased value has ratio > 85. So buying exactly the
  goal's "grapefruit" (normalised to "grape") misses ``('flavor', 'grapefruit')``, as in
  WebShop.
- r_type: 1; 0.5 when neither the queries are equal, nor the category paths share two
  elements, nor the title score exceeds 0.2; 0.1 when the title score is below 0.1; 0 when it
  is 0 (later rules win). The title score is |set(goal nouns) & set(bought nouns)| over the
  length of the goal's noun *list*; 0.2 when the goal title has no noun.

Ratios are thefuzz's: both strings lower-cased, non-alphanumerics made spaces, non-ASCII
dropped, the score rounded to an integer; rapidfuzz computes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from toolbench.tasks.web_shop.catalogue import CATEGORY_SEP, Goal, Product

THRESHOLD = 85
_NON_WORD = re.compile(r"(?u)\W")
# WebShop's colour list (normalize.py ``COLOR_SET``), in its order: the normaliser answers the
# first entry contained in a value, so order is part of the reward ("navy blue" -> "blue",
# listed before "navy"; "grapefruit" -> "grape"; "sandalwood" -> "sand"; "standard" -> "tan").
COLOURS = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black",
    "blue", "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel",
    "champagne", "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee",
    "cognac", "copper", "coral", "cranberry", "cream", "crystal", "dark", "denim",
    "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite",
    "grass", "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki",
    "lavender", "lemon", "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve",
    "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom", "mustard", "natural",
    "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum", "purple",
    "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver",
    "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal",
    "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip


def _process(text: str) -> str:
    """``thefuzz``'s ``full_process`` with ``force_ascii``."""
    ascii_only = text.encode("ascii", "ignore").decode("ascii")
    return _NON_WORD.sub(" ", ascii_only).lower().strip()


def ratio(a: str, b: str) -> int:
    """``thefuzz`` ``token_set_ratio``: an integer 0..100 (0 when either side is empty)."""
    left, right = _process(a), _process(b)
    if not left or not right:
        return 0
    return round(fuzz.token_set_ratio(left, right))


def normalize_colour(value: Any) -> Any:
    """WebShop's ``normalize_color``: the first entry of ``COLOURS`` that is a substring of
    ``value`` (for a goal's ``(name, value)`` pair ``in`` is tuple membership, so only a
    string *equal* to an entry), else ``value`` unchanged. Kept quirks and all, because the
    reward must equal the original's: an exact purchase of "grapefruit" becomes "grape",
    which no longer matches the goal pair, so the original scores it below 1."""
    for colour in COLOURS:
        if colour in value:
            return colour
    return value


def attribute_matches(product: Product, attributes: Sequence[str]) -> int:
    text_fields = (
        product.title.lower(),
        " ".join(product.bullets).lower(),
        product.description.lower(),
    )
    matches = 0
    for wanted in attributes:
        fuzzy = any(ratio(have, wanted) > THRESHOLD for have in product.attributes)
        if fuzzy or any(wanted in text for text in text_fields):
            matches += 1
    return matches


def option_matches(selected: Sequence[str], goal_options: Mapping[str, str]) -> int:
    bought = [str(normalize_colour(value)) for value in selected]
    matches = 0
    for pair in goal_options.items():
        wanted = normalize_colour(pair)
        text = wanted if isinstance(wanted, str) else str(wanted)
        if any(ratio(value, text) > THRESHOLD for value in bought):
            matches += 1
    return matches


@dataclass(frozen=True)
class TypeMatch:
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float


def type_match(product: Product, goal: Goal) -> TypeMatch:
    query_match = product.query == goal.query
    bought_path = {part.strip() for part in product.product_category.split(CATEGORY_SEP.strip())}
    goal_path = {part.strip() for part in goal.product_category.split(CATEGORY_SEP.strip())}
    category_match = len(bought_path & goal_path) >= 2
    wanted = goal.title_nouns
    shared = len(set(wanted) & set(product.title_nouns))
    title_score = shared / len(wanted) if wanted else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return TypeMatch(r_type, query_match, category_match, title_score)


@dataclass(frozen=True)
class Reward:
    """The reward and the parts it came from (kept in the episode's record)."""

    reward: float
    r_type: float
    attribute_matches: int
    option_matches: int
    price_ok: bool
    query_match: bool
    category_match: bool
    title_score: float

    def as_json(self) -> dict[str, Any]:
        return {
            "reward": self.reward, "r_type": self.r_type,
            "attribute_matches": self.attribute_matches, "option_matches": self.option_matches,
            "price_ok": self.price_ok, "query_match": self.query_match,
            "category_match": self.category_match, "title_score": round(self.title_score, 6),
        }  # fmt: skip


def reward(product: Product, goal: Goal, price: float, options: Mapping[str, str]) -> Reward:
    """The reward for buying ``product`` at ``price`` with ``options`` selected."""
    kind = type_match(product, goal)
    price_ok = price <= goal.price_upper
    attrs = attribute_matches(product, goal.attributes)
    opts = option_matches(list(options.values()), goal.goal_options)
    total = (attrs + opts + int(price_ok)) / (len(goal.attributes) + len(goal.goal_options) + 1)
    return Reward(
        total * kind.r_type, kind.r_type, attrs, opts, price_ok,
        kind.query_match, kind.category_match, kind.title_score,
    )  # fmt: skip
