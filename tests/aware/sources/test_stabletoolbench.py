from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.aware.sources import FIXTURES
from toolbench.aware.schema import dump_line
from toolbench.aware.sources.stabletoolbench import (
    function_name,
    load_api_pool,
    load_stabletoolbench,
    standardize,
)
from toolbench.errors import UserError

FOLDER = FIXTURES / "stabletoolbench"
G1 = FOLDER / "G1_instruction.json"
NAME = re.compile(r"^[a-zA-Z0-9_]{1,64}$")


@pytest.fixture(scope="module")
def g1() -> dict[str, Any]:
    return {instance.id: instance for instance in load_stabletoolbench(G1)}


def test_every_query_is_a_complete_single_turn_instance(g1: dict[str, Any]) -> None:
    assert list(g1) == [f"toolbench-G1_instruction-{n}" for n in range(101, 109)]
    first = g1["toolbench-G1_instruction-101"]
    query = json.loads(G1.read_text())[0]["query"]
    assert [(t.role, t.content) for t in first.dialogue] == [("user", query)]
    assert first.source == "toolbench" and first.label == "complete"
    assert first.gold_calls == []
    assert first.provenance.original_id == "101"
    assert first.provenance.source_file == "G1_instruction.json"
    assert first.relevant_apis == [
        "current_weather_for_skycast_weather",
        "air_quality_index_for_airwatch",
    ]


def test_names_follow_toolbench_convention(g1: dict[str, Any]) -> None:
    for instance in g1.values():
        assert all(NAME.match(api.name) for api in instance.apis)
        assert set(instance.relevant_apis) <= {api.name for api in instance.apis}
    assert function_name("SkyCast Weather", "5 Day Forecast") == (
        "get_5_day_forecast_for_skycast_weather"
    )
    assert function_name("Kick.com API | Kick API", "Get Channel Links") == (
        "get_channel_links_for_kick_com_api_kick_api"
    )
    assert function_name("Util", "from") == "is_from_for_util"
    assert standardize("  Hello -- Wörld!! ") == "hello_w_rld"


def test_names_that_collide_in_one_query_get_a_suffix(g1: dict[str, Any]) -> None:
    names = [api.name for api in g1["toolbench-G1_instruction-108"].apis]
    assert "get_5_day_forecast_for_skycast_weather" in names
    assert "get_5_day_forecast_for_skycast_weather_2" in names
    assert len(set(names)) == len(names)


def test_long_names_keep_their_last_64_characters() -> None:
    long = load_stabletoolbench(FOLDER / "G2_category.json")[0].apis[0]
    assert long.origin["tool_name"].startswith("Global Historical")
    assert len(long.name) == 64
    assert long.name.endswith("_for_global_historical_foreign_exchange_reference_rates_service")


def test_parameters_become_a_json_schema_object(g1: dict[str, Any]) -> None:
    apis = {api.name: api for instance in g1.values() for api in instance.apis}
    hourly = apis["hourly_forecast_for_skycast_weather"]
    assert hourly.parameters == {
        "type": "object",
        "properties": {
            "lat": {"type": "number", "description": "Latitude", "default": 41.15},
            "lon": {"type": "number", "description": "Longitude", "default": -8.61},
            "hours": {
                "type": "number",
                "description": "How many hours ahead (max 48)",
                "default": 24,
            },
        },
        "required": ["lat", "lon"],
    }
    alerts = apis["severe_weather_alerts_for_meteohub"].parameters["properties"]
    assert alerts["include_expired"] == {
        "type": "boolean",
        "description": "Also list alerts that ended",
        "default": False,
    }
    search = apis["search_recipes_for_recipe_finder"].parameters["properties"]
    assert search["diet"] == {"type": "string", "description": "vegan, vegetarian, gluten-free..."}
    assert apis["list_currencies_for_currency_lister"].parameters["properties"] == {}
    historical = apis["historical_rates_for_fx_rates_pro"].parameters["properties"]
    assert historical["date"]["type"] == "string"  # "DATE (YYYY-MM-DD)"
    assert apis["convert_currency_for_fx_rates_pro"].origin == {
        "category_name": "Finance",
        "tool_name": "FX Rates Pro",
        "api_name": "Convert Currency",
        "method": "GET",
    }


def test_folder_loads_files_in_name_order() -> None:
    ids = [i.id for i in load_stabletoolbench(FOLDER)]
    assert ids[:8] == [f"toolbench-G1_instruction-{n}" for n in range(101, 109)]
    assert ids[8:] == ["toolbench-G2_category-201", "toolbench-G2_category-202"]


def test_pool_holds_each_api_once_in_clusters_of_similar_apis() -> None:
    pool = load_api_pool(FOLDER)
    keys = [(api.origin["tool_name"], api.origin["api_name"]) for api in pool]
    assert len(keys) == len(set(keys)) == 31
    assert len({api.name for api in pool}) == 31
    clusters = Counter(api.origin["category_name"] for api in pool)
    assert clusters == {"Weather": 9, "Finance": 8, "Food": 7, "Movies": 4, "Mapping": 3}
    # Names agree with the instances', so a pool API can be matched to an offered one.
    offered = {api.name for i in load_stabletoolbench(FOLDER) for api in i.apis}
    assert offered == {api.name for api in pool}


def test_output_is_deterministic() -> None:
    first = [dump_line(i) for i in load_stabletoolbench(FOLDER)]
    assert first == [dump_line(i) for i in load_stabletoolbench(FOLDER)]
    assert [a.model_dump() for a in load_api_pool(FOLDER)] == [
        a.model_dump() for a in load_api_pool(FOLDER)
    ]


# ---------------------------------------------------------------------------------------------
# bad input


def _query(**changes: Any) -> dict[str, Any]:
    query = json.loads(G1.read_text())[0]
    query.update(changes)
    return {k: v for k, v in query.items() if v is not None}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([_query(query=None)], "record 0 (query_id=101): missing the 'query' field"),
        ([_query(api_list="all")], "'api_list' must be a list"),
        ([_query(api_list=[7])], "api_list[0]: each API must be a JSON object"),
        ([_query(api_list=[{"tool_name": "T"}])], "api_list[0]: missing the 'api_name' field"),
        ([_query(**{"relevant APIs": [["AirWatch"]]})], "must be a [tool_name, api_name] pair"),
        (
            [_query(**{"relevant APIs": [["AirWatch", "Ozone"]]})],
            "relevant API 'Ozone' of tool 'AirWatch' is not in its api_list",
        ),
        ([_query(**{"relevant APIs": []})], "'relevant APIs' is empty"),
        ([_query(), _query()], "record 1 (query_id=101): gives instance id"),
        ([[1, 2]], "record 0: each query must be a JSON object"),
    ],
)
def test_bad_queries_name_file_and_record(tmp_path: Path, data: Any, message: str) -> None:
    path = tmp_path / "G1_instruction.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError) as caught:
        load_stabletoolbench(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_bad_parameters_and_paths(tmp_path: Path) -> None:
    query = _query()
    query["api_list"][0]["required_parameters"] = [{"type": "STRING"}]
    path = tmp_path / "G1.json"
    path.write_text(json.dumps([query]))
    with pytest.raises(UserError, match=r"required_parameters\[0\] must be an object"):
        load_stabletoolbench(path)
    with pytest.raises(UserError, match="no such file or folder"):
        load_api_pool(tmp_path / "missing")
    path.write_text("[{]")
    with pytest.raises(UserError, match=r"G1.json:line 1: not valid JSON"):
        load_api_pool(path)
