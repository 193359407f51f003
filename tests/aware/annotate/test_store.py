"""The annotation store, under both of its uses: the review (accept/reject with reasons) and the
human baseline (a Yes/No answer). Claiming, lease expiry, undo and exactly-once decisions are
the store's, so every test runs against both; files written before the store was shared
(``*_db.sql``, dumps of what the review and human stores wrote) still open and keep their rows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolbench.aware.annotate.store import AnnotationStore, Taken
from toolbench.aware.evaluate.human_store import AnswerStore
from toolbench.aware.review.store import ReviewStore

HERE = Path(__file__).parent
IDS = ["x1", "x2", "x3", "x4"]
LEASE_S = 10.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Use:
    """One use of the store: how to open it and how to record one decision in it."""

    name: str
    action: str
    open: Callable[..., AnnotationStore[Any]]
    decide: Callable[..., Any]
    who: Callable[[Any], str]


def _review(path: Path, ids: list[str], **kw: Any) -> ReviewStore:
    return ReviewStore(path, ids, **kw)


def _human(path: Path, ids: list[str], **kw: Any) -> AnswerStore:
    return AnswerStore(path, ids, {"sample_digest": "d"}, **kw)


USES = [
    Use(
        "review",
        "reject",
        _review,
        lambda s, i, who, **kw: s.record(i, who, "reject", ["other"], "n", **kw),
        lambda e: e.reviewer,
    ),
    Use(
        "human",
        "answer",
        _human,
        lambda s, i, who, **kw: s.answer(i, who, "yes", 1.0, **kw),
        lambda e: e.annotator,
    ),
]


@pytest.fixture(params=USES, ids=[u.name for u in USES])
def use(request: pytest.FixtureRequest) -> Use:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(use: Use, tmp_path: Path, clock: Clock) -> Iterator[AnnotationStore[Any]]:
    with use.open(tmp_path / "s.sqlite", IDS, clock=clock) as opened:
        yield opened


def test_people_claiming_at_once_get_distinct_instances(use: Use, tmp_path: Path) -> None:
    """Each thread has its own connection, as separate processes would; every instance is
    claimed by exactly one person and decided exactly once."""
    ids = [f"i{n}" for n in range(40)]
    path = tmp_path / "s.sqlite"
    use.open(path, ids).close()
    claims: dict[str, list[str]] = {}
    start = threading.Barrier(4)

    def work(who: str) -> None:
        with use.open(path, ids) as mine:
            start.wait()
            got = claims.setdefault(who, [])
            while (instance_id := mine.claim_next(who, ids, LEASE_S)) is not None:
                got.append(instance_id)
                use.decide(mine, instance_id, who, exclusive=True)

    threads = [threading.Thread(target=work, args=(f"p{k}",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    claimed = [i for got in claims.values() for i in got]
    assert sorted(claimed) == sorted(ids)  # none twice, none left out
    with use.open(path, ids) as shared:
        assert shared.decided() == set(ids)
        assert len(shared.effective()) == len(ids)
        assert shared.leases() == {}


def test_a_lease_runs_out(use: Use, store: AnnotationStore[Any], clock: Clock) -> None:
    assert store.claim_next("ann", IDS, LEASE_S) == "x1"
    assert store.claim_next("bob", IDS, LEASE_S) == "x2"  # x1 is ann's
    assert set(store.leases()) == {"x1", "x2"}
    clock.now += LEASE_S + 1
    assert store.leases() == {}
    assert store.claim_next("cat", IDS, LEASE_S) == "x1"  # ann's lease ran out
    with pytest.raises(Taken):  # ann comes back too late: cat holds it now
        use.decide(store, "x1", "ann", exclusive=True)
    assert store.decided() == set()
    use.decide(store, "x1", "cat", exclusive=True)
    assert store.decided() == {"x1"}


def test_undo_gives_the_instance_back_to_whoever_decided_it(
    use: Use, store: AnnotationStore[Any]
) -> None:
    assert store.undo("ann") is None  # nothing to undo
    assert store.claim_next("ann", IDS) == "x1"
    first = use.decide(store, "x1", "ann")
    assert store.claim_next("ann", IDS) == "x2"
    second = use.decide(store, "x2", "ann")
    assert store.latest("ann") == (second.seq, "x2")
    assert store.undo("ann", only=first.seq) is None  # a stale undo form undoes nothing
    undo = store.undo("ann", only=second.seq)
    assert undo is not None and (undo.action, undo.undoes_seq) == ("undo", second.seq)
    assert store.decided() == {"x1"}
    assert store.claim_next("bob", IDS) == "x3"  # x2 is leased back to ann
    assert store.claim_next("ann", IDS) == "x2"
    assert store.undo("ann") is not None  # then the decision before it
    assert store.decided() == set()
    actions = [e.action for e in store.events(who="ann")]
    assert actions == [use.action, use.action, "undo", "undo"]


def test_a_decision_is_recorded_exactly_once(use: Use, store: AnnotationStore[Any]) -> None:
    """A resent exclusive decision is refused and the log keeps one; a resent undo, too."""
    store.claim_next("ann", IDS)
    event = use.decide(store, "x1", "ann", exclusive=True)
    with pytest.raises(Taken):
        use.decide(store, "x1", "ann", exclusive=True)
    with pytest.raises(Taken):
        use.decide(store, "x1", "bob", exclusive=True)
    assert [e.seq for e in store.events(instance_id="x1")] == [event.seq]
    assert store.undo("ann", only=event.seq) is not None
    assert store.undo("ann", only=event.seq) is None
    assert [use.who(e) for e in store.effective()] == []
    assert store.decided_by("ann") == 0


def test_review_export_writes_each_decision_once(tmp_path: Path) -> None:
    """Exporting twice (two reviewers finishing at once) writes the same file: every instance
    once, each decided one with its decision."""
    from tests.aware.review.conftest import dataset
    from toolbench.aware.review.export import export_decisions
    from toolbench.aware.review.store import default_db_path
    from toolbench.aware.schema import read_instances, write_instances

    ds = tmp_path / "ds.jsonl"
    write_instances(ds, dataset(2))
    instances = read_instances(ds)
    target = next(i.id for i in instances if i.label == "incomplete")
    with ReviewStore(default_db_path(ds), [i.id for i in instances], dataset=ds) as review:
        review.reject(target, "ann", ["other"], "why")
    first = export_decisions(ds)
    once = ds.read_bytes()
    second = export_decisions(ds)
    assert ds.read_bytes() == once
    assert first.instances == second.instances == len(instances)
    assert (first.applied, second.applied) == (1, 1)
    by_id = {i.id: i for i in read_instances(ds)}
    assert (by_id[target].verification.status, by_id[target].verification.by) == (
        "rejected",
        "ann",
    )


def test_human_answers_count_the_first_answer_once(tmp_path: Path, clock: Clock) -> None:
    """A late second answer (a lease ran out on screen) is kept in the log, but only the first
    one counts."""
    with _human(tmp_path / "h.sqlite", IDS, clock=clock) as human:
        human.claim_next("ann", None, LEASE_S)
        clock.now += LEASE_S + 1
        human.claim_next("bob", None, LEASE_S)
        human.answer("x1", "bob", "no", 2.0)
        human.answer("x1", "ann", "yes", 12.0)  # the terminal writes without exclusive
        assert [g.annotator for g in human.given()] == ["bob", "ann"]
        assert {i: g.answer for i, g in human.answers().items()} == {"x1": "no"}


# ---- files written before the store was shared ----


def _load(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript((HERE / f"{name}_db.sql").read_text())
    conn.close()
    return path


def _shape(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Tables' columns (name, type, not null, default, pk) and the index names."""
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    shape = {t: [tuple(c[1:]) for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
    shape["indexes"] = sorted(
        conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'")
    )
    conn.close()
    return shape


def test_an_existing_review_file_opens_with_its_rows(tmp_path: Path) -> None:
    path = _load(tmp_path, "review")
    with ReviewStore(path, ["a", "b", "c"], dataset=Path("ds.jsonl")) as old:
        assert [(e.instance_id, e.reviewer, e.action) for e in old.events()] == [
            ("a", "ann", "accept"),
            ("b", "bob", "reject"),
            ("c", "ann", "skip"),
            ("a", "ann", "undo"),
        ]
        decision = old.current_decisions()["b"]
        assert (decision.reasons, decision.note) == (("unnatural", "other"), "odd")
        assert set(old.current_decisions()) == {"b"}
        old.accept("a", "cat")
        assert set(old.current_decisions()) == {"a", "b"}
    fresh = tmp_path / "fresh.sqlite"
    ReviewStore(fresh, ["a"]).close()
    assert _shape(fresh) == _shape(path)


def test_an_existing_human_file_opens_with_its_rows(tmp_path: Path) -> None:
    path = _load(tmp_path, "human")
    with AnswerStore(path, ["a", "b", "c"], {"sample_digest": "d1", **_OPTIONS}) as old:
        assert {i: (g.annotator, g.answer, g.seconds) for i, g in old.answers().items()} == {
            "a": ("ann", "yes", 1.5)
        }
        assert [e.action for e in old.events(who="bob")] == ["answer", "undo"]
        with pytest.raises(Exception, match="another sample"):
            AnswerStore(path, ["a", "b", "c"], {"sample_digest": "other", **_OPTIONS})
        old.answer("c", "ann", "no", 3.0)
        assert set(old.answers()) == {"a", "c"}
    fresh = tmp_path / "fresh.sqlite"
    _human(fresh, ["a"]).close()
    assert _shape(fresh) == _shape(path)


_OPTIONS = {"dataset": "ds.jsonl", "n": "3", "seed": "0", "balanced": "false"}
