"""Seeded template generator for the_cat_api test and training data.

Each record is ``{"prompt", "completion": [gold curl line], "compare_string_only", "state",
"slots"}``. ``state`` is the user's favourites and votes in which the gold request succeeds
(a favourite or vote it reads or deletes exists; an image it favourites is not yet a favourite);
``slots`` maps each value the gold line sets to the exact query substring that supplies it.
``compare_string_only`` is true for a minority of write requests, as in the original data.
Output is a pure function of (split, n, seed).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import QueryParams

from toolbench.kinds.pools import fill, generate_unique, join_or, number_word, ordinal, render
from toolbench.tasks.the_cat_api import phrases as P
from toolbench.tasks.the_cat_api.breeds import BREEDS
from toolbench.tasks.the_cat_api.catalogue import SIZE, id_at
from toolbench.tasks.the_cat_api.service import search_images
from toolbench.tasks.the_cat_api.world import make_world

TASK = "the_cat_api"
DEFAULT_TEST_SIZE = 100
DEFAULT_SEED = 0
BASE = "https://api.thecatapi.com/v1"
STRING_ONLY_RATE = 0.35  # share of write requests judged by string equality
_EMPTY_WORLD = make_world(None)

KINDS = (
    "images_search", "image_by_id", "breeds_list", "breed_by_id", "breeds_search",
    "categories_list", "favourites_list", "favourite_get", "favourite_add", "favourite_delete",
    "votes_list", "vote_get", "vote_add", "vote_delete",
)  # fmt: skip
WEIGHTS = (34, 5, 4, 6, 4, 3, 5, 4, 10, 8, 4, 3, 10, 5)
WRITES = {"favourite_add", "favourite_delete", "vote_add", "vote_delete"}
# Slots whose text is case-sensitive: a query holding one is never lower-cased.
CASED = {"image_id", "sub_id", "image"}

# (query template, slot texts, gold curl line, user state)
Record = tuple[str, dict[str, str], str, dict[str, Any]]


def _get(path: str, params: list[tuple[str, Any]] | None = None) -> str:
    query = "&".join(f"{k}={v}" for k, v in params or [])
    return f"curl -X GET '{BASE}/{path}{'?' + query if query else ''}'"


def _body(fields: list[tuple[str, Any]]) -> str:
    return "{" + ", ".join(f'"{k}":{json.dumps(v)}' for k, v in fields) + "}"


def _count_text(rng: random.Random, n: int, loose: bool = False) -> str:
    special = {12: "a dozen", 6: "half a dozen", 2: "a couple of"}
    if loose and n in special and rng.random() < 0.3:
        return special[n]
    return number_word(n) if n <= 10 and rng.random() < 0.3 else str(n)


def _page_text(rng: random.Random, page: int) -> str:
    return f"{ordinal(page + 1, words=rng.random() < 0.6)}"


def _with_tail(template: str, tail: str) -> str:
    """Insert ``tail`` before the template's closing punctuation."""
    match = re.search(r"[.?!]$", template)
    end = match.group(0) if match else ""
    return f"{template[: len(template) - len(end)]}, {tail}{end}"


def _breed_text(rng: random.Random, breeds: list[dict[str, Any]], by_id: bool) -> str:
    if by_id:
        return join_or(rng, [b["id"] for b in breeds])
    names = [b["name"].lower() if rng.random() < 0.25 else b["name"] for b in breeds]
    return join_or(rng, names)


def _images_search(rng: random.Random) -> Record:
    """A search whose gold finds at least one image (an empty answer would also match many
    wrong requests)."""
    while True:
        record = _search_attempt(rng)
        query = urlsplit(record[2].split("'")[1]).query
        if search_images(_EMPTY_WORLD, QueryParams(query)):
            return record


def _search_attempt(rng: random.Random) -> Record:
    values: dict[str, str] = {}
    params: dict[str, Any] = {}
    limit = rng.choices((None, rng.randint(2, 10), rng.randint(11, 30)), weights=(4, 5, 2))[0]
    if limit:
        params["limit"], values["limit"] = limit, _count_text(rng, limit, loose=True)
    topic = rng.choices(("breed", "category", "none"), weights=(9, 4, 5))[0]
    noun = rng.choice(P.SEARCH_NOUNS[topic, bool(limit)])
    parts = [rng.choice(P.SEARCH_OPEN), "{limit} " + noun if limit else noun]
    if topic == "breed":
        breeds = rng.sample(BREEDS, rng.choices((1, 2, 3, 4), weights=(6, 4, 2, 1))[0])
        by_id = rng.random() < 0.15
        clauses: tuple[str, ...] = P.BREED_CLAUSE_IDS if by_id else P.BREED_CLAUSE_NAMES
        if any(b["name"].endswith("Cat") for b in breeds):
            clauses = tuple(c for c in clauses if "cats" not in c and "kitties" not in c)
        parts.append(rng.choice(clauses))
        params["breed_ids"] = ",".join(b["id"] for b in breeds)
        values["breed_ids"] = _breed_text(rng, breeds, by_id)
    elif topic == "category":
        category = rng.choice(sorted(P.CATEGORY_WORDS))
        params["category_ids"] = category
        values["category_ids"] = rng.choice(P.CATEGORY_WORDS[category])
        parts.append("{category_ids}")
    extras: list[str] = []
    if rng.random() < 0.25:
        mimes = rng.sample(sorted(P.MIME_WORDS), rng.choices((1, 2), weights=(4, 1))[0])
        params["mime_types"] = ",".join(mimes)
        values["mime_types"] = join_or(rng, [rng.choice(P.MIME_WORDS[m]) for m in mimes])
        extras.append(rng.choice(P.MIME_CLAUSE))
    if topic == "none" and rng.random() < 0.3:
        params["has_breeds"], values["has_breeds"] = 1, rng.choice(P.HAS_BREEDS)
        extras.append("{has_breeds}")
    order = rng.choices((None, "DESC", "ASC", "RANDOM"), weights=(12, 3, 3, 1))[0]
    if limit and order in ("ASC", "DESC") and rng.random() < 0.3:
        page = rng.randint(1, 4)
        params["page"], values["page"] = page, _page_text(rng, page)
        extras.append(rng.choice(("from the {page} page", "on the {page} page of results")))
    if order:
        params["order"], values["order"] = order, rng.choice(P.ORDER_WORDS[order])
        extras.append("{order}")
    if rng.random() < 0.1:
        size = rng.choice(sorted(P.SIZE_WORDS))
        params["size"], values["size"] = size, rng.choice(P.SIZE_WORDS[size])
        extras.append("{size}")
    if rng.random() < 0.04:
        params["include_breeds"], values["include_breeds"] = 0, rng.choice(P.NO_BREED_DETAILS)
        extras.append("{include_breeds}")
    rng.shuffle(extras)
    template = " ".join(parts) + "".join(", " + e for e in extras)
    template += rng.choice((".", "", "?" if parts[0].startswith(("Can", "Could")) else "."))
    keys = ("limit", "page", "breed_ids", "category_ids", "mime_types", "has_breeds", "order",
            "size", "include_breeds")  # fmt: skip
    line = _get("images/search", [(k, params[k]) for k in keys if k in params])
    return template, values, line, {}


def _image(rng: random.Random, exclude: Collection[str] = ()) -> str:
    while (image_id := id_at(rng.randrange(SIZE))) in exclude:
        pass
    return image_id


def _state(rng: random.Random) -> dict[str, Any]:
    """Some favourites and votes; ids rising from a random base, a few under a sub_id."""
    favourites: list[dict[str, Any]] = []
    fav_id = rng.randrange(1000, 60000)
    used: set[str] = set()
    for _ in range(rng.randint(1, 6)):
        image_id = _image(rng, used)
        used.add(image_id)
        sub_id = rng.choice(P.SUB_IDS) if rng.random() < 0.3 else None
        favourites.append({"id": fav_id, "image_id": image_id, "sub_id": sub_id})
        fav_id += rng.randint(1, 400)
    votes: list[dict[str, Any]] = []
    vote_id = rng.randrange(100000, 600000)
    for _ in range(rng.randint(1, 6)):
        sub_id = rng.choice(P.SUB_IDS) if rng.random() < 0.3 else None
        value = rng.choice((1, 1, -1))
        votes.append({"id": vote_id, "image_id": _image(rng), "sub_id": sub_id, "value": value})
        vote_id += rng.randint(1, 900)
    return {"favourites": favourites, "votes": votes}


def _more_records(rng: random.Random, records: list[dict[str, Any]], total: int) -> None:
    """Extend a favourites or votes list to ``total`` records (ids keep rising), so that a
    listing's ``limit`` is visible in its answer (an off-by-one limit must not match)."""
    used = {r["image_id"] for r in records}
    while len(records) < total:
        record = dict(records[-1], id=records[-1]["id"] + rng.randint(1, 400), sub_id=None)
        record["image_id"] = _image(rng, used)
        used.add(record["image_id"])
        records.append(record)


def _listing(rng: random.Random, what: str, state: dict[str, Any]) -> Record:
    """A listing whose answer tells its parameters apart: lists hold several records (a
    limit or order must be visible), a listed sub_id owns two of them (an empty answer would
    match any other sub_id), a limited list is longer than its limit."""
    fav = rng.choice(P.FAV_WORD)
    pools = (P.FAVS_ALL, P.FAVS_SUB, P.FAVS_RECENT) if what == "favourites" else (
        P.VOTES_ALL, P.VOTES_SUB, P.VOTES_RECENT)  # fmt: skip
    style = rng.choices(("all", "sub", "recent"), weights=(5, 3, 2))[0]
    values = {"fav": fav}
    params: list[tuple[str, Any]] = []
    if style == "all":
        _more_records(rng, state[what], rng.randint(5, 8))
        template = rng.choice(pools[0])
    elif style == "sub":
        _more_records(rng, state[what], 4)
        subs = [r["sub_id"] for r in state[what] if r["sub_id"]] or [rng.choice(P.SUB_IDS)]
        values["sub_id"] = rng.choice(subs)
        for record in state[what][:2]:  # two records under it, so its order is visible
            record["sub_id"] = values["sub_id"]
        template, params = rng.choice(pools[1]), [("sub_id", values["sub_id"])]
    else:
        limit = rng.randint(2, 5)
        _more_records(rng, state[what], limit + rng.randint(2, 4))
        values["limit"], values["order"] = _count_text(rng, limit), rng.choice(P.RECENT_WORDS)
        template, params = rng.choice(pools[2]), [("limit", limit), ("order", "DESC")]
    return template, values, _get(what, params), state


def _record_parts(rng: random.Random, kind: str) -> Record:  # noqa: C901 -- one branch per kind
    if kind == "images_search":
        return _images_search(rng)
    if kind == "image_by_id":
        image_id = _image(rng)
        return rng.choice(P.IMAGE_BY_ID), {"image_id": image_id}, _get(f"images/{image_id}"), {}
    if kind == "breeds_list":
        style = rng.choices(("all", "limit", "page"), weights=(4, 3, 3))[0]
        if style == "all":
            return rng.choice(P.BREEDS_ALL), {}, _get("breeds"), {}
        limit = rng.choice((3, 5, 5, 8, 10, 10, 12, 15, 20))
        values = {"limit": _count_text(rng, limit)}
        if style == "limit":
            return rng.choice(P.BREEDS_LIMIT), values, _get("breeds", [("limit", limit)]), {}
        page = rng.randint(1, max(1, len(BREEDS) // limit - 1))
        values["page"] = _page_text(rng, page)
        line = _get("breeds", [("limit", limit), ("page", page)])
        return rng.choice(P.BREEDS_PAGE), values, line, {}
    if kind == "breed_by_id":
        breed = rng.choice(BREEDS)
        name = breed["name"].lower() if rng.random() < 0.2 else breed["name"]
        templates = P.BREED_INFO + P.BREED_INFO_PLURAL
        values = {"breed_id": name, "s": "s" if not name.endswith(("s", "x", "ese")) else " cats"}
        return rng.choice(templates), values, _get(f"breeds/{breed['id']}"), {}
    if kind == "breeds_search":
        word = rng.choice(P.BREED_SEARCH_WORDS)
        return rng.choice(P.BREED_SEARCH), {"q": word}, _get("breeds/search", [("q", word)]), {}
    if kind == "categories_list":
        return rng.choice(P.CATEGORIES), {}, _get("categories"), {}
    state = _state(rng)
    if kind in ("favourites_list", "votes_list"):
        return _listing(rng, kind.split("_")[0], state)
    fav = rng.choice(P.FAV_WORD)
    if kind in ("favourite_get", "favourite_delete"):
        target = rng.choice(state["favourites"])
        values = {"favourite_id": str(target["id"]), "fav": fav, "image": target["image_id"]}
        if kind == "favourite_get":
            return rng.choice(P.FAV_GET), values, _get(f"favourites/{target['id']}"), state
        pool = P.FAV_DELETE_IMAGE if rng.random() < 0.15 else P.FAV_DELETE
        line = f"curl -X DELETE '{BASE}/favourites/{target['id']}'"
        return rng.choice(pool), values, line, state
    if kind in ("vote_get", "vote_delete"):
        target = rng.choice(state["votes"])
        values = {"vote_id": str(target["id"])}
        if kind == "vote_get":
            return rng.choice(P.VOTE_GET), values, _get(f"votes/{target['id']}"), state
        line = f"curl -X DELETE '{BASE}/votes/{target['id']}'"
        return rng.choice(P.VOTE_DELETE), values, line, state
    sub_id = rng.choice(P.SUB_IDS) if rng.random() < 0.25 else None
    if kind == "favourite_add":
        taken = {f["image_id"] for f in state["favourites"] if f["sub_id"] == sub_id}
        image_id = _image(rng, taken)
        template = rng.choice(P.FAV_ADD)
        fields: list[tuple[str, Any]] = [("image_id", image_id)]
        values = {"image_id": image_id, "fav": fav}
        if sub_id:
            template = _with_tail(template, rng.choice(P.FAV_ADD_SUB))
            fields.append(("sub_id", sub_id))
            values["sub_id"] = sub_id
        line = f"curl -X POST '{BASE}/favourites' --data '{_body(fields)}'"
        return template, values, line, state
    value = rng.choice((1, 1, -1))
    image_id = _image(rng)
    verb = rng.random() < 0.6
    template = rng.choice(P.VOTE_ADD_VERB if verb else P.VOTE_ADD_NOUN)
    values = {
        "image_id": image_id,
        "value": rng.choice((P.VOTE_VERB if verb else P.VOTE_NOUN)[value]),
    }
    fields = [("image_id", image_id), ("value", value)]
    if sub_id:
        template = _with_tail(template, rng.choice(P.VOTE_ADD_SUB))
        fields.append(("sub_id", sub_id))
        values["sub_id"] = sub_id
    line = f"curl -X POST '{BASE}/votes' --data '{_body(fields)}'"
    return template, values, line, state


# Keys that help phrase a query but are not values of the gold line.
_NOT_SLOTS = {"fav", "s", "image"}


def _record(rng: random.Random) -> dict[str, Any]:
    kind = rng.choices(KINDS, weights=WEIGHTS)[0]
    template, values, line, state = _record_parts(rng, kind)
    pieces = fill(template, values)
    cased = any(key in CASED for _, key in pieces)
    query, slots = render(rng, pieces, typo_rate=0.06, lower_rate=0.0 if cased else 0.08)
    gold_slots = {k: v for k, v in slots.items() if k not in _NOT_SLOTS}
    return {
        "prompt": query,
        "completion": [line],
        "compare_string_only": kind in WRITES and rng.random() < STRING_ONLY_RATE,
        "state": state or {"favourites": [], "votes": []},
        "slots": gold_slots,
    }


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records for ``split`` ('test' or 'train'); the same arguments give the same list,
    and train never repeats a query of the default test set (see ``generate_unique``)."""
    return generate_unique(TASK, split, n, seed, _record, DEFAULT_TEST_SIZE)
