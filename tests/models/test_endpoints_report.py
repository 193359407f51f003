"""The per-endpoint lines of the summary and ``toolbench report``, from run.json's
``endpoints``: what they say, and that a hand-edited run.json never breaks them."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.report.endpoints import MAX_LINES, endpoint_lines, endpoint_stats

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


def test_one_line_per_endpoint_in_the_order_given() -> None:
    info = {
        "endpoints": {
            "http://b:8000/v1": {"calls": 1204, "errors": 3, "latency_s": 9.0,
                                 "mean_latency_s": 0.4123, "taken_out": 1},
            "http://a:8000/v1": {"calls": 10, "errors": 1, "latency_s": 1.0,
                                 "mean_latency_s": 0.1, "taken_out": 0},
        }
    }  # fmt: skip
    assert endpoint_lines(info) == [
        "endpoints (2): calls, errors, mean latency of answered calls",
        "  http://b:8000/v1  1,204 calls, 3 errors, mean 0.412 s, taken out 1x",
        "  http://a:8000/v1  10 calls, 1 error, mean 0.100 s",
    ]


def test_a_run_without_a_pool_has_no_lines() -> None:
    assert endpoint_lines({}) == [] and endpoint_lines({"endpoints": {}}) == []


def test_a_large_pool_names_the_first_endpoints_and_sums_the_rest() -> None:
    entries = {f"http://h{i}/v1": {"calls": 2, "errors": 1} for i in range(MAX_LINES + 5)}
    lines = endpoint_lines({"endpoints": entries})
    assert len(lines) == 1 + MAX_LINES + 1
    assert lines[-1] == "  ... 5 more endpoints: 10 calls, 5 errors"


@settings(max_examples=300, deadline=None)
@given(endpoints=JSON)
def test_any_json_in_run_json_gives_lines_or_none_never_an_error(endpoints: Any) -> None:
    lines = endpoint_lines({"endpoints": endpoints})
    assert len(lines) <= MAX_LINES + 2
    assert len(lines) == (1 + len(endpoint_stats({"endpoints": endpoints})) if lines else 0)
