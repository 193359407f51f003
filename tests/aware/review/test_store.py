"""The review store: append-only decisions, undo, leases, dataset identity, threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from toolbench.aware.review.store import ReviewStore, default_db_path, ids_digest
from toolbench.errors import UserError

IDS = ["x1", "x2", "x3", "x4"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> ReviewStore:
    return ReviewStore(tmp_path / "d.review.sqlite", IDS, dataset=tmp_path / "d.jsonl")


def statuses(store: ReviewStore) -> dict[str, str]:
    return {i: d.status for i, d in store.current_decisions().items()}


def test_default_path_is_beside_the_dataset(tmp_path: Path) -> None:
    assert default_db_path(tmp_path / "a.jsonl") == tmp_path / "a.jsonl.review.sqlite"


def test_wal_mode_and_meta(store: ReviewStore, tmp_path: Path) -> None:
    assert store.journal_mode() == "wal"
    meta = store.meta()
    assert meta["dataset"] == str(tmp_path / "d.jsonl")
    assert meta["ids_digest"] == ids_digest(IDS) and meta["ids_count"] == "4"


def test_decisions_skips_and_reasons(store: ReviewStore) -> None:
    store.accept("x1", "ann")
    store.reject("x2", "ann", ["not_incomplete", "unnatural"], note="still works")
    store.skip("x3", "ann")
    decisions = store.current_decisions()
    assert set(decisions) == {"x1", "x2"}  # a skip is not a decision
    assert decisions["x2"].status == "rejected"
    assert decisions["x2"].reasons == ("not_incomplete", "unnatural")
    assert decisions["x2"].note == "still works" and decisions["x2"].reviewer == "ann"
    store.accept("x2", "bob")  # a later decision wins
    assert statuses(store) == {"x1": "accepted", "x2": "accepted"}


def test_undo_then_redecide(store: ReviewStore) -> None:
    store.accept("x1", "ann")
    undo = store.undo("ann")
    assert undo is not None and undo.action == "undo" and undo.instance_id == "x1"
    assert statuses(store) == {}
    store.reject("x1", "ann", ["unnatural"])
    assert statuses(store) == {"x1": "rejected"}


def test_undo_twice_undoes_two_and_never_deletes(store: ReviewStore) -> None:
    store.accept("x1", "ann")
    store.skip("x3", "ann")  # skips are not undone
    store.reject("x2", "ann", ["other"], note="n")
    first, second = store.undo("ann"), store.undo("ann")
    assert first is not None and first.instance_id == "x2"
    assert second is not None and second.instance_id == "x1"
    assert store.undo("ann") is None  # nothing left
    assert statuses(store) == {}
    assert [e.action for e in store.events()] == ["accept", "skip", "reject", "undo", "undo"]


def test_undo_is_per_reviewer_and_uncovers_the_earlier_decision(store: ReviewStore) -> None:
    store.accept("x1", "ann")
    store.reject("x1", "bob", ["unnatural"])
    store.accept("x2", "ann")
    undo = store.undo("bob")
    assert undo is not None and undo.undoes_seq == 2
    assert statuses(store) == {"x1": "accepted", "x2": "accepted"}  # ann's shows through
    assert store.undo("bob") is None


def test_an_event_is_undone_at_most_once(store: ReviewStore) -> None:
    store.accept("x1", "ann")
    store.undo("ann")
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO events (instance_id, reviewer, action, created_at, undoes_seq)"
            " VALUES ('x1', 'ann', 'undo', 0, 1)"
        )
    conn.close()


def test_bad_input_is_refused(store: ReviewStore) -> None:
    with pytest.raises(ValueError, match="not in this dataset"):
        store.accept("nope", "ann")
    with pytest.raises(ValueError, match="reason"):
        store.reject("x1", "ann", [])
    with pytest.raises(ValueError, match="reviewer"):
        store.accept("x1", "")
    with pytest.raises(ValueError, match="not in this dataset"):
        store.claim_next("ann", ["x1", "nope"])
    assert store.events() == []


def test_same_ids_in_another_order_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with ReviewStore(path, IDS) as first:
        first.accept("x1", "ann")
    with ReviewStore(path, list(reversed(IDS))) as again:
        assert set(again.current_decisions()) == {"x1"}


def test_different_ids_are_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    ReviewStore(path, IDS, dataset=tmp_path / "a.jsonl").close()
    with pytest.raises(UserError) as error:
        ReviewStore(path, [*IDS, "x5"], dataset=tmp_path / "b.jsonl")
    message = str(error.value)
    assert "\n" not in message
    assert str(tmp_path / "a.jsonl") in message and "--db" in message


def test_missing_store_without_create(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no review decisions"):
        ReviewStore(tmp_path / "none.sqlite", IDS, create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_claim_in_dataset_order_and_leases_exclude_others(tmp_path: Path) -> None:
    clock = Clock()
    store = ReviewStore(tmp_path / "s.sqlite", IDS, clock=clock)
    assert store.claim_next("ann", IDS) == "x1"
    assert store.claim_next("ann", IDS) == "x1"  # still ann's until she decides
    assert store.claim_next("bob", IDS) == "x2"
    assert store.leases() == {"x1": ("ann", 1600.0), "x2": ("bob", 1600.0)}
    store.accept("x1", "ann")
    assert "x1" not in store.leases()
    assert store.claim_next("ann", IDS) == "x3"
    clock.now += 601  # both went for lunch: leases lapse, x2 is anyone's again
    assert store.claim_next("ann", IDS) == "x2"
    assert store.claim_next("bob", IDS) == "x3"


def test_skipped_go_to_the_end_of_that_reviewers_queue(tmp_path: Path) -> None:
    clock = Clock()
    store = ReviewStore(tmp_path / "s.sqlite", IDS, clock=clock)
    store.skip("x1", "ann")
    clock.now += 1
    store.skip("x2", "ann")
    assert store.claim_next("bob", IDS) == "x1"  # not bob's skip
    assert store.claim_next("ann", IDS) == "x3"
    store.accept("x3", "ann")
    store.accept("x4", "ann")
    assert store.claim_next("ann", IDS) == "x2"  # x1 is bob's now; skipped ones come last
    store.skip("x2", "ann")
    store.release("bob")
    assert store.claim_next("ann", IDS) == "x1"  # least recently skipped first


def test_undo_hands_the_instance_back_first(tmp_path: Path) -> None:
    clock = Clock()
    store = ReviewStore(tmp_path / "s.sqlite", IDS, clock=clock)
    store.accept("x1", "ann")
    store.accept("x2", "ann")
    clock.now += 1
    assert store.claim_next("ann", IDS) == "x3"
    clock.now += 1
    store.undo("ann")
    assert store.claim_next("bob", IDS) == "x4"  # x2 is leased to ann again
    assert store.claim_next("ann", IDS) == "x2"
    store.reject("x2", "ann", ["unnatural"])
    assert store.claim_next("ann", IDS) == "x3"  # back to what was on screen
    assert store.claim_next("ann", IDS) == "x3"
    assert store.release("ann") == 1


def test_everything_decided_gives_none(store: ReviewStore) -> None:
    for instance_id in IDS:
        store.accept(instance_id, "ann")
    assert store.claim_next("ann", IDS) is None
    assert store.claim_next("ann", []) is None


def test_threads_and_two_connections_never_claim_twice(tmp_path: Path) -> None:
    ids = [f"i{n}" for n in range(60)]
    path = tmp_path / "s.sqlite"
    shared = ReviewStore(path, ids)
    other = ReviewStore(path, ids)
    claimed: list[str] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work(store: ReviewStore, reviewer: str) -> None:
        try:
            while (instance_id := store.claim_next(reviewer, ids)) is not None:
                with lock:
                    claimed.append(instance_id)
                store.accept(instance_id, reviewer)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=work, args=(shared if n % 2 else other, f"r{n}")) for n in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(claimed) == sorted(ids)  # each exactly once
    assert len(shared.current_decisions()) == len(ids)
    assert sum(1 for e in shared.events() if e.action == "accept") == len(ids)
