"""The mutable per-execution world of the simulated Cat API: the user's favourites and votes,
plus an overlay of extra images that the seeded catalogue lacks.

A data line carries the user's state as ``{"favourites": [...], "votes": [...], "images": [...]}``
(every key optional). Favourite and vote ids are usually integers, as on the real service, but
the original ToolBench labels use short strings such as ``tu``, so string ids are kept as
strings. New ids continue after the largest integer id in the state (never below a fixed base),
so the same state and the same requests always give the same ids.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.the_cat_api.catalogue import MIME_TYPES, Image, image_by_id, overlay_image

FAVOURITE_ID_BASE = 100_000
VOTE_ID_BASE = 900_000
USER_ID = "toolbench"
COUNTRY_CODE = "US"
_EPOCH = dt.datetime(2023, 6, 1, 9, 0, 0)

Id = int | str


def timestamp(minutes: int) -> str:
    moment = _EPOCH + dt.timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _id(value: Any) -> Id:
    if isinstance(value, bool):
        raise ValueError(f"bad id {value!r}")
    if isinstance(value, int):
        return value
    text = str(value)
    return int(text) if text.isdigit() and not text.startswith("0") else text


def id_key(value: Id) -> tuple[int, int, str]:
    """Sort key: integer ids numerically, then string ids alphabetically."""
    return (0, value, "") if isinstance(value, int) else (1, 0, value)


@dataclass
class CatWorld:
    seed: int = 0
    favourites: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    overlay: dict[str, Image] = field(default_factory=dict)
    writes: int = 0  # records created so far; spaces out created_at stamps

    def image(self, image_id: str) -> Image | None:
        return image_by_id(image_id) or self.overlay.get(image_id)

    def add_overlay(self, image_id: str) -> None:
        if self.image(image_id) is None:
            self.overlay[image_id] = overlay_image(image_id)

    def next_id(self, records: list[dict[str, Any]], base: int) -> int:
        ints = [r["id"] for r in records if isinstance(r["id"], int)]
        return max([base, *ints]) + 1

    def stamp(self) -> str:
        self.writes += 1
        return timestamp(60 * 24 * 400 + self.writes)


def _image_from(entry: Any) -> tuple[str, Image | None]:
    """An ``images`` entry: a bare id, or ``{"id", "url"?, "width"?, "height"?}``."""
    if isinstance(entry, str):
        return entry, None
    image_id = str(entry["id"])
    url = str(entry.get("url", ""))
    ext = url.rsplit(".", 1)[-1].lower() if "." in url.rsplit("/", 1)[-1] else ""
    base = overlay_image(image_id)
    mime = ext if ext in MIME_TYPES else base.mime
    width = int(entry.get("width", base.width))
    height = int(entry.get("height", base.height))
    return image_id, Image(image_id, mime, width, height)


def make_world(state: Mapping[str, Any] | None, seed: int = 0) -> CatWorld:
    """A fresh world holding a deep copy of ``state`` with defaults filled in."""
    state = state or {}
    world = CatWorld(seed=seed)
    for entry in state.get("images", ()):
        image_id, image = _image_from(entry)
        if image is not None and image_by_id(image_id) is None:
            world.overlay[image_id] = image
        else:
            world.add_overlay(image_id)
    for i, fav in enumerate(state.get("favourites", ())):
        world.add_overlay(str(fav["image_id"]))
        world.favourites.append(
            {
                "id": _id(fav["id"]),
                "user_id": USER_ID,
                "image_id": str(fav["image_id"]),
                "sub_id": fav.get("sub_id"),
                "created_at": fav.get("created_at") or timestamp(60 * 24 * i),
            }
        )
    for i, vote in enumerate(state.get("votes", ())):
        world.add_overlay(str(vote["image_id"]))
        world.votes.append(
            {
                "id": _id(vote["id"]),
                "image_id": str(vote["image_id"]),
                "sub_id": vote.get("sub_id"),
                "created_at": vote.get("created_at") or timestamp(60 * 24 * i + 30),
                "value": int(vote.get("value", 1)),
                "country_code": vote.get("country_code", COUNTRY_CODE),
            }
        )
    return world


def snapshot(world: CatWorld) -> dict[str, Any]:
    """Favourites and votes sorted by id, without timestamps: what a write request changed."""
    favourites = sorted(world.favourites, key=lambda r: id_key(r["id"]))
    votes = sorted(world.votes, key=lambda r: id_key(r["id"]))
    return {
        "favourites": [
            {"id": f["id"], "image_id": f["image_id"], "sub_id": f["sub_id"]} for f in favourites
        ],
        "votes": [
            {"id": v["id"], "image_id": v["image_id"], "sub_id": v["sub_id"], "value": v["value"]}
            for v in votes
        ],
    }
