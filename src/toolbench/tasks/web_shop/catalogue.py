"""The shop's catalogue and goal list: seeded builder, committed files, loading.

WebShop scraped its products and had crowd workers write one instruction per product; we build
both from the lexicon in ``vocab.py`` with one seeded ``random.Random``, so the committed files
are a pure function of the code. Goals follow WebShop's synthetic-goal construction: one goal
per product per combination of its option values (option names sorted), the instruction
extended with ``" with name: value, and ..."`` and the price clause, then the list shuffled
with seed 233 so goal ``k`` is session ``k``. Unlike WebShop, the prices of ranged products and
every price cap are drawn from the seeded generator too, and the final goal (instruction,
attributes, options, price cap, product price) is stored, so a goal id means the same episode
in every process.

``python -m toolbench.tasks.web_shop.catalogue`` rewrites ``data/products.jsonl.gz`` and
``data/goals.jsonl.gz`` byte for byte.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.tasks.web_shop.vocab import BRANDS, DEPARTMENTS, KINDS, PARAPHRASES, TOP, Kind

SHOP_DIR = Path(__file__).parent / "data"  # beside the version folders (packaged with them)
PRODUCTS_FILE = "products.jsonl.gz"
GOALS_FILE = "goals.jsonl.gz"
SEED = 20261125
SHUFFLE_SEED = 233  # WebShop's goal shuffle
PRODUCTS_PER_KIND = 24
PRICE_GRID = tuple(range(10, 1000, 10))
NO_CAP = 1_000_000.0
CATEGORY_SEP = " › "
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ASIN_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"


@dataclass(frozen=True)
class Product:
    """One product as the store and the reward see it (field names follow WebShop's)."""

    asin: str
    title: str
    description: str
    bullets: tuple[str, ...]
    attributes: tuple[str, ...]
    options: dict[str, tuple[str, ...]]  # option name -> values, lower case
    pricing: tuple[float, ...]  # one price or (low, high)
    price: float  # the price paid: the single price, or the seeded draw within the range
    query: str
    category: str
    product_category: str  # category path joined by " › "
    title_nouns: tuple[str, ...]  # nouns of the title, duplicates kept (WebShop's list)

    @property
    def price_text(self) -> str:
        """``$12.99`` or ``$12.99 to $19.5``: Python's float formatting, as WebShop."""
        return " to ".join(f"${value}" for value in self.pricing)

    def to_json(self) -> dict[str, Any]:
        return {
            "asin": self.asin, "title": self.title, "description": self.description,
            "bullets": list(self.bullets), "attributes": list(self.attributes),
            "options": {k: list(v) for k, v in self.options.items()},
            "pricing": list(self.pricing), "price": self.price, "query": self.query,
            "category": self.category, "product_category": self.product_category,
            "title_nouns": list(self.title_nouns),
        }  # fmt: skip

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Product:
        return cls(
            raw["asin"], raw["title"], raw["description"], tuple(raw["bullets"]),
            tuple(raw["attributes"]), {k: tuple(v) for k, v in raw["options"].items()},
            tuple(float(p) for p in raw["pricing"]), float(raw["price"]), raw["query"],
            raw["category"], raw["product_category"], tuple(raw["title_nouns"]),
        )  # fmt: skip


@dataclass(frozen=True)
class Goal:
    """One synthetic goal: what the shopper is told and what the reward checks against."""

    id: int
    asin: str
    instruction_text: str
    attributes: tuple[str, ...]
    goal_options: dict[str, str]  # option name -> wanted value
    price_upper: float
    price: float  # the goal product's price (stored for reference)
    query: str
    category: str
    product_category: str
    name: str  # the goal product's title
    title_nouns: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "asin": self.asin, "instruction_text": self.instruction_text,
            "attributes": list(self.attributes), "goal_options": dict(self.goal_options),
            "price_upper": self.price_upper, "price": self.price, "query": self.query,
            "category": self.category, "product_category": self.product_category,
            "name": self.name, "title_nouns": list(self.title_nouns),
        }  # fmt: skip

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Goal:
        return cls(
            int(raw["id"]), raw["asin"], raw["instruction_text"], tuple(raw["attributes"]),
            dict(raw["goal_options"]), float(raw["price_upper"]), float(raw["price"]),
            raw["query"], raw["category"], raw["product_category"], raw["name"],
            tuple(raw["title_nouns"]),
        )  # fmt: skip


def _cap(phrase: str) -> str:
    return " ".join(word[:1].upper() + word[1:] for word in phrase.split())


def _asin(rng: random.Random, taken: set[str]) -> str:
    while True:
        asin = "B0" + "".join(rng.choice(_ASIN_CHARS) for _ in range(8))
        if asin not in taken:
            taken.add(asin)
            return asin


def _pricing(rng: random.Random, kind: Kind) -> tuple[tuple[float, ...], float]:
    """(the listed price or range, the price paid). Ranges are drawn once, here, seeded."""
    low, high = kind.price
    price = max(1.0, round(rng.uniform(low, high)) - 0.01)
    if rng.random() < 0.25:
        top = round(price + rng.uniform(2, max(3.0, price * 0.5)), 2)
        return (price, top), round(rng.uniform(price, top), 2)
    return (price,), price


def _title(rng: random.Random, kind: Kind, brand: str, attrs: list[str]) -> str:
    spec = rng.choice(kind.specs)
    title = f"{brand} {_cap(attrs[0])} {kind.head}"
    if spec:
        title += f" {spec}"
    if len(attrs) > 2 and rng.random() < 0.5:
        title += f", {_cap(attrs[2])}"
    return title


def _nouns(title: str, kind: Kind, brand: str) -> tuple[str, ...]:
    """The title's nouns: words of the kind's noun list and the brand (a proper noun).
    Computed here, at build time, so scoring needs no part-of-speech tagger."""
    vocabulary = set(kind.nouns) | set(_WORD.findall(brand.lower()))
    return tuple(word for word in _WORD.findall(title.lower()) if word in vocabulary)


def _options(rng: random.Random, kind: Kind) -> dict[str, tuple[str, ...]]:
    chosen: dict[str, tuple[str, ...]] = {}
    for name, pool in kind.options:
        if rng.random() < 0.85:
            k = rng.randint(2, min(4, len(pool)))
            picked = set(rng.sample(pool, k))
            chosen[name] = tuple(value for value in pool if value in picked)
    return chosen


_PLAIN_START = ("with ", "for ", "set of ", "usb", "spf", "bluetooth", "100%", "vitamin")


def _article(phrase: str) -> str:
    last = phrase.split()[-1]
    if last.endswith("s") and not last.endswith("ss"):
        return ""
    return "an " if phrase[:1] in "aeio" else "a "  # "a usb ...", "an organic ..."


def _said(rng: random.Random, attribute: str) -> str:
    """How the shopper words an attribute: the catalogue's phrase, or half the time (where we
    have one) a paraphrase, so finding the product takes more than matching words."""
    other = PARAPHRASES.get(attribute)
    return rng.choice(other) if other and rng.random() < 0.5 else attribute


def _instruction(rng: random.Random, kind: Kind, attributes: list[str]) -> str:
    """The product-level request, before options and price: our own phrasings."""
    wanted = [_said(rng, attribute) for attribute in attributes]
    joined = " and ".join(wanted)
    listed = ", ".join(wanted[:-1]) + (" and " if len(wanted) > 1 else "") + wanted[-1]
    plain = not any(attr.startswith(_PLAIN_START) or attr[:1].isdigit() for attr in wanted)
    query = kind.query
    forms = [
        f"find me {_article(query)}{query}, {listed}",
        f"i'd like to order {_article(query)}{query} with these features: {listed}",
    ]
    if plain:
        forms += [f"i need {_article(query)}{query} that is {joined}",
                  f"i'm looking for {_article(joined)}{joined} {query}",
                  f"i want to buy {_article(query)}{query} which is {joined}",
                  f"show me {_article(joined)}{joined} {query}"]  # fmt: skip
    return rng.choice(forms)


def _product(rng: random.Random, department: str, kind: Kind, taken: set[str]) -> dict[str, Any]:
    brand = rng.choice(BRANDS[department])
    attrs = rng.sample(kind.attrs, rng.randint(2, 4))
    title = _title(rng, kind, brand, attrs)
    features = rng.sample(kind.features, len(kind.features))
    bullets = [f"{_cap(attr)}: {features[i % len(features)]}" for i, attr in enumerate(attrs)]
    description = f"{title}. " + " ".join(f[:1].upper() + f[1:] + "." for f in features)
    pricing, price = _pricing(rng, kind)
    wanted = rng.sample(attrs, min(len(attrs), rng.choice((1, 2, 2))))
    product = Product(
        asin=_asin(rng, taken), title=title, description=description, bullets=tuple(bullets),
        attributes=tuple(attrs), options=_options(rng, kind), pricing=pricing, price=price,
        query=kind.query, category=department,
        product_category=CATEGORY_SEP.join((TOP[department], *kind.path)),
        title_nouns=_nouns(title, kind, brand),
    )  # fmt: skip
    return {
        "product": product,
        "instruction": _instruction(rng, kind, wanted),
        "wanted": tuple(wanted),
    }


def _price_clause(rng: random.Random, price: float) -> tuple[float, str]:
    """WebShop's price cap: two of the first four grid prices above the product's, the
    larger one; none when fewer than two exist."""
    above = [p for p in PRICE_GRID if p > price][:4]
    if len(above) < 2:
        return NO_CAP, ""
    upper = float(max(rng.sample(above, 2)))
    return upper, f", and price lower than {upper:.2f} dollars"


def _goals_of(rng: random.Random, built: dict[str, Any]) -> Iterator[dict[str, Any]]:
    product: Product = built["product"]
    names = sorted(product.options)
    for combination in itertools.product(*(product.options[name] for name in names)):
        options = dict(zip(names, combination, strict=True))
        text = built["instruction"]
        if options:
            text += " with " + ", and ".join(f"{k}: {v}" for k, v in options.items())
        upper, clause = _price_clause(rng, product.price)
        yield {
            "asin": product.asin, "instruction_text": text + clause,
            "attributes": list(built["wanted"]), "goal_options": options,
            "price_upper": upper, "price": product.price, "query": product.query,
            "category": product.category, "product_category": product.product_category,
            "name": product.title, "title_nouns": list(product.title_nouns),
        }  # fmt: skip


def build() -> tuple[list[Product], list[Goal]]:
    """The whole catalogue and the shuffled goal list, from the fixed seeds."""
    rng = random.Random(SEED)
    taken: set[str] = set()
    built = [
        _product(rng, department, kind, taken)
        for department in DEPARTMENTS
        for kind in KINDS[department]
        for _ in range(PRODUCTS_PER_KIND)
    ]
    raw_goals = [goal for item in built for goal in _goals_of(rng, item)]
    random.Random(SHUFFLE_SEED).shuffle(raw_goals)
    goals = [Goal.from_json({**raw, "id": index}) for index, raw in enumerate(raw_goals)]
    return [item["product"] for item in built], goals


def _jsonl_gz(records: list[dict[str, Any]]) -> bytes:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def encoded() -> dict[str, bytes]:
    """File name -> bytes of the committed shop files (byte-stable: gzip mtime 0)."""
    products, goals = build()
    return {
        PRODUCTS_FILE: _jsonl_gz([p.to_json() for p in products]),
        GOALS_FILE: _jsonl_gz([g.to_json() for g in goals]),
    }


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load(folder: Path = SHOP_DIR) -> tuple[list[Product], list[Goal]]:
    products = [Product.from_json(r) for r in read_jsonl_gz(folder / PRODUCTS_FILE)]
    goals = [Goal.from_json(r) for r in read_jsonl_gz(folder / GOALS_FILE)]
    return products, goals


def main() -> None:
    SHOP_DIR.mkdir(exist_ok=True)
    for name, blob in encoded().items():
        (SHOP_DIR / name).write_bytes(blob)
        print(f"wrote {SHOP_DIR / name} ({len(blob):,} bytes)")


if __name__ == "__main__":
    main()
