"""open_weather's data generator, API docs and demonstrations, checked against the simulator."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from toolbench.tasks.open_weather import docs, generator

PATHS = {
    "data/2.5/weather", "data/2.5/forecast", "data/2.5/air_pollution",
    "data/2.5/air_pollution/forecast", "data/2.5/air_pollution/history", "geo/1.0/direct",
    "geo/1.0/reverse", "geo/1.0/zip",
}  # fmt: skip
SLOT_NAMES = {"q", "zip", "lat", "lon", "units", "mode", "lang", "cnt", "limit", "start", "end"}
CURL = re.compile(r"^curl -X GET 'https://api\.openweathermap\.org/([^?']+)\?([^']+)'$")
UNIT_WORDS = {
    "standard": ("standard", "kelvin"),
    "metric": ("metric", "celsius", "°c", "degrees celsius"),
    "imperial": ("imperial", "fahrenheit", "°f", "miles per hour", "degrees fahrenheit"),
}


def split(line: str) -> tuple[str, list[tuple[str, str]]]:
    match = CURL.match(line)
    assert match, line
    return match.group(1), parse_qsl(match.group(2), keep_blank_values=True)


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return generator.generate("test", generator.DEFAULT_TEST_SIZE, 0) + generator.generate(
        "train", 300, 0
    )


def test_deterministic_and_sized() -> None:
    first = json.dumps(generator.generate("test", 40, 3))
    assert first == json.dumps(generator.generate("test", 40, 3))
    assert first != json.dumps(generator.generate("test", 40, 4))
    for n in (0, 1, 17):
        assert len(generator.generate("train", n, 0)) == n
    assert (generator.DEFAULT_TEST_SIZE, generator.DEFAULT_SEED) == (100, 0)
    with pytest.raises(ValueError):
        generator.generate("dev", 1, 0)
    test = {r["prompt"].lower() for r in generator.generate("test", 100, 0)}
    assert not test & {r["prompt"].lower() for r in generator.generate("train", 200, 0)}


def test_records_are_well_formed(records: list[dict[str, Any]]) -> None:
    for record in records:
        assert set(record) == {"prompt", "completion", "slots"}
        (line,) = record["completion"]
        path, params = split(line)
        assert path in PATHS and ("appid", "{API_KEY}") in params
        slots = record["slots"]
        assert set(slots) <= SLOT_NAMES
        for key, text in slots.items():
            assert text and text in record["prompt"], (key, text, record["prompt"])
        values = dict(params)
        # Every parameter in the gold line is supplied by the query, and vice versa.
        assert set(values) - {"appid"} == set(slots), record
        for key in ("lat", "lon"):
            if key in slots:
                text = slots[key].upper()
                sign = -1 if text[-1] in "SW" else 1
                number = float(text[:-2]) * sign if text[-1] in "NSEW" else float(text)
                assert number == float(values[key])
        if "units" in slots:
            assert slots["units"].lower() in UNIT_WORDS[values["units"]]
        if "mode" in slots:
            assert slots["mode"].lower() == values["mode"]
        for key in ("start", "end", "limit", "cnt"):
            if slots.get(key, "").isdigit() and key != "cnt":
                assert slots[key] == values[key]
        if "zip" in slots:
            assert slots["zip"].split(",")[0] == values["zip"].split(",")[0]


def test_every_endpoint_and_parameter_is_covered(records: list[dict[str, Any]]) -> None:
    test = records[: generator.DEFAULT_TEST_SIZE]
    assert {split(r["completion"][0])[0] for r in test} == PATHS
    assert set().union(*(r["slots"] for r in test)) == SLOT_NAMES
    values = [dict(split(r["completion"][0])[1]) for r in records]
    assert {v["units"] for v in values if "units" in v} == set(UNIT_WORDS)
    assert {v["mode"] for v in values if "mode" in v} == {"json", "xml"}
    assert len({v["lang"] for v in values if "lang" in v}) == 10
    assert any("," in v.get("q", "") for v in values) and any(" " in v.get("q", "") for v in values)


async def _statuses(lines: list[str]) -> list[tuple[int, str]]:
    from tests.tasks.open_weather.conftest import BASE, KEY, with_world
    from toolbench.tasks.open_weather.service import SERVICE

    transport = httpx.ASGITransport(app=with_world(SERVICE.new_state({})))
    out = []
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        for line in lines:
            url = line.split("'")[1].replace("{API_KEY}", KEY)
            response = await client.get(url)
            out.append((response.status_code, response.text))
    return out


async def test_every_gold_answers_200(records: list[dict[str, Any]]) -> None:
    lines = [r["completion"][0] for r in records]
    for line, (status, text) in zip(lines, await _statuses(lines), strict=True):
        assert status == 200, (line, text)
        # Golds are informative: no empty geocoding or history answers.
        assert text not in ("[]",) and '"list":[]' not in text, line


def test_docs_cover_every_endpoint() -> None:
    assert len(docs.FUNCTIONS) == 12
    paths = set()
    for name, doc in docs.FUNCTIONS.items():
        lines = doc.splitlines()
        assert lines[0].startswith("# ") and "Parameters:" in lines, name
        match = re.match(r"curl -X GET 'https://api\.openweathermap\.org/([^?]+)\?", lines[1])
        assert match and "appid={API_KEY}" in lines[1], name
        paths.add(match.group(1))
    assert paths == PATHS


async def test_demonstrations_answer_200_and_cover_everything() -> None:
    assert len(docs.EXAMPLES) >= 12
    lines = [line for _, line in docs.EXAMPLES]
    for line, (status, text) in zip(lines, await _statuses(lines), strict=True):
        assert status == 200, (line, text)
    parsed = [split(line) for line in lines]
    assert {path for path, _ in parsed} == PATHS
    used = {key for _, params in parsed for key, _ in params}
    assert used == SLOT_NAMES | {"appid"}
    assert {v for _, params in parsed for k, v in params if k == "lang"} == {
        "en", "fr", "zh_cn", "it", "de", "ru", "ja", "nl", "es", "pt"
    }  # fmt: skip
