"""Relevant-API replacement with the real MiniLM encoder over a small clustered pool, plus
property tests of the pure selection step."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.aware.test_encoder import CountingModel
from toolbench.aware.encoder import ApiEncoder
from toolbench.aware.manipulate.api_replacement import (
    ReplacementOptions,
    build_pool,
    replace_relevant_apis,
)
from toolbench.aware.manipulate.replacement_select import (
    micro_bounds,
    ranking_keys,
    select,
    to_micro,
    top_candidates,
)
from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, complete_instance, dump_line
from toolbench.errors import UserError

CLUSTERS: dict[str, list[tuple[str, str]]] = {
    "weather": [
        ("GetWeather", "Current weather for a city: temperature, humidity, wind and sky."),
        ("GetForecast", "Weather forecast for the next seven days for a given city."),
        ("GetAirQuality", "Air quality index and pollutant levels for a location today."),
        ("GetUVIndex", "Ultraviolet index and sun exposure advice for a city."),
        ("GetRainRadar", "Precipitation radar: rain and snow expected in the next hours."),
    ],
    "currency": [
        ("ConvertCurrency", "Convert an amount of money from one currency to another."),
        ("GetExchangeRate", "Latest exchange rate between two currencies, e.g. USD to EUR."),
        ("ExchangeRateHistory", "Historical daily exchange rates of a currency pair."),
        ("ListCurrencies", "All supported currency codes with their names and symbols."),
        ("CryptoPrice", "Current price of a cryptocurrency such as Bitcoin in dollars."),
    ],
    "recipes": [
        ("SearchRecipes", "Find cooking recipes by ingredient, cuisine or dish name."),
        ("GetRecipe", "Ingredients and step-by-step instructions of a recipe."),
        ("NutritionFacts", "Calories, protein, fat and carbohydrates of a food or dish."),
        ("MealPlanner", "Plan breakfast, lunch and dinner recipes for a week of meals."),
        ("WinePairing", "Suggest a wine to go with a dish or a recipe."),
    ],
    "flights": [
        ("SearchFlights", "Search flights between two airports on a date, with fares."),
        ("BookFlight", "Book a seat on a flight for a passenger and pay the airfare."),
        ("FlightStatus", "Live status of a flight: departure, arrival, delays and gate."),
        ("AirportInfo", "Details of an airport: terminals, location and airlines."),
        ("SeatMap", "Seat map of an aircraft for a flight, with free seats."),
    ],
    "hotels": [
        ("SearchHotels", "Find hotels in a city for check-in and check-out dates."),
        ("BookHotel", "Reserve a hotel room for guests and dates."),
        ("HotelReviews", "Guest reviews and ratings of a hotel."),
        ("CancelHotelBooking", "Cancel an existing hotel reservation by its booking id."),
        ("HotelAmenities", "Amenities of a hotel: pool, gym, parking, breakfast, wifi."),
    ],
    "music": [
        ("SearchSongs", "Search songs by title, artist or lyrics."),
        ("GetLyrics", "Lyrics of a song by its title and artist."),
        ("ArtistInfo", "Biography, genres and albums of a music artist."),
        ("TopCharts", "The most popular songs in a country this week."),
        ("CreatePlaylist", "Create a playlist of songs for a user."),
    ],
}
CLUSTER_OF = {name: cluster for cluster, apis in CLUSTERS.items() for name, _ in apis}
APIS = {
    name: ApiSpec(name=name, description=text) for apis in CLUSTERS.values() for name, text in apis
}
#: (id, user request, offered APIs, relevant APIs)
CASES = [
    ("w1", "What's the weather in Paris right now?", ["GetWeather", "SearchSongs"], ["GetWeather"]),
    (
        "c1",
        "How many euros is 50 dollars?",
        ["ConvertCurrency", "GetExchangeRate", "SearchHotels"],
        ["ConvertCurrency"],
    ),
    ("r1", "Find me a lasagna recipe.", ["SearchRecipes", "FlightStatus"], ["SearchRecipes"]),
    (
        "f1",
        "Book me a flight to Rome and a hotel there.",
        ["SearchFlights", "BookHotel", "GetLyrics", "SearchHotels"],
        ["SearchFlights", "BookHotel"],
    ),
    ("h1", "Any reviews of the Ritz?", ["HotelReviews", "TopCharts"], ["HotelReviews"]),
    (
        "m1",
        "Play the top songs and show their lyrics.",
        ["TopCharts", "GetLyrics", "GetForecast"],
        ["TopCharts", "GetLyrics"],
    ),
    ("w2", "Will it rain tomorrow in Oslo?", ["GetForecast", "CryptoPrice"], ["GetForecast"]),
    (
        "x1",
        "Convert 10 GBP to yen, then find sushi recipes.",
        ["GetExchangeRate", "SearchRecipes", "GetRecipe", "NutritionFacts", "AirportInfo"],
        ["GetExchangeRate", "SearchRecipes"],
    ),
]


def _instance(case_id: str, text: str, offered: list[str], relevant: list[str]) -> Instance:
    return complete_instance(
        id=case_id,
        source="test",
        dialogue=[Turn(role="user", content=text)],
        apis=[APIS[name] for name in offered],
        relevant_apis=relevant,
        gold_calls=[f"{name}()" for name in relevant],
        provenance=Provenance(original_id=f"orig-{case_id}", source_file="cases.json"),
    )


INSTANCES = [_instance(*case) for case in CASES]
POOL = build_pool(INSTANCES, list(APIS.values()))


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiEncoder]:
    with ApiEncoder(cache_dir=tmp_path_factory.mktemp("cache")) as encoder:
        yield encoder


def _run(encoder: Any, **options: Any) -> tuple[list[Instance], list[tuple[str, str]]]:
    result = replace_relevant_apis(INSTANCES, POOL, encoder, ReplacementOptions(**options))
    return result.instances, result.skipped


def _dump(instances: list[Instance]) -> list[str]:
    return [dump_line(instance) for instance in instances]


def _similarity(encoder: ApiEncoder, a: ApiSpec, b: ApiSpec) -> float:
    left, right = encoder.encode([a.embedding_text(), b.embedding_text()]).astype(np.float64)
    return float(left @ right)


def test_pool_is_every_distinct_api_in_a_stable_order() -> None:
    assert len(POOL) == 30
    assert [api.name for api in POOL] == sorted(api.name for api in POOL)
    assert build_pool(list(reversed(INSTANCES)), list(APIS.values())) == POOL
    variant = ApiSpec(name="GetWeather", description="Another weather endpoint.")
    assert build_pool(INSTANCES, [variant, APIS["GetWeather"]]).count(variant) == 1


def test_replacements_are_similar_unoffered_and_swapped_in_place(minilm: ApiEncoder) -> None:
    twins, skipped = _run(minilm, seed=0)
    assert skipped == [] and len(twins) == len(INSTANCES)
    rng = random.Random(0)
    for original, twin in zip(INSTANCES, twins, strict=True):
        offered = {api.name for api in original.apis}
        records = twin.provenance.replacements
        assert [r.original for r in records] == [
            api.name for api in original.apis if api.name in original.relevant_apis
        ]
        chosen = [r.replacement for r in records]
        assert len(set(chosen)) == len(chosen) and not set(chosen) & offered
        for position, api in enumerate(original.apis):
            swapped = next((r.replacement for r in records if r.original == api.name), None)
            assert twin.apis[position].name == (swapped or api.name)
        for record in records:
            before, after = APIS[record.original], APIS[record.replacement]
            assert record.similarity == round(_similarity(minilm, before, after), 6)
            # better than chance: above the mean similarity of random pool APIs to the original
            sample = rng.sample([api for api in POOL if api.name not in offered], 10)
            chance = np.mean([_similarity(minilm, before, api) for api in sample])
            assert record.similarity > chance, (record, chance)
            assert CLUSTER_OF[record.replacement] == CLUSTER_OF[record.original], record


def test_twin_records_what_was_done(minilm: ApiEncoder) -> None:
    twins, _ = _run(minilm, seed=7)
    twin = next(t for t in twins if t.twin_id == "f1")
    assert twin.id == "f1~api_replacement" and twin.label == "incomplete"
    assert twin.manipulation == "api_replacement" and twin.relevant_apis == []
    assert twin.dialogue == INSTANCES[3].dialogue
    assert twin.provenance.original_id == "orig-f1"
    assert twin.provenance.source_file == "cases.json"
    assert twin.provenance.generator == f"api_replacement encoder={minilm.identity}"
    assert minilm.identity.startswith("all-MiniLM-L6-v2@")
    assert twin.provenance.seed == 7 and twin.verification.status == "pending"
    first, second = twin.provenance.replacements
    assert twin.provenance.missing == (
        f"No offered API can do what SearchFlights and BookHotel did; they were replaced by "
        f"{first.replacement} and {second.replacement} respectively."
    )
    single = next(t for t in twins if t.twin_id == "w1").provenance
    assert single.missing == (
        f"No offered API can do what GetWeather did; it was replaced by "
        f"{single.replacements[0].replacement}."
    )


def test_same_seed_same_bytes_and_choose_from_varies_with_the_seed(minilm: ApiEncoder) -> None:
    assert _dump(_run(minilm, seed=1)[0]) == _dump(_run(minilm, seed=1)[0])
    runs = {seed: _dump(_run(minilm, seed=seed, choose_from=3)[0]) for seed in range(4)}
    assert runs[0] == _dump(_run(minilm, seed=0, choose_from=3)[0])
    assert len(set(map(tuple, runs.values()))) > 1
    for seed in range(4):
        twins, _ = _run(minilm, seed=seed, choose_from=3)
        ranks = {r.rank for t in twins for r in t.provenance.replacements}
        assert ranks <= {1, 2, 3}


def _expected(encoder: ApiEncoder, instance: Instance, rank: int) -> list[str]:
    """Brute force: sort every pool API by similarity (ties: pool order), take turns."""
    offered = {api.name for api in instance.apis}
    taken: list[str] = []
    for api in instance.apis:
        if api.name not in instance.relevant_apis:
            continue
        scored = [
            (-round(_similarity(encoder, api, cand), 6), index, cand.name)
            for index, cand in enumerate(POOL)
            if cand.name not in offered and cand.name not in taken
        ]
        taken.append(sorted(scored)[rank - 1][2])
    return taken


@pytest.mark.parametrize("rank", [1, 2])
def test_rank_picks_the_rank_th_most_similar(minilm: ApiEncoder, rank: int) -> None:
    twins, _ = _run(minilm, seed=0, rank=rank)
    for original, twin in zip(INSTANCES, twins, strict=True):
        records = twin.provenance.replacements
        assert [r.replacement for r in records] == _expected(minilm, original, rank)
        assert {r.rank for r in records} == {rank}


def test_similarity_window_is_honoured_and_misses_are_reported(minilm: ApiEncoder) -> None:
    twins, skipped = _run(minilm, seed=0, min_similarity=0.2, max_similarity=0.45)
    similarities = [r.similarity for t in twins for r in t.provenance.replacements]
    assert similarities and all(0.2 <= s <= 0.45 for s in similarities)
    top, _ = _run(minilm, seed=0)
    assert twins != top  # the window really moved the choice

    none, skipped = _run(minilm, seed=0, min_similarity=0.99)
    assert none == [] and [iid for iid, _ in skipped] == [i.id for i in INSTANCES]
    assert "similarity window [0.99, -]" in skipped[0][1] and "most similar:" in skipped[0][1]


def test_instances_that_cannot_be_manipulated_are_reported(minilm: ApiEncoder) -> None:
    no_relevant = _instance("n1", "Hello", ["GetWeather"], [])
    ghost = _instance("g1", "Weather?", ["GetWeather"], ["GetForecast"])
    done: list[int] = []
    result = replace_relevant_apis(
        [no_relevant, INSTANCES[0], ghost],
        POOL,
        minilm,
        ReplacementOptions(seed=0),
        progress=done.append,
    )
    assert [t.twin_id for t in result.instances] == ["w1"] and sum(done) == 3
    assert result.skipped == [
        ("n1", "no relevant APIs"),
        ("g1", "relevant API 'GetForecast' is not among the offered APIs"),
    ]
    tiny = replace_relevant_apis(
        INSTANCES[:1], [APIS["GetWeather"]], minilm, ReplacementOptions(seed=0)
    )
    assert tiny.skipped == [
        ("w1", "no replacement for 'GetWeather': every pool API is offered in the instance")
    ]


def test_bad_options_are_user_errors() -> None:
    with pytest.raises(UserError, match="--rank"):
        ReplacementOptions(seed=0, rank=0)
    with pytest.raises(UserError, match="--choose-from"):
        ReplacementOptions(seed=0, choose_from=0)
    with pytest.raises(UserError, match="above --max-similarity"):
        ReplacementOptions(seed=0, min_similarity=0.8, max_similarity=0.5)


def test_second_run_hits_the_embedding_cache(tmp_path: Path) -> None:
    model = CountingModel()
    first = ApiEncoder(model=model, name="counting", cache_dir=tmp_path)
    cold = _dump(_run(first, seed=3)[0])
    assert first.model_calls == 1 and first.encoded == len(POOL)  # queries were pool hits
    second = ApiEncoder(model=model, name="counting", cache_dir=tmp_path)
    assert _dump(_run(second, seed=3)[0]) == cold
    assert second.model_calls == 0 and len(model.calls) == 1


# ---- the pure selection step ----


def test_micro_bounds_are_exact_for_recorded_values() -> None:
    assert micro_bounds(0.3, 0.3) == (300_000, 300_000)
    assert micro_bounds(0.1234565, None) == (123_457, None)
    assert micro_bounds(None, -0.5) == (None, -500_000)


def _reference(micro: np.ndarray, eligible: np.ndarray) -> list[list[int]]:
    return [
        [int(i) for i in sorted(np.flatnonzero(ok), key=lambda i: (-row[i], i))]
        for row, ok in zip(micro, eligible, strict=True)
    ]


matrices = st.integers(1, 4).flatmap(
    lambda rows: st.integers(1, 12).flatmap(
        lambda cols: st.tuples(
            # few distinct values: ties are common
            st.lists(
                st.sampled_from([-1.0, -0.25, 0.0, 0.3, 0.3000004, 0.5, 1.0]),
                min_size=rows * cols,
                max_size=rows * cols,
            ),
            st.lists(st.booleans(), min_size=rows * cols, max_size=rows * cols),
            st.just((rows, cols)),
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(
    matrices,
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(0, 2**32),
)
def test_selection_is_eligible_ordered_and_deterministic(
    data: tuple[list[float], list[bool], tuple[int, int]], rank: int, choose_from: int, seed: int
) -> None:
    values, flags, shape = data
    similarity = np.array(values).reshape(shape)
    eligible = np.array(flags).reshape(shape)
    micro = to_micro(similarity)
    chosen = select(
        similarity, eligible, rank=rank, choose_from=choose_from, rng=random.Random(seed)
    )
    again = select(
        similarity, eligible, rank=rank, choose_from=choose_from, rng=random.Random(seed)
    )
    assert chosen == again
    order = _reference(micro, eligible)
    taken: list[int] = []
    for row, pick in enumerate(chosen):
        available = [i for i in order[row] if i not in taken]
        if pick is None:
            assert len(available) < rank
            continue
        index, got_rank = pick
        assert eligible[row, index] and index not in taken
        assert rank <= got_rank < rank + choose_from
        assert available.index(index) == got_rank - 1  # exactly got_rank - 1 are better
        if choose_from == 1:
            assert index == available[rank - 1]
        taken.append(index)


@settings(max_examples=200, deadline=None)
@given(matrices, st.integers(0, 14))
def test_top_candidates_match_a_full_sort(
    data: tuple[list[float], list[bool], tuple[int, int]], depth: int
) -> None:
    values, flags, shape = data
    micro = to_micro(np.array(values).reshape(shape))
    eligible = np.array(flags).reshape(shape)
    best = top_candidates(ranking_keys(micro, eligible), depth)
    for row, expected in zip(best, _reference(micro, eligible), strict=True):
        wanted = expected[: min(depth, shape[1])]
        assert list(row) == wanted + [-1] * (min(depth, shape[1]) - len(wanted))
