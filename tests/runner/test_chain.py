"""The log's checksum chain: what it detects, how resume continues it, what it cannot do."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolbench.errors import UserError
from toolbench.runner import chain
from toolbench.runner.store import (
    ATTEMPTS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    DamagedRecord,
    RunStore,
    load_log,
    read_records,
    read_run_info,
)


def _record(sample_id: str, status: str = "scored", success: bool = True) -> dict[str, Any]:
    return {"task": "t", "id": sample_id, "epoch": 0, "status": status, "success": success}


def finished_run(folder: Path, statuses: list[str], status: str = "complete") -> RunStore:
    """A run folder as a finished run leaves it: run.json written last, with the anchor."""
    store = RunStore(folder)
    store.write_info({"fingerprint": "f", "status": "running"})
    for index, record_status in enumerate(statuses):
        store.append(_record(str(index), record_status))
    store.close()
    store.write_info({"fingerprint": "f", "status": status})
    return store


def check(folder: Path) -> chain.LogCheck:
    return load_log(folder, read_run_info(folder))[1]


def lines(folder: Path) -> list[str]:
    return (folder / SAMPLES_FILE).read_text().splitlines()


def write_lines(folder: Path, new: list[str]) -> None:
    (folder / SAMPLES_FILE).write_text("".join(line + "\n" for line in new))


def test_a_finished_log_verifies_and_run_json_holds_the_head(tmp_path: Path) -> None:
    store = finished_run(tmp_path, ["scored"] * 4)
    result = check(tmp_path)
    assert result.ok and result.records == 4
    anchor = read_run_info(tmp_path)[chain.ANCHOR_KEY]
    assert anchor["records"] == 4 and anchor["head"] == json.loads(lines(tmp_path)[-1])["chain"]
    assert store.verify().ok


def test_editing_a_record_names_its_line(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored", "model_error", "scored"])
    edited = lines(tmp_path)
    record = json.loads(edited[1])
    record["status"], record["success"] = "scored", True
    edited[1] = json.dumps(record)
    write_lines(tmp_path, edited)
    result = check(tmp_path)
    assert (result.state, result.line) == ("modified", 2)
    assert "samples.jsonl:2: the log was modified after it was written" in result.describe(
        tmp_path / SAMPLES_FILE
    )


@pytest.mark.parametrize(
    ("change", "line", "reason"),
    [
        (lambda ls: ls[:-1], 3, "removed"),  # a failure deleted from the end
        (lambda ls: [ls[0], ls[2]], 2, "checksum"),  # from the middle
        (lambda ls: [ls[1], ls[0], ls[2]], 1, "checksum"),  # reordered
        (lambda ls: [*ls, ls[0]], 4, "checksum"),  # a copy appended after the run finished
        (lambda ls: [ls[0], ls[1], json.dumps(_record("9"))], 3, "no checksum"),
    ],
)
def test_deleting_reordering_and_inserting_are_detected(
    tmp_path: Path, change: Any, line: int, reason: str
) -> None:
    finished_run(tmp_path, ["scored", "scored", "model_error"])
    write_lines(tmp_path, change(lines(tmp_path)))
    result = check(tmp_path)
    assert result.state == "modified" and result.line == line and reason in result.reason


def rechain_with_seed(folder: Path, seed: str) -> list[str]:
    """What a forger who read run.json's seed does: change a record and recompute the chain."""
    previous, out = seed, []
    for number, line in enumerate(lines(folder)):
        record = json.loads(line)
        del record["chain"]
        if number == 0:
            record["success"] = False
        line, previous = chain.chained(json.dumps(record), previous)
        out.append(line)
    return out


def test_a_rechained_forgery_still_disagrees_with_the_recorded_head(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored"] * 3)
    seed = read_run_info(tmp_path)[chain.ANCHOR_KEY]["seed"]
    write_lines(tmp_path, rechain_with_seed(tmp_path, seed))
    result = check(tmp_path)
    assert result.state == "modified" and "does not end where run.json says" in result.reason


def test_the_run_catches_a_rechained_rewrite_made_while_it_ran(tmp_path: Path) -> None:
    """run.json is rewritten by the run at the end, so only the head the running process kept
    in memory can tell: ``verify`` compares with it."""
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f", "status": "running"})
    for index in range(3):
        store.append(_record(str(index)))
    seed = read_run_info(tmp_path)[chain.ANCHOR_KEY]["seed"]
    write_lines(tmp_path, rechain_with_seed(tmp_path, seed))  # a program escaped and did this
    result = store.verify()
    store.close()
    assert result.state == "modified" and result.line == 3


def test_verify_never_raises_on_a_damaged_log(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f"})
    store.append(_record("0"))
    store.close()
    with (tmp_path / SAMPLES_FILE).open("a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    result = store.verify()
    assert (result.state, result.line) == ("modified", 2)


def test_records_chained_on_after_the_run_finished_are_detected(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored", "model_error"])
    extra, _ = chain.chained(json.dumps(_record("9")), json.loads(lines(tmp_path)[-1])["chain"])
    write_lines(tmp_path, [*lines(tmp_path), extra])
    result = check(tmp_path)
    assert (result.state, result.line) == ("modified", 3) and "added" in result.reason


def test_the_checksum_covers_the_bytes_as_written(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored", "scored"])
    edited = lines(tmp_path)
    edited[0] = edited[0].replace('"task": "t"', '"task":  "t"')  # same JSON, other bytes
    write_lines(tmp_path, edited)
    assert (check(tmp_path).state, check(tmp_path).line) == ("modified", 1)
    assert chain.split_chain(b'{"chain": "' + b"a" * 64 + b'"}') == (b"{}", "a" * 64)
    assert chain.split_chain(b'{"x": 1, "chain": "' + b"A" * 64 + b'"}') is None  # not hex
    assert chain.chained("{}", "s")[0].startswith('{"chain": "')


def test_a_killed_run_may_have_more_records_than_run_json_counts(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f", "status": "running"})  # then kill -9 after appends
    for index in range(3):
        store.append(_record(str(index)))
    store.close()
    assert check(tmp_path).ok and check(tmp_path).records == 3


def test_resume_rechains_after_moving_infra_errors_aside(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored", "infra_error", "model_error", "infra_error"], "incomplete")
    store = RunStore(tmp_path)
    done = store.prepare_resume()
    assert sorted(key[1] for key in done) == ["0", "2"]
    assert check(tmp_path).ok and check(tmp_path).records == 2
    assert [json.loads(a)["id"] for a in (tmp_path / ATTEMPTS_FILE).read_text().splitlines()] == [
        "1",
        "3",
    ]
    store.write_info({"fingerprint": "f", "status": "running"})
    store.append(_record("1"))
    store.append(_record("3"))
    store.close()
    store.write_info({"fingerprint": "f", "status": "complete"})
    assert store.verify().ok and check(tmp_path).ok
    assert [r["id"] for r in read_records(tmp_path)] == ["0", "2", "1", "3"]
    assert chain.ANCHOR_KEY not in read_records(tmp_path)[0]  # readers never see chains


@pytest.mark.parametrize("crash_at", ["replace", "final anchor"])
def test_a_kill_during_the_resume_rewrite_leaves_a_log_that_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    finished_run(tmp_path, ["scored", "infra_error", "scored"], "incomplete")
    store = RunStore(tmp_path)
    writes: list[object] = []
    real_write_anchor = RunStore._write_anchor

    def write_anchor(self: RunStore, anchor: chain.Anchor) -> None:
        writes.append(anchor)
        if crash_at == "final anchor" and len(writes) == 2:
            raise KeyboardInterrupt  # killed after the new log replaced the old one
        real_write_anchor(self, anchor)

    real_replace = os.replace

    def replace(source: Path, target: Path) -> None:
        if Path(target).name == SAMPLES_FILE:
            raise KeyboardInterrupt  # killed before the new log replaced the old one
        real_replace(source, target)

    monkeypatch.setattr(RunStore, "_write_anchor", write_anchor)
    if crash_at == "replace":
        monkeypatch.setattr("toolbench.runner.store.os.replace", replace)
    with pytest.raises(KeyboardInterrupt):
        store.prepare_resume()
    monkeypatch.undo()
    info = read_run_info(tmp_path)
    assert "pending" in info[chain.ANCHOR_KEY]
    assert check(tmp_path).ok
    assert set(RunStore(tmp_path).prepare_resume()) == {("t", "0", 0), ("t", "2", 0)}


def test_resume_refuses_a_modified_log(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored", "model_error"], "interrupted")
    edited = lines(tmp_path)
    edited[1] = edited[1].replace('"model_error"', '"scored"')
    write_lines(tmp_path, edited)
    with pytest.raises(UserError, match=r"samples.jsonl:2: the log was modified.*start a new run"):
        RunStore(tmp_path).prepare_resume()


@pytest.mark.parametrize("chained", [True, False])
def test_records_without_a_log_chain_in_run_json_are_modified(
    tmp_path: Path, chained: bool
) -> None:
    """Every run.json a run writes carries log_chain, so records beside a run.json without one
    (their chain fields kept or stripped too) are a modified log, on report and on resume."""
    finished_run(tmp_path, ["scored", "model_error"], "interrupted")
    info = read_run_info(tmp_path)
    (tmp_path / RUN_FILE).write_text(json.dumps({"fingerprint": "f", "status": info["status"]}))
    if not chained:
        stripped = [{k: v for k, v in json.loads(line).items() if k != "chain"}
                    for line in lines(tmp_path)]  # fmt: skip
        write_lines(tmp_path, [json.dumps(record) for record in stripped])
    result = check(tmp_path)
    assert (result.state, result.line, result.reason) == ("modified", 1, chain.NO_ANCHOR)
    assert "run.json has no log_chain: the chain was removed" in result.describe("x")
    before = (tmp_path / SAMPLES_FILE).read_bytes()
    with pytest.raises(UserError, match=r"samples.jsonl:1: .*no log_chain.*start a new run"):
        RunStore(tmp_path).prepare_resume()
    assert (tmp_path / SAMPLES_FILE).read_bytes() == before


@pytest.mark.parametrize("empty_log", [True, False])
def test_a_run_killed_before_its_first_record_resumes(tmp_path: Path, empty_log: bool) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f", "status": "running"})  # then kill -9
    store.close()
    if empty_log:
        (tmp_path / SAMPLES_FILE).write_bytes(b"")
    anchor = read_run_info(tmp_path)[chain.ANCHOR_KEY]
    assert anchor["records"] == 0 and anchor["head"] == anchor["seed"]
    assert check(tmp_path).ok and check(tmp_path).records == 0
    store = RunStore(tmp_path)
    assert len(store.prepare_resume()) == 0
    store.write_info({"fingerprint": "f", "status": "running"})
    store.append(_record("0"))
    store.close()
    store.write_info({"fingerprint": "f", "status": "complete"})
    assert store.verify().ok and check(tmp_path).ok and check(tmp_path).records == 1
    assert read_run_info(tmp_path)[chain.ANCHOR_KEY]["seed"] == anchor["seed"]


@pytest.mark.parametrize("empty_log", [True, False])
def test_an_empty_log_beside_a_hand_made_run_json_resumes_as_new(
    tmp_path: Path, empty_log: bool
) -> None:
    (tmp_path / RUN_FILE).write_text(json.dumps({"fingerprint": "f", "status": "interrupted"}))
    if empty_log:
        (tmp_path / SAMPLES_FILE).write_bytes(b"")
    assert check(tmp_path).ok and check(tmp_path).records == 0
    store = RunStore(tmp_path)
    store.check_fingerprint("f")
    assert len(store.prepare_resume()) == 0
    store.write_info({"fingerprint": "f", "status": "running"})
    assert read_run_info(tmp_path)[chain.ANCHOR_KEY]["records"] == 0  # a fresh chain
    store.append(_record("0"))
    store.close()
    store.write_info({"fingerprint": "f", "status": "complete"})
    assert store.verify().ok and check(tmp_path).ok and check(tmp_path).records == 1


def test_a_chained_log_whose_anchor_was_removed_is_modified(tmp_path: Path) -> None:
    finished_run(tmp_path, ["scored"])
    info = read_run_info(tmp_path)
    del info[chain.ANCHOR_KEY]
    (tmp_path / RUN_FILE).write_text(json.dumps(info))
    assert check(tmp_path).state == "modified"
    info[chain.ANCHOR_KEY] = {"seed": 1}
    (tmp_path / RUN_FILE).write_text(json.dumps(info))
    assert check(tmp_path).state == "modified"
    with pytest.raises(UserError, match="log_chain is malformed"):
        RunStore(tmp_path).prepare_resume()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "scored", "x": NaN}', "NaN"),
        (b"\xff\xfe{}", "damaged record"),
        (b"[1, 2]", "JSON object"),
        (b'{"task": "t", "id": "1", "epoch": -1, "status": "scored"}', "epoch"),
        (b'{"task": "t", "id": true, "epoch": 0, "status": "scored"}', "id must"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "done"}', "status must"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "scored", "metrics": {"f": "x"}}', "met"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "scored", "details": []}', "details"),
        (b'{"task": 5, "id": "1", "epoch": 0, "status": "scored"}', "task must"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "scored", "success": 2}', "success"),
        (b'{"task": "t", "id": "1", "epoch": 0, "status": "scored", "message": 1}', "message"),
        (b'"' + b"x" * (4_000_001) + b'"', "size cap"),
    ],
)
def test_hostile_lines_are_errors_naming_file_and_line(
    tmp_path: Path, line: bytes, message: str
) -> None:
    good = json.dumps(_record("0")).encode()
    (tmp_path / SAMPLES_FILE).write_bytes(good + b"\n\n" + line + b"\n")
    with pytest.raises(DamagedRecord, match=f"samples.jsonl:3: .*{message}") as caught:
        read_records(tmp_path)
    assert caught.value.line == 3
