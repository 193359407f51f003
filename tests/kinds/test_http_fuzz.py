"""CI-sized run of ``benchmarks/fuzz_http.py``: the same strategies and checkers, a few hundred
cases per target instead of 10,000, failing on the first case that escapes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from tests.kinds.http_fuzz import (
    Case,
    RawCase,
    ServiceFuzzer,
    cat_cases,
    cat_fuzzer,
    check_parser,
    curl_lines,
    raw_cases,
    scope_of,
    weather_cases,
    weather_fuzzer,
)

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def weather() -> Iterator[ServiceFuzzer]:
    fuzzer = weather_fuzzer()
    yield fuzzer
    fuzzer.close()


@pytest.fixture(scope="module")
def cat() -> Iterator[ServiceFuzzer]:
    fuzzer = cat_fuzzer()
    yield fuzzer
    fuzzer.close()


@FUZZ
@given(curl_lines)
def test_parser_raises_only_curl_error_and_accepts_only_sendable(line: str) -> None:
    assert check_parser(line) is None


@FUZZ
@given(case=weather_cases)
def test_open_weather_answers_hostile_values(weather: ServiceFuzzer, case: Case) -> None:
    assert weather.check(scope_of(case)) is None


@FUZZ
@given(case=raw_cases)
def test_open_weather_answers_raw_garbage(weather: ServiceFuzzer, case: RawCase) -> None:
    assert weather.check(case) is None


@FUZZ
@given(case=cat_cases)
def test_cat_api_answers_hostile_values(cat: ServiceFuzzer, case: Case) -> None:
    assert cat.check(scope_of(case)) is None


@FUZZ
@given(case=raw_cases)
def test_cat_api_answers_raw_garbage(cat: ServiceFuzzer, case: RawCase) -> None:
    assert cat.check(case) is None
