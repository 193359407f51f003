"""Seeded template generator for home_search test and training data.

Each record is ``{"prompt", "completion": [gold program], "slots"}``; ``slots`` maps every
criterion the gold program sets to the exact query substring that supplies it, which makes
the data checkable (every gold value is recoverable from the query) and lets tests measure
slot-level recall. Output is a pure function of (split, n, seed): regenerating a data file
must give the same bytes, so the only randomness is a ``random.Random`` seeded from them.
"""

from __future__ import annotations

import random
import re
from typing import Any

from toolbench.kinds.pools import (
    US_CITIES,
    article,
    count,
    fill,
    generate_unique,
    join_or,
    money,
    number_word,
    ordinal,
    render,
)

TASK = "home_search"
DEFAULT_TEST_SIZE = 100
DEFAULT_SEED = 0

BUY_TYPES = ("House", "Townhouse", "Condo", "Land", "Multi-family", "Mobile", "Co-op")
RENT_TYPES = ("House", "Townhouse", "Condo", "Apartment")
# How people name each home type (first form most common), singular.
TYPE_WORDS = {
    "House": ("house", "single-family house", "detached house"),
    "Townhouse": ("townhouse", "townhome"),
    "Condo": ("condo", "condominium"),
    "Apartment": ("apartment", "apt"),
    "Land": ("land", "vacant land"),
    "Multi-family": ("multi-family home", "multifamily property"),
    "Mobile": ("mobile home",),
    "Co-op": ("co-op", "coop"),
}
VERB = {"buy": ("buy", "purchase", "buy"), "rent": ("rent", "lease", "rent")}
FOR = {"buy": ("for sale",), "rent": ("for rent", "to rent")}
GENERIC_NOUN = {"buy": ("home", "property", "place"), "rent": ("place", "unit", "home")}

OPEN_VERB = (
    "I want to {buy_or_rent} {np} in {location}",
    "Looking to {buy_or_rent} {np} in {location}",
    "I'd like to {buy_or_rent} {np} in {location}",
    "We're hoping to {buy_or_rent} {np} around {location}",
    "Help me {buy_or_rent} {np} in the {location} area",
    "I need to {buy_or_rent} {np} in {location}",
    "My partner and I want to {buy_or_rent} {np} in {location}",
    "Could you help me {buy_or_rent} {np} in {location}",
)
OPEN_FOR = (
    "Find me {np} {buy_or_rent} in {location}",
    "Show me {np} {buy_or_rent} in {location}",
    "Search for {np} {buy_or_rent} in {location}",
    "Are there any {np} {buy_or_rent} in {location}",
    "Please look up {np} {buy_or_rent} near {location}",
    "Can you find {np} {buy_or_rent} in {location}",
    "Any {np} {buy_or_rent} around {location}",
)
# Terse openers take the bare mode word ('buy'/'rent') or the 'for sale' form.
OPEN_TERSE = (
    ("{location}, {buy_or_rent}: {np}", "mode"),
    ("{np} {buy_or_rent}, {location}", "for"),
    ("{location} - {np} {buy_or_rent}", "for"),
    ("{buy_or_rent} in {location}: {np}", "ing"),
)
ING = {"buy": ("buying", "purchasing"), "rent": ("renting",)}

# Criterion phrasings by form: 'clause' follows the noun, 'with' goes in a "with A, B" list,
# 'sentence' stands alone. Keys in braces are slots.
PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "price_both": {
        "clause": (
            "between {min_price} and {max_price}{per}",
            "in the {min_price} to {max_price} range",
            "priced from {min_price} to {max_price}",
            "{min_price}-{max_price}{per}",
        ),
        "sentence": (
            "Budget is {min_price} to {max_price}{per}.",
            "We can spend between {min_price} and {max_price}{per}.",
            "Price range {min_price}-{max_price} please.",
        ),
    },
    "price_max": {
        "clause": (
            "under {max_price}{per}",
            "for no more than {max_price}{per}",
            "up to {max_price}{per}",
            "below {max_price}",
            "max {max_price}{per}",
            "{max_price}{per} or less",
        ),
        "sentence": (
            "My budget tops out at {max_price}{per}.",
            "Can't go above {max_price}{per}.",
            "Budget: {max_price}{per}.",
            "Maximum price {max_price}.",
        ),
    },
    "price_min": {
        "clause": ("over {min_price}{per}", "above {min_price}", "starting at {min_price}{per}"),
        "sentence": (
            "Nothing under {min_price}, please.",
            "Minimum price {min_price}{per}.",
            "Price should be at least {min_price}{per}.",
        ),
    },
    "sqft_both": {
        "clause": (
            "between {min_square_feet} and {max_square_feet} square feet",
            "{min_square_feet}-{max_square_feet} sq ft",
            "sized {min_square_feet} to {max_square_feet} sqft",
        ),
        "sentence": ("Size should be {min_square_feet} to {max_square_feet} sq ft.",),
    },
    "sqft_min": {
        "clause": (
            "at least {min_square_feet} sq ft",
            "{min_square_feet}+ square feet",
            "no smaller than {min_square_feet} square feet",
            "minimum {min_square_feet} sqft",
        ),
        "sentence": ("It has to be at least {min_square_feet} square feet.",),
    },
    "sqft_max": {
        "clause": (
            "under {max_square_feet} square feet",
            "no bigger than {max_square_feet} sq ft",
            "max {max_square_feet} sqft",
            "{max_square_feet} sq ft or smaller",
        ),
        "sentence": ("Nothing larger than {max_square_feet} square feet.",),
    },
    "beds": {
        "with": ("{num_beds}",),
        "sentence": ("It should have {num_beds}.", "We need {num_beds}.", "Needs {num_beds}."),
    },
    "baths": {
        "with": ("{num_baths}",),
        "sentence": ("It needs {num_baths}.", "Must have {num_baths}.", "{num_baths} minimum."),
    },
    "garages": {"with": ("{num_garages}",), "sentence": ("Has to have {num_garages}.",)},
    "pools": {"with": ("{num_swimming_pools}",), "sentence": ("I'd love {num_swimming_pools}.",)},
    "balconies": {
        "with": ("{num_balconies}",),
        "sentence": ("It should come with {num_balconies}.",),
    },
    "floor": {
        "clause": ("on {floor_number}", "located on {floor_number}"),
        "sentence": ("It should be on {floor_number}.", "Needs to be on {floor_number}."),
    },
    "commute": {
        "clause": (
            "with a commute under {max_commute_time}",
            "within {max_commute_time} of work",
            "with at most {max_commute_time} of commuting",
        ),
        "sentence": (
            "My commute can't be over {max_commute_time}.",
            "Max commute: {max_commute_time}.",
            "I don't want to commute more than {max_commute_time}.",
        ),
    },
}

GROUPS = ("home_type", "price", "beds", "baths", "sqft", "garages", "pools", "floor",
          "balconies", "commute")  # fmt: skip
GROUP_WEIGHTS = (9, 9, 8, 6, 5, 3, 3, 3, 3, 3)
INDOOR_ONLY = ("beds", "baths", "garages", "pools", "floor", "balconies")


def _plural(word: str) -> str:
    if word.endswith("land"):
        return word
    return word[:-1] + "ies" if word.endswith("ty") else word + "s"


def _price(rng: random.Random, mode: str) -> int:
    if mode == "rent":
        return rng.randrange(700, 6501, rng.choice((50, 50, 100, 25)))
    value = int(120_000 * (2_500_000 / 120_000) ** rng.random())
    step = rng.choice((1_000, 5_000)) if value < 500_000 else rng.choice((10_000, 25_000, 50_000))
    return max(120_000, value // step * step)


def _price_range(rng: random.Random, mode: str) -> tuple[int, int]:
    low = _price(rng, mode)
    while (high := _price(rng, mode)) < low * 1.15:
        low = min(low, _price(rng, mode))
    return low, high


def _sqft_text(rng: random.Random, value: int) -> str:
    if value % 100 == 0 and value >= 1000 and rng.random() < 0.1:
        return f"{value / 1000:g}k"
    return f"{value:,}" if rng.random() < 0.6 else str(value)


def _choose_groups(rng: random.Random, types: list[str]) -> list[str]:
    k = rng.choices(range(1, 8), weights=(10, 20, 24, 20, 14, 8, 4))[0]
    pool = list(GROUPS)
    weights = list(GROUP_WEIGHTS)
    # Keep requests plausible: no bedrooms on bare land, no floor number for a house.
    banned = set(INDOOR_ONLY) if types == ["Land"] else set()
    if types and not set(types) <= {"Condo", "Apartment", "Co-op"}:
        banned.add("floor")
    keep = [i for i, g in enumerate(pool) if g not in banned]
    pool, weights = [pool[i] for i in keep], [weights[i] for i in keep]
    chosen: list[str] = []
    while pool and len(chosen) < k:
        i = rng.choices(range(len(pool)), weights=weights)[0]
        chosen.append(pool.pop(i))
        weights.pop(i)
    return chosen


def _values(
    rng: random.Random, group: str, mode: str
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """Pick a value for a criterion group: (phrase group, program values, slot texts)."""
    per = ""
    if mode == "rent":
        per = rng.choice(("", "", " a month", "/month", "/mo", " per month"))
    if group == "price":
        which = rng.choices(("both", "max", "min"), weights=(4, 5, 1))[0]
        low, high = _price_range(rng, mode)
        prog: dict[str, Any] = {}
        texts = {"per": per}
        if which in ("both", "min"):
            prog["min_price"] = low
            texts["min_price"] = money(rng, low, small=mode == "rent")
        if which in ("both", "max"):
            prog["max_price"] = high
            texts["max_price"] = money(rng, high, small=mode == "rent")
        return f"price_{which}", prog, texts
    if group == "sqft":
        which = rng.choices(("both", "max", "min"), weights=(3, 2, 5))[0]
        low = rng.randrange(400, 3001, rng.choice((50, 100)))
        high = rng.randrange(low + 300, 5001, 100) if low + 300 <= 5000 else 5000
        prog, texts = {}, {}
        if which in ("both", "min"):
            prog["min_square_feet"], texts["min_square_feet"] = low, _sqft_text(rng, low)
        if which in ("both", "max"):
            prog["max_square_feet"], texts["max_square_feet"] = high, _sqft_text(rng, high)
        return f"sqft_{which}", prog, texts
    if group == "beds":
        n = rng.choices(range(7), weights=(1, 10, 14, 14, 8, 4, 2))[0]
        word = rng.choice(("bedroom", "bedroom", "bed", "BR"))
        text = count(rng, n, word) if word != "BR" else f"{n} BR"
        return "beds", {"num_beds": n}, {"num_beds": text}
    if group == "baths":
        x = rng.choice((1, 1, 1.5, 2, 2, 2.5, 3, 3.5, 4, 4.5))
        word = rng.choice(("bathroom", "bath", "bath"))
        text = count(rng, int(x), word) if x == int(x) else f"{x:g} {word}s"
        return "baths", {"num_baths": x}, {"num_baths": text}
    if group in ("garages", "pools", "balconies"):
        key, word, plural, top = {
            "garages": ("num_garages", "garage", "garages", 3),
            "pools": ("num_swimming_pools", rng.choice(("pool", "swimming pool")), None, 2),
            "balconies": ("num_balconies", "balcony", "balconies", 3),
        }[group]
        n = rng.choices(range(top + 1), weights=(1, 5, 3, 1)[: top + 1])[0]
        if n == 0:
            text = rng.choice((f"no {word}", f"zero {plural or word + 's'}"))
        elif n == 1 and rng.random() < 0.3:
            text = f"{article(word)} {word}"
        else:
            text = count(rng, n, word, plural)
        return group, {key: n}, {key: text}
    if group == "floor":
        n = rng.choices((rng.randint(1, 5), rng.randint(6, 20), rng.randint(21, 40)), (5, 3, 1))[0]
        text = f"the {ordinal(n, rng.random() < 0.3)} floor" if rng.random() < 0.7 else f"floor {n}"
        return "floor", {"floor_number": n}, {"floor_number": text}
    n = rng.choice((10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 75, 90, rng.randint(10, 90)))
    unit = rng.choice(("minutes", "min", "mins", "minutes"))
    return "commute", {"max_commute_time": n}, {"max_commute_time": f"{n} {unit}"}


def _home_types(rng: random.Random, mode: str) -> list[str]:
    allowed = BUY_TYPES if mode == "buy" else RENT_TYPES
    k = rng.choices((1, 2, 3), weights=(5, 4, 2))[0]
    return rng.sample(allowed, k)


def _noun_phrase(
    rng: random.Random,
    mode: str,
    types: list[str],
    premods: list[str],
    values: dict[str, str],
    plural: bool,
    bare: bool,
) -> str:
    """Article + pre-modifiers + noun; home type words go into ``values['home_type']``."""
    if types:
        forms = [TYPE_WORDS[t] for t in types]
        words = [rng.choices(f, weights=(6, 2, 1)[: len(f)])[0] for f in forms]
        values["home_type"] = join_or(rng, [_plural(w) if plural else w for w in words])
        noun = "{home_type}"
    else:
        noun = rng.choice(GENERIC_NOUN[mode])
        noun = _plural(noun) if plural else noun
    head = " ".join([*premods, noun])
    spoken = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], head)
    if plural or bare or spoken.startswith(("land", "vacant")):
        return head
    return f"{article(spoken)} {head}"


def _record(rng: random.Random) -> dict[str, Any]:
    mode = "buy" if rng.random() < 0.55 else "rent"
    city = rng.choice(US_CITIES)
    types = _home_types(rng, mode) if rng.random() < 0.75 else []
    groups = [g for g in _choose_groups(rng, types) if g != "home_type"]
    style = rng.choices(("verb", "for", "terse"), weights=(5, 4, 1))[0]
    values: dict[str, str] = {"location": city, "buy_or_rent": rng.choice(VERB[mode])}
    if style == "verb":
        opener = rng.choice(OPEN_VERB)
    elif style == "for":
        opener, values["buy_or_rent"] = rng.choice(OPEN_FOR), rng.choice(FOR[mode])
    else:
        opener, kind = rng.choice(OPEN_TERSE)
        words = {"mode": (mode,), "for": FOR[mode], "ing": ING[mode]}[kind]
        values["buy_or_rent"] = rng.choice(words)
    prog: dict[str, Any] = {}
    premods: list[str] = []
    parts: dict[str, list[str]] = {"clause": [], "with": [], "sentence": []}
    for group in groups:
        phrase_group, group_prog, texts = _values(rng, group, mode)
        prog.update(group_prog)
        values.update(texts)
        key = next(iter(group_prog))
        if group in ("beds", "baths") and rng.random() < 0.45:
            premods.append("{" + key + "}")
            n = group_prog[key]
            short = rng.choice(
                {"beds": ("bedroom", "bed", "br"), "baths": ("bath", "bathroom")}[group]
            )
            spelled = n == int(n) and n <= 6 and rng.random() < 0.3
            num = number_word(int(n)) if spelled else f"{n:g}"
            values[key] = f"{num}-{short}" if short != "br" else f"{n:g}br"
            continue
        forms = PHRASES[phrase_group]
        allowed = [f for f in ("clause", "with", "sentence") if f in forms]
        if style == "terse" or texts[key].startswith(("no ", "zero ")) or rng.random() < 0.4:
            allowed = [f for f in allowed if f != "sentence"]
        form = rng.choice(allowed)
        parts[form].append(rng.choice(forms[form]))
    plural = "any" in opener.lower() or rng.random() < 0.25
    np_text = _noun_phrase(rng, mode, types, premods, values, plural, bare=style == "terse")
    template = opener.replace("{np}", np_text)
    tail = parts["clause"]
    rng.shuffle(tail)
    if parts["with"]:
        items = join_or(rng, parts["with"], "and")
        tail.insert(rng.randint(0, len(tail)), items if style == "terse" else "with " + items)
    if style == "terse":
        template += "".join(", " + t for t in tail)
    else:
        template += "".join((", " if i else " ") + t for i, t in enumerate(tail))
        question = opener.startswith(("Are", "Any", "Can", "Could"))
        template += (
            "?" if question else rng.choice((".", ".", "!", "" if not parts["sentence"] else "."))
        )
        template += "".join(" " + s for s in parts["sentence"])
        if rng.random() < 0.15:
            template += rng.choice((" Thanks!", " Thank you.", " Thanks in advance."))
    pieces = fill(template, values)
    query, slots = render(rng, pieces)
    mentioned = [key for _, key in pieces if key is not None]
    order = sorted(prog, key=mentioned.index)
    lines = [f'API.set_location("{city}")', f'API.set_buy_or_rent("{mode}")']
    if types:
        lines.append("API.select_home_type([" + ", ".join(f'"{t}"' for t in types) + "])")
    lines += [f"API.set_{key}({_literal(prog[key])})" for key in order]
    lines.append("API.search()")
    gold_slots = {"location": slots["location"], "buy_or_rent": slots["buy_or_rent"]}
    if types:
        gold_slots["home_type"] = slots["home_type"]
    gold_slots.update({key: slots[key] for key in order})
    return {"prompt": query, "completion": ["\n".join(lines)], "slots": gold_slots}


def _literal(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records for ``split`` ('test' or 'train'); the same arguments give the same list,
    and train never repeats a query of the default test set (see ``generate_unique``)."""
    return generate_unique(TASK, split, n, seed, _record, DEFAULT_TEST_SIZE)
