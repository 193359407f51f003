"""The case generators on golds written here: rewrites keep the meaning, perturbations change it.

These check the generator itself (pure text, no scoring), so a failure in the judge-validity
suite points at the judge rather than at a generator that made a wrong case.
"""

from __future__ import annotations

import ast

from tests.judge_validity import curls, programs, pyedit, sheets
from tests.judge_validity.cases import PERTURBATION, REWRITE
from tests.judge_validity.generate import cases_for_task
from tests.judge_validity.harness import _same_state, spread
from toolbench.core.task import TaskData
from toolbench.types import Outcome, Sample, Status, TaskContext

HOME = (
    'API.set_location("Tulsa")\nAPI.set_buy_or_rent("rent")\n'
    'API.select_home_type(["Condo", "Apartment"])\nAPI.set_num_beds(2)\n'
    "API.set_max_price(1800)\nAPI.search()"
)
TRIP = (
    'API.select_booking_type("both")\nAPI.select_transportation("bus")\n'
    'here = Loc("Reno")\nAPI.set_origin(here)\nthere = Loc("Fresno")\n'
    "API.set_destination(there)\nAPI.set_num_adults(1)\nAPI.set_hotel_location(there)\n"
    "API.set_checkin_date(Date(3, 9, 2025))\nAPI.set_checkout_date(Date(3, 12, 2025))\nAPI.search()"
)
OW = "https://api.openweathermap.org"
CAT = "https://api.thecatapi.com/v1"


def calls(program: str) -> list[str | None]:
    return [pyedit.statement_call(s) for s in pyedit.statements(program)]


def test_reordered_setters_keep_required_calls_first_and_search_last() -> None:
    text = programs.reordered_setters("home_search", HOME)
    assert text is not None
    assert calls(text) == [
        "set_location",
        "set_buy_or_rent",
        "set_max_price",
        "set_num_beds",
        "select_home_type",
        "search",
    ]


def test_booking_reorder_defines_variables_before_any_use() -> None:
    text = programs.reordered_setters("booking", TRIP)
    assert text is not None
    body = pyedit.statements(text)
    assert pyedit.statement_call(body[0]) == "select_booking_type"
    assert [type(s).__name__ for s in body[1:3]] == ["Assign", "Assign"]


def test_keyword_arguments_use_the_simulators_parameter_names() -> None:
    text = pyedit.keyword_arguments(TRIP, programs.SIGNATURES["booking"])
    assert text is not None
    assert "Date(month=3, day=9, year=2025)" in text
    assert "API.select_booking_type(booking_type='both')" in text


def test_explicit_defaults_for_a_trip_with_hotel_copy_the_stay_dates() -> None:
    text = programs.explicit_defaults("booking", TRIP)
    assert text is not None
    assert "API.set_departure_date(Date(3, 9, 2025))" in text
    assert "API.set_return_date(Date(3, 12, 2025))" in text
    assert "API.set_num_rooms(1)" in text and "API.set_min_ticket_price(0)" in text


def test_quote_flip_changes_only_the_quotes() -> None:
    flipped = pyedit.flip_quotes(HOME)
    assert flipped == HOME.replace('"', "'")


def test_program_perturbations_each_change_the_program_once() -> None:
    pool = programs.Pool.of([HOME, TRIP])
    cases = programs.program_perturbations("booking", TRIP, pool, seed=0)
    kinds = {case.kind: case.prediction for case in cases}
    assert {"wrong_city", "wrong_date", "dropped_criterion", "swapped_origin_destination"} <= set(
        kinds
    )
    assert "Loc('Fresno')" in kinds["wrong_city"] or "Loc('Tulsa')" in kinds["wrong_city"]
    swapped = kinds["swapped_origin_destination"]
    assert "API.set_origin(there)" in swapped and "API.set_destination(here)" in swapped
    for case in cases:
        assert case.family == PERTURBATION
        ast.parse(case.prediction)


def test_sheet_cell_routes_and_moves() -> None:
    assert sheets.cell_routes("worksheet.update_acell('B3', 13)") == (
        "worksheet.update_cell(3, 2, 13)"
    )
    assert sheets.cell_routes("worksheet.update_cell(3, 5, 99)") == (
        "worksheet.update_acell('E3', 99)"
    )
    assert sheets.range_end_explicit("worksheet.delete_rows(7)") == "worksheet.delete_rows(7, 7)"
    bold = "worksheet.format('A24:E24', {'textFormat': {'bold': True}})"
    found = {c.kind: c.prediction for c in sheets.sheet_perturbations(bold, seed=0)}
    assert "'A25:E25'" in found["off_by_one_cell"]
    assert "'B24:F24'" in found["swapped_column"]
    assert sheets._bump_last_number("=SUM(G2:G37)") == "=SUM(G2:G38)"


def test_curl_line_round_trips_and_respells() -> None:
    gold = f"curl -X GET '{OW}/data/2.5/weather?q=San%20Jose&appid={{API_KEY}}&units=metric'"
    line = curls.Line.read(gold)
    assert line is not None and line.render() == gold
    kinds = {c.kind: c.prediction for c in curls.curl_rewrites("open_weather", gold, False)}
    assert kinds["parameter_order"].endswith("?units=metric&appid={API_KEY}&q=San%20Jose'")
    assert "q=San+Jose" in kinds["plus_for_space"]
    assert kinds["explicit_defaults"].endswith("&lang=en&mode=json'")


def test_string_only_lines_get_only_whitespace_and_fence_rewrites() -> None:
    gold = f"curl -X DELETE '{CAT}/favourites/4001'"
    cases = curls.curl_rewrites("the_cat_api", gold, string_only=True)
    assert [c.kind for c in cases] == ["whitespace", "fenced_chat_reply"]
    assert " ".join(cases[0].prediction.split()) == gold
    assert f"```bash\n{gold}\n```" in cases[1].prediction


def test_same_request_knows_the_services_defaults() -> None:
    weather = f"curl -X GET '{OW}/data/2.5/weather?zip=94040&appid={{API_KEY}}'"
    assert curls.same_request("open_weather", weather[:-1] + "&lang=en'", [weather])
    assert not curls.same_request("open_weather", weather[:-1] + "&lang=de'", [weather])
    search = f"curl -X GET '{CAT}/images/search?limit=3&order=RAND'"
    assert curls.same_request("the_cat_api", f"curl -X GET '{CAT}/images/search?limit=3'", [search])
    assert not curls.same_request(
        "the_cat_api", f"curl -X GET '{CAT}/images/search?limit=4'", [search]
    )


def test_a_write_gets_another_id_from_the_world() -> None:
    gold = f"curl -X DELETE '{CAT}/favourites/11'"
    state = {"favourites": [{"id": 11, "image_id": "a"}, {"id": 12, "image_id": "b"}]}
    cases = curls.curl_perturbations("the_cat_api", gold, [gold], 0, state)
    found = {c.kind: c.prediction for c in cases}
    assert found["other_id_in_path"] == f"curl -X DELETE '{CAT}/favourites/12'"


def test_swaps_pair_each_sample_with_another_deterministically() -> None:
    golds = [HOME.replace("2", str(i)) for i in range(5)]
    samples = [
        Sample(id=str(i), task="home_search", query="q", labels=(g,)) for i, g in enumerate(golds)
    ]
    first = cases_for_task("home_search", samples, samples)
    again = cases_for_task("home_search", samples, samples)
    assert first == again
    for sample in samples:
        swap = first[sample.id][-1]
        assert swap.prediction != sample.labels[0]
        assert all(
            c.family != REWRITE or c.prediction != sample.labels[0] for c in first[sample.id]
        )


def test_spread_takes_an_even_subset() -> None:
    samples = [Sample(id=str(i), task="t", query="q", labels=("x",)) for i in range(10)]
    assert [s.id for s in spread(samples, 4)] == ["0", "2", "5", "7"]
    assert len(spread(samples, None)) == 10


def test_a_perturbation_that_leaves_the_gold_world_is_discarded() -> None:
    sample = Sample(id="0", task="home_search", query="q", labels=(HOME,))
    data = TaskData("home_search", "v0", [sample], TaskContext((), ()), "", "", {"0": [{"a": 1}]})
    same = Outcome(Status.SCORED, True, details={"state": {"a": 1}})
    other = Outcome(Status.SCORED, False, details={"state": {"a": 2}})
    crash = Outcome(Status.MODEL_ERROR, False)
    assert _same_state(data, sample, same)
    assert not _same_state(data, sample, other) and not _same_state(data, sample, crash)


def test_masked_loc_update_becomes_an_at_loop() -> None:
    gold = (
        "df = get_as_dataframe(worksheet)\n"
        "df.loc[df['Year'] <= 2016, 'Salary'] += 1000\n"
        "set_with_dataframe(worksheet, df)"
    )
    text = sheets.loc_as_at_loop(gold)
    assert text is not None
    assert "for i in df.index[rows]:\n    df.at[i, 'Salary'] += 1000" in text
    assert sheets.loc_as_at_loop(gold.replace("+= 1000", "= df['Salary'] * 2")) is None
