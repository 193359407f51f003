"""The review as real processes: keys piped in, and two reviewers on one file at once."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.aware.review.conftest import dataset, incomplete_ids
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review_reasons import reasons_for
from toolbench.aware.schema import read_instances, write_instances

# Reads keys from the real (piped) stdin, a little slower than a person, once "go" exists.
DRIVER = """
import sys, time
from pathlib import Path
from rich.console import Console
from toolbench.aware.review.terminal import run_review

class Slow:
    def __init__(self, inner):
        self.inner = inner
    def readline(self):
        time.sleep(0.004)
        return self.inner.readline()
    def isatty(self):
        return False

dataset, reviewer, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not go.exists():
    time.sleep(0.002)
summary = run_review(
    dataset, reviewer=reviewer, stdin=Slow(sys.stdin), console=Console(file=sys.stdout, width=100)
)
print("SUMMARY", summary.accepted, summary.rejected, summary.remaining)
"""


def shown(output: str) -> list[str]:
    return [line.split()[1] for line in output.splitlines() if line.startswith("─") and "~" in line]


def review_cli(ds: Path, keys: str, reviewer: str = "ann") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolbench.aware.review", "review", str(ds), "--reviewer", reviewer],
        input=keys,
        capture_output=True,
        text=True,
        timeout=60,
    )


def store_for(ds: Path) -> ReviewStore:
    return ReviewStore(default_db_path(ds), [i.id for i in read_instances(ds)])


def test_piped_keys_in_a_subprocess_are_stored_and_resumed(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    first = review_cli(ds, "a\nr\n1\nstill works\ns\nq\n")
    assert first.returncode == 0, first.stderr
    assert shown(first.stdout) == order[:4]
    with store_for(ds) as store:
        decisions = store.current_decisions()
        assert store.leases() == {}  # quitting hands the shown instance back
    assert {i: d.status for i, d in decisions.items()} == {
        order[0]: "accepted",
        order[1]: "rejected",
    }
    code = next(iter(reasons_for("utterance_removal")))
    assert decisions[order[1]].reasons == (code,) and decisions[order[1]].note == "still works"
    assert decisions[order[0]].reviewer == "ann"

    again = review_cli(ds, "a\nq\n")  # resumes: the skipped one waits at the end
    assert again.returncode == 0, again.stderr
    assert shown(again.stdout) == [order[3], order[4]]
    with store_for(ds) as store:
        assert set(store.current_decisions()) == {order[0], order[1], order[3]}

    bad = subprocess.run(
        [sys.executable, "-m", "toolbench.aware.review", "export", str(ds.with_name("no.jsonl"))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no such dataset" in bad.stderr


def test_two_reviewers_at_once_decide_each_instance_exactly_once(tmp_path: Path) -> None:
    ds = tmp_path / "aware.jsonl"
    write_instances(ds, dataset(20))
    lines_before = ds.read_text().splitlines()
    todo = incomplete_ids(read_instances(ds))
    assert len(todo) == 40
    go = tmp_path / "go"
    keys = {"ann": "a\n" * 60, "bob": "r\n1\n\n" * 60}  # ann accepts all, bob rejects all
    procs = {
        who: subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(ds), who, str(go)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in keys
    }
    time.sleep(0.3)  # both interpreters start; then they open the (new) store together
    go.touch()
    outputs = {who: proc.communicate(keys[who], timeout=60) for who, proc in procs.items()}
    for who, (out, err) in outputs.items():
        assert procs[who].returncode == 0, err
        assert "locked" not in out + err and "Traceback" not in err, err
        assert "SUMMARY" in out

    seen = {who: shown(out) for who, (out, _) in outputs.items()}
    assert seen["ann"] and seen["bob"], "both reviewers should have worked"
    assert set(seen["ann"]).isdisjoint(seen["bob"])  # never the same instance at once
    assert sorted(seen["ann"] + seen["bob"]) == sorted(todo)

    with store_for(ds) as store:
        events = store.events()
        decisions = store.current_decisions()
        assert store.leases() == {}
    votes = Counter(e.instance_id for e in events if e.action in ("accept", "reject"))
    assert votes == Counter(todo)  # exactly one decision each, none lost
    assert all(e.action != "undo" for e in events)
    for instance_id, decision in decisions.items():
        expected = ("accepted", "ann") if instance_id in seen["ann"] else ("rejected", "bob")
        assert (decision.status, decision.reviewer) == expected

    subprocess.run(
        [sys.executable, "-m", "toolbench.aware.review", "export", str(ds)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert len(ds.read_text().splitlines()) == len(lines_before)
    after = read_instances(ds)
    assert [i.id for i in after] == [line.split('"id":"')[1].split('"')[0] for line in lines_before]
    for instance in after:
        verification = instance.verification
        if instance.label == "complete":
            assert (verification.status, verification.by) == ("accepted", "source")
        elif instance.id in seen["ann"]:
            assert (verification.status, verification.by, verification.reasons) == (
                "accepted",
                "ann",
                [],
            )
        else:
            code = next(iter(reasons_for(instance.manipulation)))
            assert (verification.status, verification.by, verification.reasons) == (
                "rejected",
                "bob",
                [code],
            )
