"""A user state for original data lines, which carry none: ``derive_state(labels)``.

The original ToolBench Cat API labels reference ids that no seeded world holds (image ``b93``,
favourite ``tu``). From the gold curl lines we collect what they reference and build a state
in which every label succeeds: referenced images are added to the world's image overlay,
referenced favourite and vote ids exist. In the original docs the favourite path segment is the
image's id, so a derived favourite ``tu`` points at image ``tu``. A favourite that some label
also POSTs is not pre-created, so that the POST is not a duplicate.

Every derived world also holds ``FILLER_RECORDS`` favourites and votes on catalogue images
(some under each sub_id a label lists): with empty lists, ``GET /v1/votes`` would answer
exactly like ``GET /v1/favourites`` and a wrong listing would score as right.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolbench.tasks.the_cat_api.catalogue import SIZE, id_at, image_by_id

_DATA_FLAGS = ("-d", "--data", "--data-raw", "--data-binary", "--data-ascii")
_RESOURCE = re.compile(r"^/v1/(images|favourites|votes)/([^/?#]+)/?$")
_LISTING = re.compile(r"^/v1/(favourites|votes)/?$")
# Records every derived world holds besides the referenced ones, so that favourites, votes
# and their pages are never empty (an empty list would match every other empty list).
FILLER_RECORDS = 12
FILLER_FAVOURITE_ID = 7001
FILLER_VOTE_ID = 8001


def split_curl(line: str) -> tuple[str, str, str | None]:
    """(method, url, body) of a curl command line; a lenient reader for gold lines."""
    try:
        words = shlex.split(line.strip())
    except ValueError:
        words = line.strip().split()
    method, url, body = "", "", None
    i = 1 if words and words[0] == "curl" else 0
    while i < len(words):
        word = words[i]
        if word in ("-X", "--request") and i + 1 < len(words):
            method, i = words[i + 1].upper(), i + 2
            continue
        if word in _DATA_FLAGS and i + 1 < len(words):
            body, i = words[i + 1], i + 2
            continue
        if word in ("-H", "--header", "-u", "--user", "-o", "--output") and i + 1 < len(words):
            i += 2
            continue
        if not word.startswith("-") and not url:
            url = word
        i += 1
    return method or ("POST" if body is not None else "GET"), url, body


def _json_body(body: str | None) -> dict[str, Any]:
    if not body:
        return {}
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        match = re.search(r'"image_id"\s*:\s*"([^"]+)"', body)
        return {"image_id": match.group(1)} if match else {}
    return data if isinstance(data, dict) else {}


def derive_state(labels: Sequence[str]) -> dict[str, Any]:  # noqa: C901 -- one pass per curl line
    """A state ``{"favourites", "votes", "images"}`` in which every label line succeeds."""
    images: list[str] = []
    favourite_ids: list[str] = []
    vote_ids: list[str] = []
    posted_favourites: set[str] = set()
    listed_subs: dict[str, list[str]] = {"favourites": [], "votes": []}

    def need(image_id: str) -> None:
        if image_id not in images:
            images.append(image_id)

    for label in labels:
        for line in label.splitlines():
            if "curl" not in line:
                continue
            method, url, body = split_curl(line[line.index("curl") :])
            path = urlsplit(url).path
            data = _json_body(body)
            image_id = data.get("image_id")
            if isinstance(image_id, str) and image_id:
                need(image_id)
                if method == "POST" and path.rstrip("/").endswith("/favourites"):
                    posted_favourites.add(image_id)
            listing = _LISTING.match(path)
            if listing is not None and method == "GET":
                sub_id = dict(parse_qsl(urlsplit(url).query)).get("sub_id")
                if sub_id and sub_id not in listed_subs[listing.group(1)]:
                    listed_subs[listing.group(1)].append(sub_id)
            match = _RESOURCE.match(path)
            if match is None:
                continue
            kind, ident = match.groups()
            if kind == "images" and ident != "search":
                need(ident)
            elif kind == "favourites" and ident not in favourite_ids:
                favourite_ids.append(ident)
            elif kind == "votes" and ident not in vote_ids:
                vote_ids.append(ident)

    taken = set(images) | posted_favourites
    spare = (image for i in range(1, SIZE) if (image := id_at(i * 7919 % SIZE)) not in taken)
    favourites = []
    for ident in favourite_ids:
        # The original docs name the favourite by its image's id; reuse it unless that image
        # is also favourited by a POST in some label (then the POST would be a duplicate).
        target = ident if ident not in posted_favourites else next(spare)
        need(target)
        favourites.append({"id": _typed(ident), "image_id": target, "sub_id": None})
    votes = []
    for ident in vote_ids:
        need(ident)
        votes.append({"id": _typed(ident), "image_id": ident, "sub_id": None, "value": 1})
    _add_fillers(favourites, FILLER_FAVOURITE_ID, listed_subs["favourites"], spare, vote=False)
    _add_fillers(votes, FILLER_VOTE_ID, listed_subs["votes"], spare, vote=True)
    overlay = [i for i in images if image_by_id(i) is None]
    return {"favourites": favourites, "votes": votes, "images": overlay}


def _add_fillers(
    records: list[dict[str, Any]],
    first_id: int,
    sub_ids: list[str],
    spare: Iterator[str],
    vote: bool,
) -> None:
    """``FILLER_RECORDS`` more records on catalogue images, with integer ids no label uses;
    every sub_id a label lists gets some of them (else its listing would be empty, like
    every other sub_id's)."""
    used = {str(r["id"]) for r in records}
    next_id = first_id
    subs: list[str | None] = [None, None, *sub_ids, *sub_ids]
    for n in range(max(FILLER_RECORDS, len(subs))):
        while str(next_id) in used:
            next_id += 1
        record: dict[str, Any] = {"id": next_id, "image_id": next(spare)}
        record["sub_id"] = subs[n % len(subs)]
        if vote:
            record["value"] = 1 if n % 3 else -1
        records.append(record)
        next_id += 1


def _typed(ident: str) -> int | str:
    return int(ident) if ident.isdigit() and not ident.startswith("0") else ident
