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
    _SPANS,
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


def _ascending(k: int, first: int = 0) -> Iterator[tuple[float, int, int]]:
    return ((upload_key(k, j), k, j) for j in range(first, bucket_count(k)))


def _descending(k: int) -> Iterator[tuple[float, int, int]]:
    return ((upload_key(k, j), k, j) for j in range(bucket_count(k) - 1, -1, -1))


_prefixes: OrderedDict[tuple[str, bool], list[int]] = OrderedDict()


def ordered(selection: Selection, descending: bool, start: int, stop: int) -> list[int]:
    """Global indices [start, stop) of the selection in upload order (oldest first unless
    ``descending``). Pages near the front are merged (and cached); deep pages start from an
    upload-time threshold, so no page costs more than a few bisections over the buckets."""
    stop = min(stop, selection.total)
    if start >= stop:
        return []
    if stop > _PREFIX_CACHE_LIMIT:
        if descending:  # rank r from the newest is rank total-1-r from the oldest
            total = selection.total
            return _deep_slice(selection, total - stop, total - start)[::-1]
        return _deep_slice(selection, start, stop)
    cache_key = (selection.key, descending)
    cached = _prefixes.get(cache_key)
    if cached is None or len(cached) < stop:
        streams = [(_descending if descending else _ascending)(k) for k in selection.buckets]
        merged = heapq.merge(*streams, reverse=descending)
        cached = [OFFSETS[k] + j for _, k, j in itertools.islice(merged, stop)]
        _prefixes[cache_key] = cached
        while len(_prefixes) > _PREFIX_CACHE_ENTRIES:
            _prefixes.popitem(last=False)
    _prefixes.move_to_end(cache_key)
    return cached[start:stop]


def _below(k: int, threshold: float) -> int:
    """How many images of bucket ``k`` were uploaded before ``threshold``. Image ``j`` sits
    in [j, j+1) steps from the bucket's start, so only one image needs checking."""
    start, width = _SPANS[k]
    count = bucket_count(k)
    steps = (threshold - start) * count / width
    if steps <= 0:
        return 0
    whole = min(int(steps), count)
    return whole + (whole < count and upload_key(k, whole) < threshold)


def _deep_slice(selection: Selection, start: int, stop: int) -> list[int]:
    """Ascending ranks [start, stop): bisect an upload-time threshold with ``start`` images
    before it, then merge forward from there."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        before = sum(_below(k, middle) for k in selection.buckets)
        if before <= start:
            low = middle
            if before == start:  # an exact threshold: typically after ~log2(total) steps
                break
        else:
            high = middle
    firsts = [_below(k, low) for k in selection.buckets]
    skip = start - sum(firsts)  # images at exactly the threshold, when keys tie
    streams = [_ascending(k, first) for k, first in zip(selection.buckets, firsts, strict=True)]
    merged = itertools.islice(heapq.merge(*streams), skip, skip + stop - start)
    return [OFFSETS[k] + j for _, k, j in merged]


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
