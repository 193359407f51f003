"""The seeded image catalogue of the simulated Cat API, built once at import.

About 600 images with short ids like the real service's (three-character ids from its early
days, nine-character ones from later uploads), a CDN url, a size, a mime type, at most one
breed and, for some images without a breed, one category. Catalogue order is upload order:
``order=ASC`` lists oldest first, ``DESC`` newest first. Every breed has images, every
category has images and every mime type occurs, so each search filter has something to find.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.the_cat_api.breeds import BREED_BY_ID, BREEDS, CATEGORIES, CATEGORY_IDS

CDN = "https://cdn2.thecatapi.com/images"
MIME_TYPES = ("jpg", "png", "gif")
# Path words that can never be image ids.
_RESERVED = {"search", "upload"}
_LOWER = string.ascii_lowercase + string.digits
_MIXED = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Image:
    id: str
    mime: str
    width: int
    height: int
    breed: str | None = None
    categories: tuple[int, ...] = field(default=())

    @property
    def url(self) -> str:
        return f"{CDN}/{self.id}.{self.mime}"

    def to_json(self, include_breeds: bool = True, include_categories: bool = True) -> dict:
        """The image as the API returns it; ``breeds``/``categories`` only when it has any."""
        data: dict[str, Any] = {
            "id": self.id,
            "url": self.url,
            "width": self.width,
            "height": self.height,
        }
        if self.breed and include_breeds:
            data["breeds"] = [breed_json(self.breed)]
        if self.categories and include_categories:
            names = {c["id"]: c["name"] for c in CATEGORIES}
            data["categories"] = [{"id": c, "name": names[c]} for c in self.categories]
        return data


def _new_id(rng: random.Random, style: str, taken: set[str]) -> str:
    while True:
        if style == "old":
            text = "".join(rng.choice(_LOWER) for _ in range(3))
        elif style == "mid":
            text = "".join(rng.choice(_MIXED) for _ in range(rng.randint(5, 8)))
        else:
            text = "".join(rng.choice(_MIXED) for _ in range(9))
        if text not in taken and text not in _RESERVED and not text.isdigit():
            taken.add(text)
            return text


def _size(rng: random.Random) -> tuple[int, int]:
    width = rng.randrange(240, 1601, 4)
    ratio = rng.choice((0.75, 0.75, 0.667, 1.0, 1.333, 0.5625, rng.uniform(0.55, 1.45)))
    return width, max(160, int(width * ratio))


def _build(seed: str = "the_cat_api-catalogue") -> tuple[Image, ...]:
    rng = random.Random(seed)
    taken: set[str] = set()
    images: list[Image] = []
    # Breed photos: newer uploads, almost all jpg.
    for breed in BREEDS:
        for _ in range(rng.randint(4, 7)):
            style = rng.choices(("new", "mid", "old"), weights=(8, 2, 1))[0]
            mime = rng.choices(MIME_TYPES, weights=(12, 2, 1))[0]
            images.append(Image(_new_id(rng, style, taken), mime, *_size(rng), breed=breed["id"]))
    # Category photos: older, more png and gif.
    for category in CATEGORY_IDS:
        for _ in range(rng.randint(12, 18)):
            style = rng.choices(("old", "mid", "new"), weights=(6, 2, 2))[0]
            mime = rng.choices(MIME_TYPES, weights=(6, 2, 3))[0]
            image = Image(_new_id(rng, style, taken), mime, *_size(rng), categories=(category,))
            images.append(image)
    # Plain photos until the catalogue holds 600.
    while len(images) < 600:
        style = rng.choices(("old", "mid", "new"), weights=(5, 2, 4))[0]
        mime = rng.choices(MIME_TYPES, weights=(7, 2, 2))[0]
        images.append(Image(_new_id(rng, style, taken), mime, *_size(rng)))
    rng.shuffle(images)
    return tuple(images)


IMAGES: tuple[Image, ...] = _build()
IMAGE_BY_ID: dict[str, Image] = {image.id: image for image in IMAGES}
# First (oldest) image of each breed: its reference image.
REFERENCE_IMAGE: dict[str, str] = {}
for _image in IMAGES:
    if _image.breed and _image.breed not in REFERENCE_IMAGE:
        REFERENCE_IMAGE[_image.breed] = _image.id


def breed_json(breed_id: str) -> dict[str, Any]:
    data = dict(BREED_BY_ID[breed_id])
    data["weight"] = dict(data["weight"])
    data["reference_image_id"] = REFERENCE_IMAGE[breed_id]
    return data


def overlay_image(image_id: str) -> Image:
    """A stand-in image for an id the catalogue lacks (original data references such ids)."""
    rng = random.Random(f"the_cat_api-overlay-{image_id}")
    return Image(image_id, rng.choices(MIME_TYPES, weights=(6, 2, 2))[0], *_size(rng))
