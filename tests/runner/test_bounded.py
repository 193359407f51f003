"""Writing a record never raises and always yields one strict, bounded JSON line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core import bounded as b
from toolbench.core.solve import CallRecord, SampleState, one_line_text
from toolbench.runner.engine import make_record
from toolbench.runner.store import SAMPLES_FILE, RunStore, load_log, read_records
from toolbench.types import Outcome, Sample, Status


def strict_loads(line: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the log: not strict JSON")

    return json.loads(line, parse_constant=refuse)


def _base(**extra: Any) -> dict[str, Any]:
    return {"task": "t", "id": "0", "epoch": 0, "status": "scored", "success": False, **extra}


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def write_and_read(tmp_path: Path, record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f"})
    store.append(record)
    store.close()
    store.write_info({"fingerprint": "f", "status": "complete"})
    line = (tmp_path / SAMPLES_FILE).read_text(encoding="ascii").rstrip("\n")
    assert "\n" not in line and len(line) <= b.MAX_RECORD_BYTES
    strict_loads(line)
    info = json.loads((tmp_path / "run.json").read_text())
    records, check = load_log(tmp_path, info)
    assert check.ok, check
    return line, records[0]


def test_deep_nesting_is_cut_at_a_fixed_depth(tmp_path: Path) -> None:
    deep: list[Any] = []
    for _ in range(1_000):
        deep = [deep]
    _, record = write_and_read(tmp_path, _base(details={"state": deep}))
    state = record["details"]["state"]
    assert _depth(state) <= b.MAX_DEPTH
    flat = json.dumps(state)
    assert f"[cut: nested deeper than {b.MAX_DEPTH}]" in flat


def test_cycles_and_exponential_fan_out_are_bounded(tmp_path: Path) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    fan: list[Any] = []
    fan.extend([fan] * 50)  # 50^32 paths if walked naively
    walked = json.dumps(b.bounded(fan))
    assert "[cut: 50 items]" in walked and len(walked) < 40 * b.MAX_NODES
    _, record = write_and_read(tmp_path, _base(details={"cycle": cycle, "fan": fan}))
    assert record["details"]["cut"].startswith("dropped")  # 100,000 values: over the byte cap


def test_nan_and_infinities_become_null(tmp_path: Path) -> None:
    metrics = {"f1": math.nan, "precision": math.inf, "recall": -math.inf, "ok": 0.5}
    line, record = write_and_read(tmp_path, _base(metrics=metrics, details={"x": [math.nan]}))
    assert "NaN" not in line and "Infinity" not in line
    assert record["metrics"] == {"f1": None, "precision": None, "recall": None, "ok": 0.5}
    assert record["details"]["x"] == [None]


def test_huge_ints_odd_keys_and_objects(tmp_path: Path) -> None:
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no")

    details = {
        "big": 10**5000,  # str() of it raises ValueError on Python >= 3.11
        1: "int key",
        None: "none key",
        (1, 2): "tuple key",
        2.5: "float key",
        10**400: "huge key",
        "set": {1},
        "bytes": b"\x00\xff",
        "obj": Unprintable(),
        "path": Path("/x"),
    }
    _, record = write_and_read(tmp_path, _base(details=details))
    d = record["details"]
    assert d["big"].startswith("[cut: integer of")
    assert d["1"] == "int key" and d["null"] == "none key" and d["(1, 2)"] == "tuple key"
    assert d["2.5"] == "float key" and d["obj"] == "<Unprintable>" and d["path"] == "/x"
    assert any(key.startswith("[cut: integer of") for key in d)


def test_lone_surrogates_are_replaced_and_pairs_joined(tmp_path: Path) -> None:
    _, record = write_and_read(
        tmp_path, _base(message="a\ud800b", prediction="\ud83d\ude00", details={"\udfff": 1})
    )
    assert record["message"] == "a\ufffdb"
    assert record["prediction"] == "\U0001f600"
    assert record["details"] == {"\ufffd": 1}


def test_giant_strings_and_lists_are_cut(tmp_path: Path) -> None:
    details = {"text": "x" * 5_000_000, "items": list(range(1_000_000))}
    _, record = write_and_read(tmp_path, _base(details=details))
    assert len(record["details"]["text"]) == b.MAX_STRING_CHARS
    assert record["details"]["text"].endswith("[cut: 5000000 characters]")
    assert len(record["details"]["items"]) == b.MAX_ITEMS


def test_a_record_over_the_byte_cap_drops_details_then_shrinks(tmp_path: Path) -> None:
    wide = {f"k{i}": "\u00e9" * b.MAX_STRING_CHARS for i in range(100)}  # 6 bytes a char
    _, record = write_and_read(tmp_path, _base(details=wide, message="kept"))
    assert record["details"] == {"cut": f"dropped: the record was over {b.MAX_RECORD_BYTES} bytes"}
    assert record["message"] == "kept"
    many = {f"k{i}": "\u00e9" * b.MAX_STRING_CHARS for i in range(100)}
    _, record = write_and_read(tmp_path / "2", _base(metrics={}, prediction="p", extra=many))
    assert record["task"] == "t" and record["status"] == "scored"


def test_make_record_keeps_messages_on_one_bounded_line() -> None:
    sample = Sample(id="7", task="t", query="q", labels=("x",))
    outcome = Outcome(status=Status.MODEL_ERROR, message="line one\nline two\r\n" * 100_000)
    state = SampleState(sample=sample, epoch=0, prediction="y" * 100_000)
    state.calls.append(CallRecord("answer", "h", "y" * 100_000, [], 1, 2, 0.1, False, "stop"))
    record = make_record(state, outcome)
    assert "\n" not in record["message"] and len(record["message"]) <= 2_000
    assert len(record["prediction"]) == 20_000
    assert record["prediction"].endswith("[cut: 100000 characters]")
    assert len(record["calls"][0]["text"]) == 4_000
    assert one_line_text(None) == "<NoneType>"


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=None), max_size=30),
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(
            st.one_of(st.text(max_size=5), st.integers(), st.none(), st.booleans()),
            children,
            max_size=5,
        )
    ),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)
@given(details=JSONISH, message=st.text(st.characters(codec=None, categories=None)))
def test_any_record_round_trips_as_written(details: Any, message: str) -> None:
    """What the reader returns is exactly the bounded record, whatever went in."""
    record = _base(details={"v": details}, message=message, metrics={"f1": 0.5})
    safe = b.safe_record(record)
    line = b.to_line(safe)
    assert strict_loads(line) == safe
    assert b.safe_record(record) == safe  # deterministic


def test_reading_returns_what_was_appended(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append(_base(details={"t": (1, 2)}))
    store.close()
    assert read_records(tmp_path) == [_base(details={"t": [1, 2]})]


@pytest.mark.parametrize("limit", [0, 5, 40])
def test_bounded_text_never_exceeds_its_limit(limit: int) -> None:
    assert len(b.bounded_text("z" * 1_000, limit)) <= max(limit, len("...[cut: 1000 characters]"))


def test_what_is_written_passes_the_reader_checks(tmp_path: Path) -> None:
    """Found by benchmarks/fuzz_extract.py: a metric that was not a number was written, then
    refused on reading. Checked fields now keep their types."""
    record = _base(
        metrics={"f1": "high", "x": 10**40, "y": [1], "ok": 1.0},
        message=["not", "a", "string"],
        details=["not a mapping"],
    )
    _, read = write_and_read(tmp_path, record)
    assert read["metrics"] == {"f1": None, "x": None, "y": None, "ok": 1.0}
    assert read["message"] == '["not", "a", "string"]'
    assert read["details"] == {"value": ["not a mapping"]}
