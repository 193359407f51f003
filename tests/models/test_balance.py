"""The least-outstanding balancer: counts stay sane under any order of events, and the least
loaded member in service is the one picked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.models.balance import Balancer, Member, merge_stats


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# One event: ("pick", skip mask) | ("finish", which, ok) | ("abandon", which)
# | ("out", which, seconds) | ("back", which) | ("tick", seconds)
EVENT = st.one_of(
    st.tuples(st.just("pick"), st.integers(0, 15)),
    st.tuples(st.just("finish"), st.integers(0, 50), st.booleans()),
    st.tuples(st.just("abandon"), st.integers(0, 50)),
    st.tuples(st.just("out"), st.integers(0, 3), st.floats(0.0, 5.0)),
    st.tuples(st.just("back"), st.integers(0, 3)),
    st.tuples(st.just("tick"), st.floats(0.0, 3.0)),
)


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 4), events=st.lists(EVENT, max_size=80))
def test_in_flight_never_negative_and_the_least_loaded_in_service_is_picked(
    size: int, events: list[tuple]
) -> None:
    clock = Clock()
    balancer = Balancer([f"m{i}" for i in range(size)], clock=clock)
    sent: list[Member] = []  # requests in flight, in order
    for event in events:
        kind = event[0]
        if kind == "pick":
            skip = [m for m in balancer.members if event[1] >> m.index & 1]
            ready = [m for m in balancer.members if m not in skip and balancer.in_service(m)]
            least = min((m.in_flight for m in ready), default=None)
            member = balancer.pick(skip=skip)
            if least is None:
                assert member is None
            else:
                assert member is not None and member in ready and member.in_flight == least + 1
                sent.append(member)
        elif kind in ("finish", "abandon") and sent:
            member = sent.pop(event[1] % len(sent))
            if kind == "finish":
                balancer.finished(member, ok=event[2], latency_s=0.1)
            else:
                balancer.abandoned(member)
        elif kind == "out":
            balancer.take_out(balancer.members[event[1] % size], event[2])
        elif kind == "back":
            balancer.put_back(balancer.members[event[1] % size])
        elif kind == "tick":
            clock.now += event[1]
        for member in balancer.members:
            assert member.in_flight >= 0
            assert member.in_flight == sum(1 for m in sent if m is member)
            assert 0 <= member.errors <= member.calls
    stats = balancer.stats()
    assert set(stats) == {m.name for m in balancer.members}
    for entry in stats.values():
        assert set(entry) == {"calls", "errors", "latency_s", "mean_latency_s", "taken_out"}


def test_ties_go_to_the_member_picked_longest_ago() -> None:
    balancer = Balancer(["a", "b", "c"])
    picked = []
    for _ in range(6):
        member = balancer.pick()
        assert member is not None
        picked.append(member.name)
        balancer.finished(member, ok=True, latency_s=0.01)
    assert picked == ["a", "b", "c", "a", "b", "c"]


def test_a_member_taken_out_is_skipped_until_its_time_is_up_and_counted_once() -> None:
    clock = Clock()
    balancer = Balancer(["a", "b"], clock=clock)
    a, b = balancer.members
    balancer.take_out(a, 5.0)
    balancer.take_out(a, 5.0)  # still out: the same time out, not a second one
    assert [balancer.pick() for _ in range(3)] == [b, b, b]
    clock.now = 5.0
    assert balancer.pick() is a
    balancer.put_back(a)
    assert a.taken_out == 1 and a.out_until is None


def test_failures_in_a_row_are_counted_and_an_answer_resets_them() -> None:
    balancer = Balancer(["a"])
    (a,) = balancer.members
    for _ in range(3):
        assert balancer.pick() is a
        balancer.finished(a, ok=False)
    assert a.failing == 3 and a.errors == 3
    assert balancer.pick() is a
    balancer.finished(a, ok=True, latency_s=0.5)
    assert a.failing == 0
    assert a.as_json() == {
        "calls": 4, "errors": 3, "latency_s": 0.5, "mean_latency_s": 0.5, "taken_out": 0,
    }  # fmt: skip


def test_a_pool_needs_members() -> None:
    with pytest.raises(ValueError):
        Balancer([])


CALL = st.tuples(st.integers(0, 2), st.booleans(), st.integers(0, 1000))  # member, ok, ms


def _replay(calls: list[tuple[int, bool, int]], outs: list[int]) -> Balancer:
    balancer = Balancer(["a", "b", "c"])
    for index, ok, ms in calls:
        member = balancer.members[index]
        member.in_flight += 1
        balancer.finished(member, ok=ok, latency_s=ms / 1000)
    for index in outs:
        balancer.take_out(balancer.members[index], 1.0)
        balancer.put_back(balancer.members[index])
    return balancer


@settings(max_examples=200, deadline=None)
@given(
    first=st.lists(CALL, max_size=30),
    second=st.lists(CALL, max_size=30),
    outs=st.lists(st.integers(0, 2), max_size=4),
)
def test_merged_stats_are_those_of_one_pool_that_did_both(
    first: list[tuple[int, bool, int]], second: list[tuple[int, bool, int]], outs: list[int]
) -> None:
    both = _replay(first + second, outs).stats()
    merged = merge_stats([_replay(first, outs[:1]).stats(), _replay(second, outs[1:]).stats()])
    assert list(merged) == list(both)
    for name, entry in both.items():
        assert merged[name]["calls"] == entry["calls"]
        assert merged[name]["errors"] == entry["errors"]
        assert merged[name]["taken_out"] == entry["taken_out"]
        assert merged[name]["latency_s"] == pytest.approx(entry["latency_s"], abs=1e-3)
        if entry["mean_latency_s"] is None:
            assert merged[name]["mean_latency_s"] is None
        else:
            mean = entry["mean_latency_s"]
            assert merged[name]["mean_latency_s"] == pytest.approx(mean, abs=1e-3)


def test_merging_skips_what_is_not_a_count() -> None:
    parts = [
        {"a": {"calls": 2, "errors": 1, "latency_s": 0.5, "taken_out": 1}},
        {"a": {"calls": "2", "errors": True, "latency_s": float("inf")}, "b": [1]},
        "junk",
    ]
    assert merge_stats(parts) == {  # type: ignore[arg-type]
        "a": {"calls": 2, "errors": 1, "latency_s": 0.5, "mean_latency_s": 0.5, "taken_out": 1}
    }
