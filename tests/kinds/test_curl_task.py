"""Curl task scoring: equivalent requests succeed, near-misses and wrong writes fail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolbench.core.task import TaskData
from toolbench.kinds.curl_task import CurlTask
from toolbench.kinds.http_exec import SimulatedExecutor
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.registry import get_task
from toolbench.types import Sample, Status, TaskContext

CAT: CurlTask = get_task("the_cat_api")  # type: ignore[assignment]
API = "https://api.thecatapi.com/v1"
STATE = {"favourites": [{"id": 4001, "image_id": "0XYvRd7oD"}], "votes": []}


def score(task: CurlTask, gold: str, prediction: str, **fields: Any) -> tuple[Status, bool, float]:
    sample = Sample(id="0", task=task.name, query="q", labels=(gold,), fields=fields)
    data = TaskData(task.name, "v0", [sample], TaskContext((), ()), "", "")
    data.runtime = SimulatedExecutor(task.service)
    data.gold = asyncio.run(task._run_golds(data))
    runner: ProgramRunner = None  # type: ignore[assignment]  # curl tasks do not use the sandbox
    outcome = asyncio.run(task.score(data, sample, task.extract_action(prediction), runner))
    return outcome.status, outcome.success, outcome.metrics.get("f1", 0.0)


SEARCH = f"curl -X GET '{API}/images/search?limit=5&order=DESC&breed_ids=beng,siam'"


@pytest.mark.parametrize(
    "prediction",
    [
        SEARCH,
        f"curl -X GET '{API}/images/search?breed_ids=beng,siam&order=DESC&limit=5'",  # order
        f'curl -X GET "{API}/images/search?limit=5&order=DESC&breed_ids=beng,siam"',  # quotes
        f"curl '{API}/images/search?limit=5&order=DESC&breed_ids=beng,siam'",  # no -X GET
        f"curl --request GET '{API}/images/search?limit=5&order=DESC&breed_ids=beng%2Csiam'",
        f"curl -G '{API}/images/search' -d limit=5 -d order=DESC -d breed_ids=beng,siam",
        f"curl -X GET '{API}/images/search?limit=5&order=DESC&breed_ids=beng,siam' "
        "-H 'x-api-key: my-key'",  # key in a header
        f"Here is the request:\n```bash\n{SEARCH}\n```",  # chat reply
    ],
)
def test_equivalent_reads_succeed(prediction: str) -> None:
    assert score(CAT, SEARCH, prediction) == (Status.SCORED, True, 1.0)


@pytest.mark.parametrize(
    "prediction",
    [
        f"curl -X GET '{API}/images/search?limit=5&order=ASC&breed_ids=beng,siam'",  # wrong value
        f"curl -X GET '{API}/images/search?limit=5&order=DESC'",  # missing parameter
        f"curl -X GET '{API}/breeds?limit=5'",  # wrong endpoint
    ],
)
def test_near_miss_reads_fail(prediction: str) -> None:
    status, success, f1 = score(CAT, SEARCH, prediction)
    assert not success and f1 < 1.0
    assert status in (Status.SCORED, Status.MODEL_ERROR)


def test_wrong_image_on_a_write_fails_even_though_the_response_matches() -> None:
    from toolbench.tasks.the_cat_api.catalogue import IMAGES

    ids = [image.id for image in IMAGES[:3]]
    gold = f"curl -X POST '{API}/favourites' --data '{{\"image_id\":\"{ids[1]}\"}}'"
    wrong = f"curl -X POST '{API}/favourites' --data '{{\"image_id\":\"{ids[2]}\"}}'"
    spaced = f"curl -X POST '{API}/favourites' -d '{{\"image_id\": \"{ids[1]}\"}}'"
    assert score(CAT, gold, spaced, state=STATE) == (Status.SCORED, True, 1.0)
    status, success, f1 = score(CAT, gold, wrong, state=STATE)
    assert status is Status.SCORED and f1 == 1.0  # both answer {"message": "SUCCESS"}
    assert not success  # ... but the favourites differ


def test_delete_of_another_favourite_is_a_crash_or_failure() -> None:
    gold = f"curl -X DELETE '{API}/favourites/4001'"
    assert score(CAT, gold, gold, state=STATE)[1]
    assert not score(CAT, gold, f"curl -X DELETE '{API}/favourites/4002'", state=STATE)[1]


def test_compare_string_only_uses_whitespace_normalised_text() -> None:
    gold = f"curl -X DELETE '{API}/favourites/4001'"
    fields = {"compare_string_only": True, "state": STATE}
    assert score(CAT, gold, f"curl  -X   DELETE '{API}/favourites/4001'  ", **fields)[1]
    status, success, _ = score(CAT, gold, f'curl -X DELETE "{API}/favourites/4001"', **fields)
    assert (status, success) == (Status.MODEL_ERROR, False)  # the original's rule: a crash


@pytest.mark.parametrize(
    ("prediction", "reason"),
    [
        ("I would call the API.", "no curl command"),
        (f"curl -X GET '{API}/images/search' ; rm -rf /", "rejected curl"),
        ("curl -X GET 'https://evil.example/v1/images/search'", "rejected curl"),
        (f"curl -X GET '{API}/images/nope-such-image'", "HTTP 400"),
    ],
)
def test_failures_are_model_errors_with_reasons(prediction: str, reason: str) -> None:
    sample = Sample(id="0", task=CAT.name, query="q", labels=(SEARCH,))
    data = TaskData(CAT.name, "v0", [sample], TaskContext((), ()), "", "")
    data.runtime = SimulatedExecutor(CAT.service)
    data.gold = asyncio.run(CAT._run_golds(data))
    outcome = asyncio.run(CAT.score(data, sample, CAT.extract_action(prediction), None))  # type: ignore[arg-type]
    assert outcome.status is Status.MODEL_ERROR
    assert reason in outcome.message and "\n" not in outcome.message


WEATHER: CurlTask = get_task("open_weather")  # type: ignore[assignment]
OW = "https://api.openweathermap.org"
FORECAST = (
    f"curl -X GET '{OW}/data/2.5/forecast?q=San%20Jose&appid={{API_KEY}}&units=metric&lang=de'"
)


@pytest.mark.parametrize(
    "prediction",
    [
        FORECAST,
        f"curl -X GET '{OW}/data/2.5/forecast?lang=de&units=metric&appid={{API_KEY}}&q=San%20Jose'",
        f'curl -X GET "{OW}/data/2.5/forecast?q=San+Jose&appid={{API_KEY}}&units=metric&lang=de"',
        f"curl '{OW}/data/2.5/forecast?q=San%20Jose&appid={{API_KEY}}"
        "&units=metric&lang=de&mode=json'",
        f"curl -G '{OW}/data/2.5/forecast' -d 'q=San Jose' -d appid={{API_KEY}} -d units=metric"
        " -d lang=de",
    ],
)
def test_equivalent_weather_requests_succeed(prediction: str) -> None:
    assert score(WEATHER, FORECAST, prediction) == (Status.SCORED, True, 1.0)


def test_explicit_defaults_equal_omitted_ones() -> None:
    gold = f"curl -X GET '{OW}/data/2.5/weather?zip=94040&appid={{API_KEY}}'"
    explicit = (
        f"curl -X GET '{OW}/data/2.5/weather?zip=94040&appid={{API_KEY}}"
        "&units=standard&mode=json&lang=en'"
    )
    assert score(WEATHER, gold, explicit) == (Status.SCORED, True, 1.0)


@pytest.mark.parametrize(
    ("prediction", "expect_crash"),
    [
        (
            f"curl -X GET '{OW}/data/2.5/weather?q=San%20Jose&appid={{API_KEY}}"
            "&units=metric&lang=de'",
            False,
        ),
        (
            f"curl -X GET '{OW}/data/2.5/forecast?q=San%20Jose&appid={{API_KEY}}"
            "&units=imperial&lang=de'",
            False,
        ),
        (
            f"curl -X GET '{OW}/data/2.5/forecast?q=San%20Jose&appid={{API_KEY}}&units=metric'",
            False,
        ),
        (f"curl -X GET '{OW}/data/2.5/forecast?q=San%20Jose&units=metric&lang=de'", True),  # no key
        (f"curl -X GET '{OW}/data/2.5/forecast?q=Xyzzyville&appid={{API_KEY}}&units=metric'", True),
    ],
)
def test_non_equivalent_weather_requests_fail(prediction: str, expect_crash: bool) -> None:
    status, success, f1 = score(WEATHER, FORECAST, prediction)
    assert not success and f1 < 1.0
    assert (status is Status.MODEL_ERROR) == expect_crash


def test_cat_key_in_header_or_query_is_the_same_request() -> None:
    header = f"curl -X GET '{API}/breeds?limit=4' -H 'x-api-key: k-1'"
    query = f"curl -X GET '{API}/breeds?limit=4&api_key=k-1'"
    assert score(CAT, header, query) == (Status.SCORED, True, 1.0)
