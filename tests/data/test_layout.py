import json
from pathlib import Path

import pytest

from toolbench.data.examples import format_example, parse_example
from toolbench.data.layout import read_docs, read_test_jsonl, write_task_folder
from toolbench.errors import UserError


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_ids_are_line_numbers_unless_given(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "test.jsonl",
        [
            json.dumps({"prompt": "q0", "completion": ["A()"]}),
            json.dumps({"prompt": "q1", "completion": ["B()"], "id": "s-7", "extra": 1}),
        ],
    )
    samples = read_test_jsonl(path, "t")
    assert [s.id for s in samples] == ["0", "s-7"]
    assert samples[1].fields == {"extra": 1}
    assert samples[0].source.endswith("test.jsonl:1")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        (json.dumps({"completion": ["A()"]}), "'prompt'"),
        (json.dumps({"prompt": "q", "completion": []}), "'completion'"),
        (json.dumps({"prompt": "q", "completion": [3]}), "'completion'"),
        (json.dumps(["prompt"]), "JSON object"),
        ("", "empty line"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(
        tmp_path / "test.jsonl", [json.dumps({"prompt": "ok", "completion": ["A()"]}), line]
    )
    with pytest.raises(UserError, match=message) as info:
        read_test_jsonl(path, "t")
    assert f"{path}:2" in str(info.value)


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    line = json.dumps({"prompt": "q", "completion": ["A()"], "id": 1})
    with pytest.raises(UserError, match="duplicate"):
        read_test_jsonl(_write(tmp_path / "test.jsonl", [line, line]), "t")


def test_docs_are_sorted_naturally_and_store_files_ignored(tmp_path: Path) -> None:
    for name in ("10_0.txt", "2_0.txt", "document_store.db", "1_0.txt"):
        (tmp_path / name).write_text(name)
    assert [d.name for d in read_docs(tmp_path)] == ["1_0.txt", "2_0.txt", "10_0.txt"]


def test_example_round_trip_and_original_header() -> None:
    text = format_example("Find homes in Austin", 'API.set_location("Austin")\nAPI.search()')
    assert parse_example(text) == (
        "Find homes in Austin",
        'API.set_location("Austin")\nAPI.search()',
    )
    assert parse_example("Task: q\nActions:\nA()\n") == ("q", "A()")
    assert parse_example("no header") is None


def test_write_task_folder_is_byte_stable(tmp_path: Path) -> None:
    records = [{"prompt": "q", "completion": ["A()"]}]
    write_task_folder(tmp_path / "a", records, {"f": "# doc\nA()"}, ["Task: q\nAction:\nA()"])
    write_task_folder(tmp_path / "b", records, {"f": "# doc\nA()"}, ["Task: q\nAction:\nA()"])
    for rel in ("test.jsonl", "functions/f", "examples/0.txt"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
