"""Scoring many (gold, prediction) pairs through the_cat_api's real scoring path, and records
in the original data's shape (written for these tests; ids made up)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.core.task import TaskData
from toolbench.kinds.curl_task import CurlTask
from toolbench.kinds.http_exec import SimulatedExecutor
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Sample, TaskContext

CAT: CurlTask = get_task("the_cat_api")  # type: ignore[assignment]
V1 = "https://api.thecatapi.com/v1"
V0_TEST = Path(CAT.package_dir) / "data" / "v0" / "test.jsonl"


def _get(path: str) -> str:
    return f"curl -X GET '{V1}/{path}'"


def _post(path: str, body: str) -> str:
    return f"curl -X POST '{V1}/{path}' --data '{body}'"


# (prompt, gold, compare_string_only): every endpoint the original data uses, in its style.
ORIGINAL: list[tuple[str, str, bool]] = [
    ("Show me 5 Bombay cat gifs.", _get("images/search?limit=5&breeds=bomb&mime_types=gif"),
     False),
    ("Find a Persian, Abyssinian, Bombay or Siamese cat picture.",
     _get("images/search?&breeds=pers,abys,bomb,siam"), False),
    ("Three full size cat pictures, newest first.",
     _get("images/search?limit=3&size=full&order=DESC"), False),
    ("Cats in boxes, as png, two of them.",
     _get("images/search?limit=2&category_ids=5&mime_types=png"), False),
    ("A thumbnail of a cat with breed info.", _get("images/search?has_breeds=1&size=thumb"),
     False),
    ("Oldest four pictures of sinks with cats, second page.",
     _get("images/search?limit=4&page=1&category_ids=14&order=ASC"), False),
    ("List all cat breeds.", _get("breeds"), False),
    ("Give me 7 breeds.", _get("breeds?limit=7"), False),
    ("Tell me about the Sphynx.", _get("breeds/sphy"), False),
    ("Which breeds are called something with 'fold'?", _get("breeds/search?q=fold"), False),
    ("Which categories of cat images exist?", _get("categories"), False),
    ("Show my favourite cat pictures.", _get("favourites"), False),
    ("Show favourite h4k.", _get("favourites/h4k"), False),
    ("Save image r2d to favourites.", _post("favourites", '{"image_id":"r2d"}'), False),
    ("Favourite picture w8q.", _post("favourites", '{"image_id":"w8q"}'), True),
    ("Delete favourite m1x.", f"curl -X DELETE '{V1}/favourites/m1x'", False),
    ("Show all my votes.", _get("votes"), False),
    ("What was vote 55021?", _get("votes/55021"), False),
    ("Thumbs up for image p9z.", _post("votes", '{"image_id":"p9z", "value":1}'), False),
    ("Thumbs down for image c3c.", _post("votes", '{"image_id":"c3c", "value":-1}'), False),
    ("Picture v7n has earned a negative vote.", _post("votes", '{"image_id":"v7n", "value":-1}'),
     True),
    ("Zero vote on image z0z, the old way.", _post("votes", '{"image_id":"z0z", "value":0}'),
     False),
    ("Remove my vote 55022.", f"curl -X DELETE '{V1}/votes/55022'", False),
    ("Show me the cat image k0t.", _get("images/k0t"), False),
]  # fmt: skip


def original_records() -> list[dict[str, Any]]:
    return [{"prompt": p, "completion": [g], "compare_string_only": s} for p, g, s in ORIGINAL]


def v0_records() -> list[dict[str, Any]]:
    """Our generated test set, every line judged by responses and worlds (not by text)."""
    records = [json.loads(line) for line in V0_TEST.read_text().splitlines()]
    return [{**r, "compare_string_only": False} for r in records]


def sample_of(index: int, record: dict[str, Any]) -> Sample:
    fields = {k: v for k, v in record.items() if k not in ("prompt", "completion", "slots")}
    labels = tuple(record["completion"])
    return Sample(id=str(index), task=CAT.name, query=record["prompt"], labels=labels,
                  fields=fields)  # fmt: skip


def score_pairs(pairs: Sequence[tuple[Sample, str]]) -> list[Outcome]:
    """Score each (sample, prediction) as a run does: golds executed first, then each
    prediction on a fresh world."""
    samples = list({s.id: s for s, _ in pairs}.values())
    data = TaskData(CAT.name, "v0", samples, TaskContext((), ()), "", "")
    data.runtime = SimulatedExecutor(CAT.service)

    async def run() -> list[Outcome]:
        data.gold = await CAT._run_golds(data)
        return [
            await CAT.score(data, s, CAT.extract_action(p), None)  # type: ignore[arg-type]
            for s, p in pairs
        ]

    return asyncio.run(run())
