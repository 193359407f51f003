"""The image catalogue of the simulated Cat API: procedural, deterministic, generated lazily.

The real service holds tens of thousands of images, so a search's ``limit`` is always visible
in its answer. A small stored catalogue cannot do that (5 and 6 Bombay gifs are the same answer
when only 5 exist), so this one is a function of a seed rather than a table. Images fall into
buckets, one per (breed or none, category or none, mime type); every bucket holds more than
``MAX_LIMIT`` images, so every satisfiable filter combination finds more images than any page.
About 220,000 images in all, none stored: only the bucket sizes are computed at import.

An image's global index (bucket offset + position in the bucket) maps to a 9-character id
through a keyed bijection, so ``image_by_id`` decodes an id without any table. Upload times
rise within a bucket (``upload_key``), which gives ``order=ASC``/``DESC`` a total order across
buckets; ``search.py`` merges buckets lazily to serve a page.
"""

from __future__ import annotations

import bisect
import random
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, overload

from toolbench.tasks.the_cat_api.breeds import BREED_BY_ID, BREEDS, CATEGORIES, CATEGORY_IDS

CDN = "https://cdn2.thecatapi.com/images"
MIME_TYPES = ("jpg", "png", "gif")
MAX_LIMIT = 100  # the largest page the service returns
SIZES = {"full": 1.0, "med": 0.5, "small": 0.25, "thumb": 0.125}  # scale of width/height
_SEED = "the_cat_api-catalogue-v2"
_ALPHABET = string.digits + string.ascii_letters
_ID_BITS = 52  # 62**9 > 2**52, so every id is exactly 9 base-62 characters
_MASK = (1 << _ID_BITS) - 1
_MUL_A, _MUL_B, _ADD = 0x9E3779B97F4B, 0xC2B2AE3D27D5, 0x165667B19E37
_INV_A, _INV_B = pow(_MUL_A, -1, 1 << _ID_BITS), pow(_MUL_B, -1, 1 << _ID_BITS)
_CATEGORY_NAME = {c["id"]: c["name"] for c in CATEGORIES}

Bucket = tuple[str | None, int | None, str]  # (breed id, category id, mime type)


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

    def to_json(
        self, include_breeds: bool = True, include_categories: bool = True, size: str = "full"
    ) -> dict[str, Any]:
        """The image as the API returns it; ``breeds``/``categories`` only when it has any,
        width and height scaled to the requested ``size`` (so the size is observable)."""
        scale = SIZES[size]
        data: dict[str, Any] = {
            "id": self.id,
            "url": self.url,
            "width": max(1, round(self.width * scale)),
            "height": max(1, round(self.height * scale)),
        }
        if self.breed and include_breeds:
            data["breeds"] = [breed_json(self.breed)]
        if self.categories and include_categories:
            data["categories"] = [{"id": c, "name": _CATEGORY_NAME[c]} for c in self.categories]
        return data


def mix(*values: int) -> int:
    """A 64-bit hash of integers (splitmix64 steps): cheap, stable across processes."""
    x = 0x243F6A8885A308D3
    for value in values:
        x = (x ^ value) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 29
    return x


def _bucket_size(rng: random.Random, breed: str | None, category: int | None, mime: str) -> int:
    """Jpg-heavy breed photos, gif-rich category photos, a large plain remainder; never
    fewer than ``MAX_LIMIT + 10`` in a bucket."""
    share = {"jpg": 1.0, "png": 0.3, "gif": 0.25}[mime]
    if breed and category:
        base = 40
    elif breed:
        base = 420
    elif category:
        base, share = 900, {"jpg": 1.0, "png": 0.4, "gif": 0.5}[mime]
    else:
        base = 14000
    return MAX_LIMIT + 10 + int(base * share * rng.uniform(0.8, 1.2))


def _build_buckets() -> tuple[tuple[Bucket, ...], tuple[int, ...], tuple[tuple[float, float], ...]]:
    rng = random.Random(_SEED)
    buckets: list[Bucket] = []
    sizes: list[int] = []
    spans: list[tuple[float, float]] = []
    for breed in [None, *(b["id"] for b in BREEDS)]:
        for category in [None, *CATEGORY_IDS]:
            for mime in MIME_TYPES:
                buckets.append((breed, category, mime))
                sizes.append(_bucket_size(rng, breed, category, mime))
                start = rng.uniform(0.0, 0.3)
                spans.append((start, (rng.uniform(0.7, 1.0) - start)))
    offsets = [0]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    return tuple(buckets), tuple(offsets), tuple(spans)


BUCKETS, OFFSETS, _SPANS = _build_buckets()
SIZE = OFFSETS[-1]  # images in the catalogue
BUCKET_INDEX: dict[Bucket, int] = {bucket: k for k, bucket in enumerate(BUCKETS)}


def bucket_count(k: int) -> int:
    return OFFSETS[k + 1] - OFFSETS[k]


def upload_key(k: int, j: int) -> float:
    """Upload time of image ``j`` of bucket ``k`` in [0, 1): strictly rising in ``j``."""
    start, width = _SPANS[k]
    jitter = (mix(k, j) >> 11) / (1 << 53)
    return start + width * (j + jitter) / bucket_count(k)


def locate(index: int) -> tuple[int, int]:
    """(bucket, position in bucket) of a global index."""
    k = bisect.bisect_right(OFFSETS, index) - 1
    return k, index - OFFSETS[k]


def id_at(index: int) -> str:
    """The image id of a global index: a keyed bijection on 52 bits, in base 62."""
    x = (index * _MUL_A + _ADD) & _MASK
    x ^= x >> 26
    x = (x * _MUL_B) & _MASK
    x ^= x >> 26
    chars = []
    for _ in range(9):
        x, digit = divmod(x, 62)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def index_of(image_id: str) -> int | None:
    """The global index of a catalogue id, or None (the inverse of ``id_at``)."""
    if len(image_id) != 9:
        return None
    x = 0
    for ch in image_id:
        digit = _ALPHABET.find(ch)
        if digit < 0:
            return None
        x = x * 62 + digit
    if x > _MASK:
        return None
    x ^= x >> 26
    x = (x * _INV_B) & _MASK
    x ^= x >> 26
    index = ((x - _ADD) * _INV_A) & _MASK
    return index if index < SIZE else None


@lru_cache(maxsize=1 << 16)
def image_at(index: int) -> Image:
    """The image at a global index (cached: searches repeat, and an image is immutable)."""
    k, _ = locate(index)
    breed, category, mime = BUCKETS[k]
    h = mix(0x5EED, index)
    width = 240 + 4 * (h % 340)
    ratios = (0.75, 0.75, 0.667, 1.0, 1.333, 0.5625, 0.8)
    height = max(160, int(width * ratios[(h >> 20) % len(ratios)]))
    categories = (category,) if category is not None else ()
    return Image(id_at(index), mime, width, height, breed, categories)


def image_by_id(image_id: str) -> Image | None:
    index = index_of(image_id)
    return None if index is None else image_at(index)


class _LazyImages(Sequence[Image]):
    """The catalogue as a read-only sequence by global index, built on access."""

    def __len__(self) -> int:
        return SIZE

    @overload
    def __getitem__(self, index: int) -> Image: ...
    @overload
    def __getitem__(self, index: slice) -> list[Image]: ...
    def __getitem__(self, index: int | slice) -> Image | list[Image]:
        if isinstance(index, slice):
            return [image_at(i) for i in range(*index.indices(SIZE))]
        if not -SIZE <= index < SIZE:
            raise IndexError(index)
        return image_at(index % SIZE)

    def __iter__(self) -> Iterator[Image]:
        return (image_at(i) for i in range(SIZE))


IMAGES: Sequence[Image] = _LazyImages()


def _reference_images() -> dict[str, str]:
    """Each breed's oldest upload: its reference image."""
    oldest: dict[str, tuple[float, int]] = {}
    for k, (breed, _, _) in enumerate(BUCKETS):
        if breed is not None:
            candidate = (upload_key(k, 0), OFFSETS[k])
            oldest[breed] = min(oldest.get(breed, candidate), candidate)
    return {breed: id_at(index) for breed, (_, index) in oldest.items()}


REFERENCE_IMAGE: dict[str, str] = _reference_images()


def breed_json(breed_id: str) -> dict[str, Any]:
    data = dict(BREED_BY_ID[breed_id])
    data["weight"] = dict(data["weight"])
    data["reference_image_id"] = REFERENCE_IMAGE[breed_id]
    return data


def overlay_image(image_id: str) -> Image:
    """A stand-in image for an id the catalogue lacks (original data references such ids)."""
    rng = random.Random(f"the_cat_api-overlay-{image_id}")
    width = rng.randrange(240, 1601, 4)
    height = max(160, int(width * rng.choice((0.75, 0.667, 1.0, 1.333))))
    return Image(image_id, rng.choices(MIME_TYPES, weights=(6, 2, 2))[0], width, height)
