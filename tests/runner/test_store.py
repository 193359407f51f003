import json
from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.runner.store import ATTEMPTS_FILE, SAMPLES_FILE, RunStore, read_records


def _record(sample_id: str, status: str = "scored", epoch: int = 0) -> dict:
    return {"task": "t", "id": sample_id, "epoch": epoch, "status": status, "success": True}


def test_append_is_flushed_immediately(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "abc"})
    store.append(_record("0"))
    # Readable by another reader before close: a kill -9 now would keep it.
    assert read_records(tmp_path) == [_record("0")]
    store.close()


def _written(folder: Path, records: list[dict]) -> None:
    """A run folder as a run killed after appending ``records`` leaves it."""
    store = RunStore(folder)
    store.write_info({"fingerprint": "abc", "status": "running"})
    for record in records:
        store.append(record)
    store.close()


def test_torn_last_line_is_cut_on_resume(tmp_path: Path) -> None:
    path = tmp_path / SAMPLES_FILE
    _written(tmp_path, [_record("0")])
    with path.open("a") as handle:
        handle.write('{"task": "t", "id": "1", "ep')
    store = RunStore(tmp_path)
    done = store.prepare_resume()
    assert list(done) == [("t", "0", 0)]
    assert path.read_text().endswith("\n")
    store.append(_record("1"))
    store.close()
    assert [r["id"] for r in read_records(tmp_path)] == ["0", "1"]


def test_infra_errors_are_moved_aside_for_retry(tmp_path: Path) -> None:
    _written(tmp_path, [_record("0"), _record("1", "infra_error"), _record("2", "model_error")])
    done = RunStore(tmp_path).prepare_resume()
    assert set(done) == {("t", "0", 0), ("t", "2", 0)}
    assert [r["id"] for r in read_records(tmp_path)] == ["0", "2"]
    attempts = (tmp_path / ATTEMPTS_FILE).read_text().splitlines()
    assert json.loads(attempts[0])["id"] == "1"


def test_fingerprint_mismatch_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "aaa"})
    store.check_fingerprint("aaa")
    with pytest.raises(UserError, match="different configuration"):
        store.check_fingerprint("bbb")


def test_api_keys_never_reach_run_json() -> None:
    from toolbench.runner.run import redact_command

    argv = ["toolbench", "run", "x", "--api-key", "sk-secret", "--api-key=sk-other", "--model", "m"]
    redacted = redact_command(argv)
    assert "sk-secret" not in " ".join(redacted) and "sk-other" not in " ".join(redacted)
    assert redacted[-2:] == ["--model", "m"]


def test_records_stay_one_line_for_any_reader(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append({**_record("0"), "prediction": "a\u2028b\rc\u0085d\u00e9"})
    store.close()
    text = (tmp_path / SAMPLES_FILE).read_text(encoding="utf-8")
    assert len(text.splitlines()) == 1  # str.splitlines splits on U+2028, \r, U+0085 ...
    assert json.loads(text)["prediction"] == "a\u2028b\rc\u0085d\u00e9"


@pytest.mark.parametrize(
    "content",
    [b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe{", b"[1]", b'{"a": NaN'],
)
def test_a_hostile_run_json_is_a_user_error(tmp_path: Path, content: bytes) -> None:
    from toolbench.runner.store import read_run_info

    (tmp_path / "run.json").write_bytes(content)
    with pytest.raises(UserError, match=r"run.json: .*(damaged|JSON object)"):
        read_run_info(tmp_path)


def test_the_end_of_a_run_reads_its_log_once_with_the_same_answers(tmp_path: Path) -> None:
    """``finished_log`` gives what ``read_records`` and ``verify`` give, from one read (its
    check comes after the pass); a record changed behind the store's back is still caught."""
    store = RunStore(tmp_path)
    store.write_info({"status": "running"})
    for sample_id in ("0", "1", "2"):
        store.append(_record(sample_id))
    store.close()
    log = store.finished_log()
    records = list(log)
    assert records == read_records(tmp_path)
    assert log.check == store.verify() and log.check.ok
    path = tmp_path / SAMPLES_FILE
    path.write_text(path.read_text().replace('"id": "1"', '"id": "9"'))
    log = store.finished_log()
    records, check = list(log), log.check
    assert [r["id"] for r in records] == ["0", "9", "2"]
    assert not check.ok and check.line == 2 and check == store.verify()


@pytest.mark.parametrize(
    "line",
    [
        json.dumps(_record("0")).encode(),
        b"\xef\xbb\xbf" + json.dumps(_record("1")).encode(),  # UTF-8 byte-order mark
        json.dumps(_record("2")).encode("utf-16"),
        json.dumps(_record("\u00e9")).encode("utf-8"),
        b'{"task": "t", "id": "0", "epoch": 0, "status": "scored", "success": NaN}',
        b'{"task": "t", "id": "\xff"}',
        b"[" * 3000 + b"]" * 3000,
    ],
)
def test_a_log_line_reads_as_json_loads_reads_it(tmp_path: Path, line: bytes) -> None:
    """The log reader's decoder is built once; it must take back exactly what ``json.loads``
    (with NaN refused) took back, and refuse the rest as a damaged record."""
    from toolbench.runner import store as store_module

    try:
        expected = json.loads(line, parse_constant=store_module._refuse_constant)
    except (ValueError, RecursionError):
        expected = None
    try:
        got = store_module.parse_line(tmp_path / SAMPLES_FILE, 1, line)
    except UserError:
        got = None
    if store_module.record_problem(expected) if expected is not None else False:
        expected = None
    assert got == expected


def test_reading_allows_exactly_the_longest_line_writing_produces(tmp_path: Path) -> None:
    """A record is bounded to leave room for its chain field, so a written line (newline not
    counted) is at most MAX_RECORD_BYTES; reading refuses anything longer."""
    from toolbench.core.bounded import MAX_RECORD_BYTES
    from toolbench.runner import chain
    from toolbench.runner import store as store_module

    widest = '{"p": "' + "x" * (MAX_RECORD_BYTES - chain.CHAIN_RESERVE - 9) + '"}'
    assert len(widest) == MAX_RECORD_BYTES - chain.CHAIN_RESERVE
    assert len(chain.chained(widest, chain.new_seed())[0]) <= MAX_RECORD_BYTES
    head = b'{"task": "t", "id": "0", "epoch": 0, "status": "scored", "p": "'
    line = head + b"x" * (MAX_RECORD_BYTES - len(head) - 2) + b'"}'
    assert len(line) == MAX_RECORD_BYTES
    path = tmp_path / SAMPLES_FILE
    assert store_module.parse_line(path, 1, line)["id"] == "0"
    with pytest.raises(UserError, match=r"samples\.jsonl:1: record of 1000001 bytes is over"):
        store_module.parse_line(path, 1, line[:-2] + b'x"}')
