"""Image search over the procedural catalogue without scanning it.

A filter selects a set of buckets (``select``); a page of that selection is either a merge of
the buckets by upload time (``ASC``/``DESC``: only as many images as the page needs are
visited, and short prefixes are cached because benchmarks repeat the same searches) or a
seeded sample of positions (``RANDOM``: O(limit)). Equivalent filters (``breeds`` vs
``breed_ids``, an explicit list of every mime type, any parameter order) select the same
buckets, so they give the same images.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import random
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from toolbench.tasks.the_cat_api.breeds import BREED_BY_ID, CATEGORY_IDS
from toolbench.tasks.the_cat_api.catalogue import (
    BUCKET_INDEX,
    MIME_TYPES,
    OFFSETS,
    bucket_count,
    upload_key,
)

_PREFIX_CACHE_LIMIT = 2000  # images kept per cached (selection, order) prefix
_PREFIX_CACHE_ENTRIES = 512


@dataclass(frozen=True)
class Selection:
    buckets: tuple[int, ...]
    cumulative: tuple[int, ...]  # cumulative[i] = images in buckets[:i]
    key: str  # stable digest of the buckets, seeds RANDOM

    @property
    def total(self) -> int:
        return self.cumulative[-1]


@lru_cache(maxsize=4096)
def select(
    breeds: frozenset[str] | None,
    categories: frozenset[int] | None,
    mimes: frozenset[str] | None,
    has_breeds: bool,
) -> Selection:
    """The buckets matching the filters (None: no filter). Ids must already be valid."""
    breed_set: Sequence[str | None] = list(BREED_BY_ID) if has_breeds else [None, *BREED_BY_ID]
    if breeds:
        breed_set = sorted(breeds)
    category_set: Sequence[int | None] = sorted(categories) if categories else [None, *CATEGORY_IDS]
    mime_set = [m for m in MIME_TYPES if not mimes or m in mimes]
    chosen = sorted(
        BUCKET_INDEX[(b, c, m)] for b in breed_set for c in category_set for m in mime_set
    )
    cumulative = [0]
    for k in chosen:
        cumulative.append(cumulative[-1] + bucket_count(k))
    digest = hashlib.sha256(",".join(map(str, chosen)).encode()).hexdigest()[:16]
    return Selection(tuple(chosen), tuple(cumulative), digest)


def _ascending(k: int) -> Iterator[tuple[float, int, int]]:
    return ((upload_key(k, j), k, j) for j in range(bucket_count(k)))


def _descending(k: int) -> Iterator[tuple[float, int, int]]:
    return ((upload_key(k, j), k, j) for j in range(bucket_count(k) - 1, -1, -1))


_prefixes: OrderedDict[tuple[str, bool], list[int]] = OrderedDict()


def ordered(selection: Selection, descending: bool, start: int, stop: int) -> list[int]:
    """Global indices [start, stop) of the selection in upload order (oldest first unless
    ``descending``)."""
    stop = min(stop, selection.total)
    if start >= stop:
        return []
    cache_key = (selection.key, descending)
    cached = _prefixes.get(cache_key)
    if cached is not None and len(cached) >= stop:
        _prefixes.move_to_end(cache_key)
        return cached[start:stop]
    streams = [(_descending if descending else _ascending)(k) for k in selection.buckets]
    merged = heapq.merge(*streams, reverse=descending)
    indices = [OFFSETS[k] + j for _, k, j in itertools.islice(merged, stop)]
    if stop <= _PREFIX_CACHE_LIMIT:
        _prefixes[cache_key] = indices
        _prefixes.move_to_end(cache_key)
        while len(_prefixes) > _PREFIX_CACHE_ENTRIES:
            _prefixes.popitem(last=False)
    return indices[start:stop]


def sampled(selection: Selection, seed: int, page: int, limit: int) -> list[int]:
    """``limit`` distinct random images of the selection, a pure function of (world seed,
    selection, page, limit); like the real service, each RANDOM page is a fresh draw."""
    rng = random.Random(f"{seed}:{selection.key}:{page}")
    positions = rng.sample(range(selection.total), min(limit, selection.total))
    found = []
    for position in positions:
        i = bisect.bisect_right(selection.cumulative, position) - 1
        found.append(OFFSETS[selection.buckets[i]] + position - selection.cumulative[i])
    return found
