from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.aware.sources import FIXTURES
from toolbench.aware.schema import dump_line, read_instances, write_instances
from toolbench.aware.sources.apibank import (
    load_apibank,
    parse_dialogue,
    parse_expected_output,
    read_apibank,
)
from toolbench.errors import UserError

LEVEL1 = FIXTURES / "apibank" / "level-1-api.json"


@pytest.fixture(scope="module")
def level1() -> dict[str, Any]:
    return {instance.id: instance for instance in load_apibank(LEVEL1)}


def test_every_record_is_a_complete_instance(level1: dict[str, Any]) -> None:
    assert len(level1) == 8
    for instance in level1.values():
        assert instance.source == "apibank"
        assert instance.label == "complete" and instance.manipulation == "none"
        assert instance.verification.status == "accepted" and instance.verification.by == "source"
        assert instance.relevant_apis[0] in {api.name for api in instance.apis}
        assert len(instance.gold_calls) == 1


def test_ids_and_provenance_name_the_dialogue_file_and_record() -> None:
    first = load_apibank(LEVEL1)[0]
    assert first.id == "apibank-GetWeatherForecast-QueryAirQuality-level-1-1-0"
    assert first.provenance.original_id == "0"
    assert first.provenance.source_file == "level-1-api.json"
    assert first.provenance.generator == "apibank-loader"
    assert first.provenance.notes == {"file": "GetWeatherForecast-QueryAirQuality-level-1-1.jsonl"}


def test_dialogue_keeps_multi_line_utterances_and_earlier_requests(level1: dict[str, Any]) -> None:
    instance = level1["apibank-GetWeatherForecast-QueryAirQuality-level-1-1-2"]
    roles = [turn.role for turn in instance.dialogue]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert instance.dialogue[4].content == (
        "Thanks. One more thing:\nmy daughter has asthma, so\nhow is the air in Lisbon today?"
    )
    tool = instance.dialogue[2]
    assert tool.tool_name == "GetWeatherForecast"
    assert tool.tool_arguments == {"city": "Lisbon", "date": "2023-05-14"}
    assert tool.content.startswith("[GetWeatherForecast(") and tool.content.endswith("'low': 13}")
    assert not any("Generate API Request" in turn.content for turn in instance.dialogue)
    assert instance.relevant_apis == ["QueryAirQuality"]
    assert instance.gold_calls == ["QueryAirQuality(city='Lisbon')"]


def test_parameters_become_a_json_schema_object(level1: dict[str, Any]) -> None:
    apis = {api.name: api for instance in level1.values() for api in instance.apis}
    convert = apis["ConvertCurrency"].parameters
    assert convert["type"] == "object"
    assert convert["properties"]["amount"] == {
        "type": "number",
        "description": "The amount to convert.",
    }
    assert convert["required"] == ["amount", "from_currency", "to_currency"]
    recipe = apis["FindRecipe"].parameters
    assert recipe["properties"]["ingredients"]["type"] == "array"
    assert recipe["properties"]["max_minutes"]["type"] == "integer"
    assert recipe["required"] == ["ingredients"]  # "Optional." in the description
    assert apis["NutritionFacts"].parameters["required"] == ["dish"]  # "(optional, ...)"
    assert apis["ToggleLight"].parameters["properties"]["on"]["type"] == "boolean"
    assert apis["GetWeatherForecast"].origin["output_parameters"]["forecast"]["type"] == "dict"


def test_gold_keeps_the_call_text_even_with_an_unescaped_quote(level1: dict[str, Any]) -> None:
    instance = level1["apibank-SetThermostat-ToggleLight-level-1-5-0"]
    assert instance.gold_calls == ["SetThermostat(room='Maya's room', temperature='21.5')"]
    _, call = parse_expected_output("API-Request: " + f"[{instance.gold_calls[0]}]")
    assert call.kwargs == {"room": "Maya's room", "temperature": "21.5"}
    later = level1["apibank-SetThermostat-ToggleLight-level-1-5-2"]
    assert later.dialogue[2].tool_arguments == {"room": "Maya's room", "temperature": "21.5"}


def test_expected_output_values_keep_their_types() -> None:
    _, call = parse_expected_output(
        "API-Request: [AddMeeting(token='t', attendees=['A', 'B'], count=2, ok=True, x=1.5)]"
    )
    assert call.kwargs == {"token": "t", "attendees": ["A", "B"], "count": 2, "ok": True, "x": 1.5}
    _, bare = parse_expected_output("API-Request: [Wc(file_name='a.txt', mode=w)]")
    assert bare.kwargs == {"file_name": "a.txt", "mode": "w"}


def test_folder_loads_sorted_and_reports_records_needing_tool_retrieval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Both kinds of tool-retrieval record are left out, as the paper does: a gold call to an
    API the instruction does not offer, and the ToolSearcher call itself."""
    loaded = read_apibank(FIXTURES / "apibank")
    assert [i.provenance.source_file for i in loaded.instances] == ["level-1-api.json"] * 8
    assert all(i.relevant_apis != ["ToolSearcher"] for i in loaded.instances)
    assert len(loaded.skipped) == 2
    searcher, retrieved = loaded.skipped
    assert "level-2-api.json: record 0 (id=0)" in searcher and "is tool retrieval" in searcher
    assert "level-2-api.json: record 1 (id=1)" in retrieved
    assert "QueryExchangeRate" in retrieved and "needs tool retrieval" in retrieved
    with caplog.at_level(logging.WARNING):
        assert len(load_apibank(FIXTURES / "apibank")) == 8
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2  # one line per reason, not per record
    assert any(w.startswith("skipped 1 API-Bank record: it needs tool retrieval") for w in warnings)


def test_output_is_deterministic_and_round_trips_through_the_dataset_file(tmp_path: Path) -> None:
    first = [dump_line(i) for i in load_apibank(FIXTURES / "apibank")]
    second = [dump_line(i) for i in load_apibank(FIXTURES / "apibank")]
    assert first == second
    out = tmp_path / "data.jsonl"
    write_instances(out, load_apibank(FIXTURES / "apibank"))
    assert [dump_line(i) for i in read_instances(out)] == first


# ---------------------------------------------------------------------------------------------
# bad input: one line naming the file and the record


def _record(**changes: Any) -> dict[str, Any]:
    record = json.loads(LEVEL1.read_text())[0]
    record.update(changes)
    return {k: v for k, v in record.items() if v is not None}


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "level-1-api.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


BAD_RECORDS = [
    ([_record(expected_output=None)], "record 0 (id=0): missing the 'expected_output' field"),
    ([_record(id=[1])], "'id' must be an integer or a string"),
    ([_record(expected_output="I cannot help with that")], "is not one API request"),
    ([_record(expected_output="API-Request: [A(x=1), B(y=2)]")], "expected exactly one call"),
    ([_record(instruction="Answer politely.")], "has no 'API descriptions:' section"),
    (
        [_record(instruction='API descriptions:\n{"name": "X", ')],
        "API description 1 in 'instruction' is not valid JSON",
    ),
    ([_record(instruction='API descriptions:\n{"description": "no name"}')], "has no 'name'"),
    (
        [_record(input="Hello there\nUser: hi\nGenerate API Request:\n")],
        "input line 1 ('Hello there') does not start with 'User:'",
    ),
    ([_record(input="Generate API Request:\n")], "'input' holds no dialogue turns"),
    (["not a record"], "record 0: each record must be a JSON object"),
    ([_record(), _record()], "record 1 (id=0): gives instance id"),
]


@pytest.mark.parametrize(("data", "message"), BAD_RECORDS)
def test_bad_records_name_file_and_record(tmp_path: Path, data: Any, message: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(UserError) as caught:
        load_apibank(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and message in text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('[{"file": "a.jsonl",\n "id": 0,,}]', ":line 2: not valid JSON"),
        ('{"file": "a.jsonl"}', "expected a JSON list of records"),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, data: str, message: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(UserError, match=r"level-1-api\.json") as caught:
        load_apibank(path)
    assert message in str(caught.value)


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file or folder"):
        load_apibank(tmp_path / "nope.json")
    with pytest.raises(UserError, match="the folder holds no API-Bank test-data files"):
        load_apibank(tmp_path)


def test_dialogue_parser_accepts_windows_line_ends_and_api_lines() -> None:
    turns = parse_dialogue("User: hi\r\nAPI: [Ping()]->pong\r\nAI: done\r\n")
    assert [(t.role, t.content, t.tool_name) for t in turns] == [
        ("user", "hi", None),
        ("tool", "[Ping()]->pong", "Ping"),
        ("assistant", "done", None),
    ]
    odd = parse_dialogue("User: go\nAPI-Request: [Broken(x=]->?\n")
    assert odd[1].tool_name == "Broken" and odd[1].tool_arguments is None
