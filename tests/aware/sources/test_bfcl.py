from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.aware.sources import FIXTURES
from toolbench.aware.schema import dump_line, read_instances, write_instances
from toolbench.aware.sources.bfcl import (
    MISSING_IRRELEVANT,
    category_of,
    json_schema,
    load_bfcl,
)
from toolbench.errors import UserError

FOLDER = FIXTURES / "bfcl"


@pytest.fixture(scope="module")
def loaded() -> dict[str, Any]:
    return {instance.id: instance for instance in load_bfcl(FOLDER)}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A writable copy of the BFCL fixture folder."""
    target = tmp_path / "data"
    shutil.copytree(FOLDER, target)
    return target


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


# ---------------------------------------------------------------------------------------------
# irrelevance


def test_irrelevance_records_are_incomplete_as_bfcl_labels_them(loaded: dict[str, Any]) -> None:
    instance = loaded["bfcl-irrelevance_0"]
    assert instance.source == "bfcl"
    assert instance.label == "incomplete" and instance.manipulation == "tool_removal"
    assert instance.twin_id is None
    assert instance.verification.status == "accepted" and instance.verification.by == "source"
    assert instance.relevant_apis == [] and instance.gold_calls == []
    assert [(t.role, t.content) for t in instance.dialogue] == [
        ("user", "How many hours of sleep does a teenager need each night?")
    ]
    provenance = instance.provenance
    assert provenance.missing == MISSING_IRRELEVANT
    assert provenance.generator == "bfcl:irrelevance"
    assert provenance.notes == {"category": "irrelevance"}
    assert provenance.original_id == "irrelevance_0"
    assert provenance.source_file == "BFCL_v4_irrelevance.json"


def test_function_docs_become_json_schema(loaded: dict[str, Any]) -> None:
    route = loaded["bfcl-irrelevance_2"].apis[0].parameters
    assert route["type"] == "object" and route["required"] == ["origin"]
    origin = route["properties"]["origin"]
    assert origin["type"] == "object"
    assert origin["properties"]["lat"] == {"type": "number", "description": "Latitude."}
    assert origin["required"] == ["lat", "lon"]
    waypoints = route["properties"]["waypoints"]
    assert waypoints["type"] == "array" and waypoints["items"]["type"] == "array"
    assert waypoints["items"]["items"] == {"type": "number"}
    assert "type" not in route["properties"]["options"]  # "any"
    assert route["properties"]["vehicle"]["x-bfcl-type"] == "Vehicle"
    quote = loaded["bfcl-irrelevance_1"].apis[0].parameters["properties"]["exchange"]
    assert quote["enum"] == ["NYSE", "NASDAQ", "LSE"]
    units = loaded["bfcl-irrelevance_1"].apis[1].parameters["properties"]["precision"]
    assert units == {
        "type": "integer",
        "description": "Decimal places. Default is 2.",
        "default": 2,
    }
    assert json_schema({"type": "dict", "anyOf": [{"type": "float"}]}) == {
        "type": "object",
        "anyOf": [{"type": "number"}],
    }


def test_a_function_listed_twice_identically_is_offered_once(loaded: dict[str, Any]) -> None:
    assert [api.name for api in loaded["bfcl-irrelevance_3"].apis] == ["book_table"]


def test_live_records_keep_system_messages_in_notes(loaded: dict[str, Any]) -> None:
    first = loaded["bfcl-live_irrelevance_0-0-0"]
    assert [t.role for t in first.dialogue] == ["user"]
    assert first.provenance.notes["system"] == [
        "You are a helpful travel assistant. Answer briefly."
    ]
    assert first.provenance.generator == "bfcl:live_irrelevance"
    chat = loaded["bfcl-live_irrelevance_1-0-1"]
    assert [t.role for t in chat.dialogue] == ["user", "assistant", "user"]
    post = loaded["bfcl-live_irrelevance_2-1-0"].apis[0]
    assert post.name == "requests.post"
    assert post.parameters["properties"]["json"]["type"] == "object"
    assert post.parameters["properties"]["timeout"]["type"] == "number"


# ---------------------------------------------------------------------------------------------
# multi-turn missing parameters


def test_miss_param_pairs_the_gap_with_the_turn_that_fills_it(loaded: dict[str, Any]) -> None:
    incomplete = loaded["bfcl-multi_turn_miss_param_0"]
    complete = loaded["bfcl-multi_turn_miss_param_0-complete"]
    assert incomplete.label == "incomplete" and incomplete.manipulation == "slot_removal"
    assert incomplete.twin_id == complete.id
    assert complete.label == "complete" and complete.manipulation == "none"
    assert [(t.role, t.content) for t in incomplete.dialogue] == [
        ("user", "Go into the 'notes' folder and list everything in it, hidden files included."),
        ("tool", "cd(folder='notes')"),
        ("tool", "ls(a=True)"),
        ("user", "Rename the meeting notes file."),
    ]
    assert incomplete.dialogue[2].tool_name == "ls"
    assert incomplete.dialogue[2].tool_arguments == {"a": True}
    assert (
        complete.dialogue
        == [
            *incomplete.dialogue,
            complete.dialogue[-1],
        ]
        and complete.dialogue[-1].content == "Call it 'standup_2024-05-02.txt'."
    )
    gold = ["mv(source='meeting.txt', destination='standup_2024-05-02.txt')"]
    assert complete.gold_calls == incomplete.gold_calls == gold
    assert complete.relevant_apis == ["mv"] and incomplete.relevant_apis == []
    assert incomplete.apis == complete.apis
    provenance = incomplete.provenance
    assert provenance.removed_text == ["Call it 'standup_2024-05-02.txt'."]
    assert "standup_2024-05-02" in provenance.missing
    assert provenance.generator == "bfcl:multi_turn_miss_param"
    assert provenance.notes["turn"] == 1
    # excluded_function is kept, not applied: BFCL offers every function of the classes.
    assert provenance.notes["excluded_function"] == ["cp"]
    assert "cp" in {api.name for api in incomplete.apis}
    assert incomplete.verification.by == "source"


def test_miss_param_docs_come_from_every_involved_class(loaded: dict[str, Any]) -> None:
    names = [api.name for api in loaded["bfcl-multi_turn_miss_param_1"].apis]
    assert names[:5] == ["add", "mean", "power", "square_root", "logarithm"]
    assert "cd" in names
    cd = next(a for a in loaded["bfcl-multi_turn_miss_param_1"].apis if a.name == "cd")
    assert cd.origin["response"]["type"] == "dict"  # BFCL's own schema, kept as it is


def test_several_gaps_give_several_pairs_with_positional_arguments_named(
    loaded: dict[str, Any],
) -> None:
    assert "bfcl-multi_turn_miss_param_2" not in loaded
    first = loaded["bfcl-multi_turn_miss_param_2-turn0"]
    second = loaded["bfcl-multi_turn_miss_param_2-turn2"]
    assert [t.content for t in first.dialogue] == ["Make a new folder for me."]
    assert second.twin_id == "bfcl-multi_turn_miss_param_2-turn2-complete"
    assert [t.role for t in second.dialogue] == ["user", "user", "tool", "user"]
    complete = loaded[second.twin_id]
    assert complete.relevant_apis == ["cd", "touch", "echo"]
    assert complete.gold_calls[0] == "cd('drafts')"


# ---------------------------------------------------------------------------------------------
# multi-turn missing functions


def test_miss_func_holds_the_function_out_of_the_incomplete_twin(loaded: dict[str, Any]) -> None:
    incomplete = loaded["bfcl-multi_turn_miss_func_0"]
    complete = loaded["bfcl-multi_turn_miss_func_0-complete"]
    assert incomplete.manipulation == "tool_removal" and incomplete.twin_id == complete.id
    offered = {api.name for api in incomplete.apis}
    assert "sort" not in offered and "post_tweet" in offered
    assert {api.name for api in complete.apis} == offered | {"sort"}
    assert incomplete.provenance.removed_apis == ["sort"]
    assert "sort" in incomplete.provenance.missing
    assert incomplete.dialogue == complete.dialogue
    assert [t.content for t in complete.dialogue][-1] == "Sort that file line by line."
    assert complete.gold_calls == ["sort('summary.txt')"]
    assert complete.relevant_apis == ["sort"]
    assert incomplete.provenance.notes["missed_function"] == {"2": ["sort"]}


def test_functions_missed_later_are_absent_from_both_twins(loaded: dict[str, Any]) -> None:
    early = loaded["bfcl-multi_turn_miss_func_1-turn2"]
    early_complete = loaded["bfcl-multi_turn_miss_func_1-turn2-complete"]
    assert "logarithm" not in {a.name for a in early.apis + early_complete.apis}
    late = loaded["bfcl-multi_turn_miss_func_1-turn4"]
    assert [a.name for a in late.apis] == ["add", "mean", "power", "square_root"]
    calls = [(t.tool_name, t.tool_arguments) for t in late.dialogue if t.role == "tool"]
    assert calls == [("add", {"a": 7, "b": 5}), ("square_root", {"number": 12, "precision": 3})]
    assert loaded["bfcl-multi_turn_miss_func_1-turn4-complete"].relevant_apis == ["logarithm"]


# ---------------------------------------------------------------------------------------------
# folders, order, determinism


def test_folder_reads_recognised_files_in_order_and_skips_other_categories(
    loaded: dict[str, Any],
) -> None:
    files = list(dict.fromkeys(i.provenance.source_file for i in loaded.values()))
    assert files == [
        "BFCL_v4_irrelevance.json",
        "BFCL_v4_live_irrelevance.json",
        "BFCL_v4_multi_turn_miss_func.json",
        "BFCL_v4_multi_turn_miss_param.json",
    ]
    assert len(loaded) == 4 + 3 + 6 + 8
    assert not any("simple" in i.id for i in loaded.values())


def test_output_is_deterministic_and_valid_on_reload(tmp_path: Path) -> None:
    first = [dump_line(i) for i in load_bfcl(FOLDER)]
    assert first == [dump_line(i) for i in load_bfcl(FOLDER)]
    out = tmp_path / "bfcl.jsonl"
    write_instances(out, load_bfcl(FOLDER))
    assert [dump_line(i) for i in read_instances(out)] == first


def test_single_files_load_alone() -> None:
    only = load_bfcl(FOLDER / "BFCL_v4_multi_turn_miss_param.json")
    assert {i.provenance.notes["category"] for i in only} == {"multi_turn_miss_param"}
    assert category_of(Path("BFCL_v3_live_irrelevance.json")) == "live_irrelevance"
    assert category_of(Path("BFCL_v4_irrelevance.sample.jsonl")) == "irrelevance"
    assert category_of(Path("BFCL_v4_live_relevance.json")) is None


# ---------------------------------------------------------------------------------------------
# bad input


def _one_line_error(path_part: str, message: str, run: Any) -> None:
    with pytest.raises(UserError) as caught:
        run()
    text = str(caught.value)
    assert path_part in text and message in text, text
    assert "\n" not in text


def test_unrecognised_file_names(tmp_path: Path) -> None:
    path = tmp_path / "BFCL_v4_simple_python.json"
    shutil.copy(FOLDER / "BFCL_v4_simple_python.json", path)
    _one_line_error(str(path), "not a BFCL category this loader reads", lambda: load_bfcl(path))
    _one_line_error(str(tmp_path), "no BFCL file of a category", lambda: load_bfcl(tmp_path))
    stray = tmp_path / "my_notes.json"
    stray.write_text("{}\n")
    _one_line_error(str(stray), "not a BFCL data file name", lambda: load_bfcl(tmp_path))
    _one_line_error("nowhere", "no such file or folder", lambda: load_bfcl(tmp_path / "nowhere"))


def test_bad_json_line_names_the_line(copy: Path) -> None:
    path = copy / "BFCL_v4_irrelevance.json"
    path.write_text(path.read_text().splitlines()[0] + "\n{not json\n")
    _one_line_error(f"{path}:line 2", "not valid JSON", lambda: load_bfcl(path))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": None}, ":line 1 (id=irrelevance_0): missing the 'question' field"),
        ({"function": {"name": "x"}}, "'function' must be a list"),
        ({"function": [{"description": "nameless"}]}, "function 0: each function doc must be"),
        ({"question": [[{"role": "robot", "content": "hi"}]]}, "message role 'robot'"),
        ({"question": [[{"role": "user"}]]}, "a user message has no text 'content'"),
        ({"question": [[]]}, "'question' holds no user or assistant message"),
    ],
)
def test_bad_irrelevance_records(copy: Path, change: dict[str, Any], message: str) -> None:
    path = copy / "BFCL_v4_irrelevance.json"
    rows = _lines(path)
    rows[0].update(change)
    _write_lines(path, [{k: v for k, v in rows[0].items() if v is not None}])
    _one_line_error(str(path), message, lambda: load_bfcl(path))


def test_missing_ground_truth_names_where_it_was_looked_for(copy: Path) -> None:
    path = copy / "BFCL_v4_multi_turn_miss_param.json"
    (copy / "possible_answer" / path.name).unlink()
    expected = str(copy / "possible_answer" / path.name)
    _one_line_error(expected, "ground truth is missing; looked for", lambda: load_bfcl(path))


def test_missing_function_docs_name_where_they_were_looked_for(copy: Path) -> None:
    path = copy / "BFCL_v4_multi_turn_miss_func.json"
    (copy / "multi_turn_func_doc" / "posting_api.json").unlink()
    _one_line_error(
        "posting_api.json", "function docs of TwitterAPI are missing", lambda: load_bfcl(path)
    )
    shutil.rmtree(copy / "multi_turn_func_doc")
    _one_line_error(
        str(copy / "multi_turn_func_doc"), "function docs are missing", lambda: load_bfcl(path)
    )


def test_answers_and_docs_are_also_found_one_folder_up(tmp_path: Path) -> None:
    question = tmp_path / "question"
    question.mkdir()
    shutil.copy(FOLDER / "BFCL_v4_multi_turn_miss_func.json", question)
    shutil.copytree(FOLDER / "possible_answer", tmp_path / "possible_answer")
    shutil.copytree(FOLDER / "multi_turn_func_doc", tmp_path / "multi_turn_func_doc")
    assert len(load_bfcl(question)) == 6


@pytest.mark.parametrize(
    ("file", "record_change", "answer_change", "message"),
    [
        (
            "miss_param",
            {"involved_classes": ["Spaceship"]},
            None,
            "unknown involved class 'Spaceship'",
        ),
        ("miss_param", {"id": "multi_turn_miss_param_99"}, None, "no ground truth with id"),
        ("miss_param", None, {"ground_truth": [["ls()"]]}, "1 ground-truth turns for 4 question"),
        (
            "miss_param",
            None,
            {"ground_truth": [["ls()"], ["ls()"], ["ls()"], ["ls()"]]},
            "no turn with ground truth []",
        ),
        (
            "miss_param",
            None,
            {"ground_truth": [["ls()"], [], ["launch(rocket='x')"], []]},
            "the ground truth calls 'launch'",
        ),
        ("miss_param", None, {"ground_truth": "cd"}, "'ground_truth' must be a list"),
        ("miss_func", {"missed_function": {"1": ["sort"]}}, None, "must be an empty question turn"),
        ("miss_func", {"missed_function": {"2": ["fly"]}}, None, "missed function(s) fly not in"),
        ("miss_func", {"missed_function": ["sort"]}, None, "'missed_function' must map a turn"),
    ],
)
def test_bad_multi_turn_records(
    copy: Path,
    file: str,
    record_change: dict[str, Any] | None,
    answer_change: dict[str, Any] | None,
    message: str,
) -> None:
    path = copy / f"BFCL_v4_multi_turn_{file}.json"
    answers = copy / "possible_answer" / path.name
    record, answer = _lines(path)[0], _lines(answers)[0]
    record.update(record_change or {})
    answer.update(answer_change or {})
    _write_lines(path, [record])
    _write_lines(answers, [answer])
    _one_line_error(str(copy), message, lambda: load_bfcl(path))
