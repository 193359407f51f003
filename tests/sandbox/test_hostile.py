"""Every hostile program fails cleanly, changes nothing outside its worker, and the pool
keeps working afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.sandbox.hostile_programs import (
    BOOKING,
    HOSTILE_PROGRAMS,
    SENTINEL,
    expected_kinds,
)
from toolbench.sandbox import SandboxPool
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search.world import make_world as home_world

VALID = "API.set_location('Reno')\nAPI.set_buy_or_rent('buy')\nAPI.search()"
VALID_STATE = {"location": "Reno", "buy_or_rent": "buy", "min_price": 0, "min_square_feet": 0}


def test_corpus_is_large_and_unique() -> None:
    names = [name for name, _ in HOSTILE_PROGRAMS]
    assert len(names) >= 35
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(("name", "source"), HOSTILE_PROGRAMS, ids=[n for n, _ in HOSTILE_PROGRAMS])
def test_hostile_program_is_contained(pool: SandboxPool, name: str, source: str) -> None:
    Path(SENTINEL).unlink(missing_ok=True)
    env_before = dict(os.environ)
    cwd_before = sorted(os.listdir("."))
    factory = booking_world if name in BOOKING else home_world

    result = pool.run(factory, source)

    assert not result.ok
    assert result.state is None
    assert result.kind in expected_kinds(name), result
    assert result.error and "\n" not in result.error and len(result.error) <= 300
    assert len(result.stdout.encode()) <= pool.limits.max_output_bytes
    # No trace outside the worker.
    assert not Path(SENTINEL).exists()
    assert dict(os.environ) == env_before
    assert sorted(os.listdir(".")) == cwd_before
    # The pool still runs a valid program correctly.
    after = pool.run(home_world, VALID)
    assert after.ok, after
    assert after.state == VALID_STATE


def test_error_messages_name_the_problem(pool: SandboxPool) -> None:
    cases = {
        "import os": "ImportError: imports are not allowed",
        "API._criteria = {}": "starts with",
        "getattr(API, '_criteria')": "AttributeError",
        "API.search = 1": "read-only",
        "'{0.__class__}'.format(API)": "format",
        "while True:\n    pass": "timeout: program ran longer than 0.5 s",
        "x = [0] * 10 ** 10": "MemoryError: program exceeded the 256 MB memory limit",
        "API.set_buy_or_rent('buy')": "ToolError: call set_location before set_buy_or_rent",
    }
    for source, expected in cases.items():
        result = pool.run(home_world, source)
        assert expected in (result.error or ""), (source, result)


def test_output_before_a_failure_is_kept_and_capped(pool: SandboxPool) -> None:
    result = pool.run(home_world, "print('hello')\nraise ValueError('boom')")
    assert (result.kind, result.error, result.stdout) == ("error", "ValueError: boom", "hello\n")
    flood = pool.run(home_world, "for i in range(10 ** 6):\n    print(i)")
    assert flood.kind == "output_limit"
    assert 0 < len(flood.stdout) <= pool.limits.max_output_bytes
