"""The original test set's shape loads and the oracle scores 1.000 on it.

The lines are ours, written in the original's shape (``prompt`` and ``completion``, a list of
gold curl strings with ``{API_KEY}``): every city name and ZIP-code kind the original asks
about that the hand-picked gazetteer did not know, plus other real towns, over every endpoint
the original uses. The run goes through the CLI, so the load-time check that each gold
request succeeds in the simulator is part of what is tested.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, quote_plus

from tests.conftest import CliResult, read_run

BASE = "https://api.openweathermap.org"
# Lower case, as the original writes them; several need punctuation and spaces to resolve.
CITIES = (
    "akron", "augusta", "chandler", "clarksville", "corpus christi", "grand prairie", "hayward",
    "irvine", "jersey city", "killeen", "lakewood", "lancaster", "little rock", "modesto",
    "ontario", "pembroke pines", "peoria", "port st. lucie", "sunnyvale", "tacoma", "tulsa",
    "birmingham", "fort wayne", "st. petersburg", "winston-salem", "coeur d'alene",
    "san jose", "boise", "reykjavik", "münchen",
)  # fmt: skip
ZIPS = ("10001", "94103", "60614", "73301", "99501", "00601", "33101", "80202", "98101",
        "02108", "70112", "96813", "59601", "04101")  # fmt: skip
QUALIFIED = ("birmingham,al,us", "Peoria,IL,US", "lancaster,pa,us", "London,CA", "paris,fr")
COORDS = ((36.15, -95.99), (33.52, -86.8), (27.27, -80.35), (61.2, -149.9), (-33.9, 151.2))


def _curl(path: str, query: str) -> str:
    return f"curl -X GET '{BASE}/{path}?{query}&appid={{API_KEY}}'"


def _lines() -> list[tuple[str, str]]:
    """(prompt, gold curl line) pairs over every endpoint the original uses."""
    lines: list[tuple[str, str]] = []
    for i, city in enumerate(CITIES):
        q = quote(city, safe=",") if i % 2 else quote_plus(city, safe=",")
        path = ("data/2.5/weather", "data/2.5/forecast", "geo/1.0/direct")[i % 3]
        extra = ("&units=imperial", "&cnt=3", "&limit=5")[i % 3]
        lines.append((f"Weather for {city}?", _curl(path, f"q={q}{extra}")))
    for i, code in enumerate(ZIPS):
        path = ("data/2.5/weather", "data/2.5/forecast", "geo/1.0/zip")[i % 3]
        zip_text = f"{code},us" if i % 4 == 0 else code
        lines.append((f"Weather around ZIP {code}.", _curl(path, f"zip={zip_text}")))
    for q in QUALIFIED:
        lines.append((f"Where is {q}?", _curl("geo/1.0/direct", f"q={q}&limit=2")))
        lines.append((f"Weather in {q}.", _curl("data/2.5/weather", f"q={q}&units=metric")))
    for lat, lon in COORDS:
        where = f"lat={lat}&lon={lon}"
        lines.append((f"Air at {lat}, {lon}.", _curl("data/2.5/air_pollution", where)))
        outlook = _curl("data/2.5/air_pollution/forecast", where)
        lines.append((f"Air outlook at {lat}, {lon}.", outlook))
        lines.append((f"What is near {lat}, {lon}?", _curl("geo/1.0/reverse", f"{where}&limit=3")))
    return lines


def _write_original_layout(root: Path) -> Path:
    folder = root / "open_weather" / "v0"
    folder.mkdir(parents=True)
    records = [{"prompt": prompt, "completion": [gold]} for prompt, gold in _lines()]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


def test_oracle_scores_one_on_original_shaped_cities_and_zips(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    root = _write_original_layout(tmp_path / "data")
    out = tmp_path / "run"
    code, _, err = cli(
        "run", "open_weather", "--model", "oracle", "--data-dir", str(root), "--out", str(out)
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    n = len(_lines())
    assert info["metrics"]["open_weather"]["success_rate"] == 1.0
    assert info["metrics"]["open_weather"]["crash_rate"] == 0.0
    assert info["counts"]["open_weather"] == {"scored": n, "model_error": 0, "infra_error": 0,
                                                 "context_overflow": 0}  # fmt: skip
    assert len(records) == n


def test_an_unknown_city_in_a_gold_line_is_a_clear_load_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    root = _write_original_layout(tmp_path / "data")
    test_file = root / "open_weather" / "v0" / "test.jsonl"
    bad = {
        "prompt": "Weather in nowhere?",
        "completion": [_curl("data/2.5/weather", "q=xyzzyville")],
    }
    with test_file.open("a") as handle:
        handle.write(json.dumps(bad) + "\n")
    code, _, err = cli(
        "run", "open_weather", "--model", "oracle", "--data-dir", str(root),
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 2
    assert f"test.jsonl:{len(_lines()) + 1}" in err and "city not found" in err
