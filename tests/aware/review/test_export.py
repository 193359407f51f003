"""Export: decisions into ``verification``, nothing else touched, nothing lost or duplicated."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.aware.review.conftest import dataset
from toolbench.aware.review.export import export_decisions
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.schema import dump_line, read_instances, write_instances
from toolbench.errors import UserError


def open_store(path: Path) -> ReviewStore:
    return ReviewStore(default_db_path(path), [i.id for i in read_instances(path)], dataset=path)


def test_export_applies_decisions_and_keeps_everything_else(ds: Path) -> None:
    before = read_instances(ds)
    with open_store(ds) as store:
        store.accept("c0~api_replacement", "ann")
        store.reject("c0~utterance_removal", "bob", ["unnatural", "identical"], note="meh")
    summary = export_decisions(ds, None)
    after = read_instances(ds)
    assert [i.id for i in after] == [i.id for i in before]
    by_id = {i.id: i for i in after}
    accepted = by_id["c0~api_replacement"].verification
    assert (accepted.status, accepted.reasons, accepted.by) == ("accepted", [], "ann")
    rejected = by_id["c0~utterance_removal"].verification
    assert (rejected.status, rejected.reasons, rejected.by) == (
        "rejected",
        ["unnatural", "identical"],
        "bob",
    )
    untouched = {"c0~api_replacement", "c0~utterance_removal"}
    for old in before:
        if old.id not in untouched:
            assert dump_line(by_id[old.id]) == dump_line(old)  # byte for byte
    auto = by_id["c2~api_replacement"].verification  # automatic rejection stays
    assert (auto.status, auto.by, auto.reasons) == ("rejected", "auto", ["similar_api"])
    assert summary.out == ds and summary.instances == len(before) and summary.applied == 2
    assert summary.status_counts == {"pending": 3, "accepted": 1, "rejected": 2}
    assert "2 from review decisions" in str(summary)


def test_undo_then_redecide_exports_the_new_decision(ds: Path, tmp_path: Path) -> None:
    with open_store(ds) as store:
        store.accept("c1~api_replacement", "ann")
        store.accept("c1~utterance_removal", "ann")
        store.undo("ann")
        store.undo("ann")  # both undone
        store.reject("c1~api_replacement", "ann", ["alternative_api"])
    out = tmp_path / "out.jsonl"
    summary = export_decisions(ds, out)
    by_id = {i.id: i for i in read_instances(out)}
    assert by_id["c1~api_replacement"].verification.status == "rejected"
    assert by_id["c1~api_replacement"].verification.reasons == ["alternative_api"]
    assert by_id["c1~utterance_removal"].verification.status == "pending"
    assert summary.applied == 1
    # The dataset itself was not touched, and the store still opens for it.
    assert all(i.verification.by != "ann" for i in read_instances(ds))
    open_store(ds).close()


def test_exporting_in_place_keeps_the_store_valid(ds: Path) -> None:
    with open_store(ds) as store:
        store.accept("c0~api_replacement", "ann")
    export_decisions(ds, None)
    with open_store(ds) as store:  # ids unchanged, so the digest still matches
        store.accept("c1~api_replacement", "ann")
    export_decisions(ds, None)
    statuses = {i.id: i.verification.status for i in read_instances(ds)}
    assert statuses["c0~api_replacement"] == statuses["c1~api_replacement"] == "accepted"


def test_decisions_on_complete_instances_are_not_applied(ds: Path) -> None:
    with open_store(ds) as store:
        store.reject("c0", "ann", ["other"], note="by mistake")
    summary = export_decisions(ds, None)
    c0 = next(i for i in read_instances(ds) if i.id == "c0")
    assert c0.verification.status == "accepted" and c0.verification.by == "source"
    assert summary.applied == 0 and summary.ignored == 1


def test_export_without_decisions_is_a_user_error(ds: Path) -> None:
    with pytest.raises(UserError, match="no review decisions"):
        export_decisions(ds, None)
    assert not default_db_path(ds).exists()


def test_export_refuses_decisions_of_another_dataset(ds: Path, tmp_path: Path) -> None:
    with open_store(ds) as store:
        store.accept("c0~api_replacement", "ann")
    other = tmp_path / "other.jsonl"
    write_instances(other, dataset(2))
    with pytest.raises(UserError, match="instance ids differ"):
        export_decisions(other, None, db=default_db_path(ds))


@pytest.mark.parametrize("seed", range(5))
def test_export_never_loses_or_duplicates(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "big.jsonl"
    write_instances(path, dataset(15, auto_rejected=3))
    before = path.read_text().splitlines()
    ids = [i.id for i in read_instances(path)]
    with open_store(path) as store:
        for _ in range(60):
            instance_id, move = rng.choice(ids), rng.random()
            if move < 0.4:
                store.accept(instance_id, rng.choice(["ann", "bob"]))
            elif move < 0.7:
                store.reject(instance_id, rng.choice(["ann", "bob"]), ["unnatural"])
            elif move < 0.85:
                store.skip(instance_id, "ann")
            else:
                store.undo(rng.choice(["ann", "bob"]))
        decisions = store.current_decisions()
    export_decisions(path, None)
    export_decisions(path, None)  # idempotent
    after = read_instances(path)
    assert len(path.read_text().splitlines()) == len(before)
    assert [i.id for i in after] == ids
    for instance in after:
        decision = decisions.get(instance.id)
        if decision is not None and instance.label == "incomplete":
            assert instance.verification.status == decision.status
            assert instance.verification.by == decision.reviewer
