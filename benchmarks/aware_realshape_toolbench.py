"""StableToolBench-shaped query files with the warning signs of the real pool, from our words.

The real pool (RapidAPI tools as ToolBench crawled them) is full of APIs that a nearest-neighbour
replacement picks although they serve the request: several APIs of one tool, sibling tools
("X API" / "X Data API", "Y" / "Y_v2", "A Extra B" / "A B"), re-published clones with the
same descriptions under another brand, look-alike brands one letter apart, and many tools that
do the same job in other words. This module invents such a pool (category -> job -> tools, all
names and texts ours) and writes it in the G1/G2/G3 query shape (``query``, ``query_id``,
``api_list`` of {category_name, tool_name, api_name, api_description, required_parameters,
optional_parameters, method, template_response}, ``"relevant APIs"``), so the awareness build
meets the same traps as on the public files. Seeded: the same seed writes the same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Each job: API name variants, description paraphrases, parameters (name, type, example), and
# requests a user might make ({v} is the example value). Categories group jobs as RapidAPI does.
# fmt: off
JOBS: dict[str, list[tuple[list[str], list[str], list[tuple[str, str, str]], list[str]]]] = {
    "Finance": [
        (["Convert Amount", "convert", "currencyConvert"],
         ["Turns an amount in one currency into another at today's rate.",
          "Converts money between two currencies using the latest exchange rate.",
          "Gives the value of a sum of money in a second currency."],
         [("amount", "NUMBER", "250"), ("from", "STRING", "EUR"), ("to", "STRING", "JPY")],
         ["how much is {v} euros in yen",
          "convert {v} EUR to Japanese yen for my trip"]),
        (["Historical Rates", "history", "ratesOnDate"],
         ["Exchange rates of a base currency on a past date.",
          "Looks up what currencies were worth against each other on a given day.",
          "Past foreign exchange rates for one date."],
         [("date", "STRING", "2021-03-14"), ("base", "STRING", "USD")],
         ["what the dollar was worth on {v}",
          "the exchange rates from {v}"]),
        (["Stock Quote", "quote", "tickerPrice"],
         ["Current price, change and volume for a stock ticker.",
          "Real-time quote of a listed share by its symbol.",
          "Latest trading price of an equity symbol."],
         [("symbol", "STRING", "ACME")],
         ["the current share price of {v}",
          "how {v} stock is trading right now"]),
        (["Company Profile", "profile", "companyInfo"],
         ["Sector, headquarters and description of a listed company.",
          "Basic facts about a public company from its ticker.",
          "Who a listed company is: industry, country and summary."],
         [("symbol", "STRING", "ACME")],
         ["what company {v} is and what sector it is in",
          "a profile of the company behind {v}"]),
    ],
    "Email": [
        (["Validate Email Address", "validate", "checkEmail"],
         ["Checks whether an email address is well formed and its domain accepts mail.",
          "Verifies an email address: syntax, domain and mailbox.",
          "Tells you if an address can receive email."],
         [("email", "STRING", "ana@example.org")],
         ["whether {v} is a real address",
          "to verify the email {v} before I send the invite"]),
        (["Disposable Check", "disposable", "isTempMail"],
         ["Detects addresses from throwaway email providers.",
          "Says whether a mail domain hands out temporary inboxes.",
          "Flags burner email domains."],
         [("domain", "STRING", "mailinator.example")],
         ["whether {v} is a throwaway mail domain",
          "if the signup domain {v} is disposable"]),
        (["Send Email", "send", "sendMessage"],
         ["Sends a plain-text email to one recipient.",
          "Delivers an email message with a subject and body.",
          "Posts an email to an address through the service's relay."],
         [("to", "STRING", "team@example.org"), ("subject", "STRING", "Hello")],
         ["send a note to {v} saying the meeting moved",
          "email {v} that the report is ready"]),
    ],
    "Weather": [
        (["Current Weather", "current", "nowWeather"],
         ["Temperature, wind and conditions right now for a city.",
          "The weather at this moment in a given place.",
          "Live conditions for a location: temperature, humidity and sky."],
         [("city", "STRING", "Lisbon")],
         ["the weather right now in {v}",
          "whether it is raining in {v} at the moment"]),
        (["5 Day Forecast", "forecast", "dailyForecast"],
         ["Daily forecast for the next five days for a city.",
          "Weather predictions for a place, day by day, for the coming week.",
          "Highs, lows and rain chances for the days ahead."],
         [("city", "STRING", "Lisbon"), ("days", "NUMBER", "5")],
         ["the forecast for the next days in {v}",
          "what the weather will be in {v} this week"]),
        (["Air Quality", "aqi", "airIndex"],
         ["Air quality index and main pollutants for coordinates.",
          "How clean the air is at a point, with pollutant levels.",
          "Pollution readings near a latitude and longitude."],
         [("lat", "NUMBER", "38.7"), ("lon", "NUMBER", "-9.1")],
         ["how clean the air is at {v}",
          "the air quality index near {v}"]),
        (["Sunrise Sunset", "sun", "daylight"],
         ["Sunrise and sunset times for a place and date.",
          "When the sun comes up and goes down at a location.",
          "Daylight hours for coordinates on a day."],
         [("lat", "NUMBER", "38.7"), ("date", "STRING", "2024-06-21")],
         ["when the sun sets on {v}",
          "sunrise and sunset times for {v}"]),
    ],
    "Sports": [
        (["Live Scores", "live", "liveMatches"],
         ["Scores of football matches being played now.",
          "Ongoing games with the current score and minute.",
          "Matches in progress and their live results."],
         [("league", "STRING", "Premier League")],
         ["the live scores in the {v}",
          "which {v} games are on and the scores"]),
        (["Team Squad", "squad", "teamPlayers"],
         ["Players registered for a team this season.",
          "The roster of a club with positions and numbers.",
          "Who plays for a team, by position."],
         [("team", "STRING", "Riverside FC")],
         ["the current roster of {v}",
          "who plays for {v} this season"]),
        (["Player Stats", "stats", "playerSeason"],
         ["Season statistics of a player: goals, assists, minutes.",
          "How a player has performed this season, in numbers.",
          "Goals, assists and appearances of one player."],
         [("player", "STRING", "Tomas Varga")],
         ["how many goals {v} scored this season",
          "the season numbers of {v}"]),
        (["League Table", "standings", "tableByLeague"],
         ["Current standings of a league with points and goal difference.",
          "The league table as it stands today.",
          "Ranking of the teams in a competition."],
         [("league", "STRING", "Premier League")],
         ["the current {v} table",
          "who leads the {v} right now"]),
    ],
    "Code": [
        (["Submit Code", "submission", "runSource"],
         ["Runs source code in a sandbox and returns its output.",
          "Compiles and executes a program, giving back stdout and errors.",
          "Executes a snippet in one of many languages."],
         [("source_code", "STRING", "print(1)"), ("language_id", "NUMBER", "71")],
         ["run this Python snippet: {v}",
          "execute {v} and tell me what it prints"]),
        (["Languages", "languages", "listRuntimes"],
         ["Lists the programming languages the runner supports.",
          "Every runtime and compiler version available.",
          "Supported languages with their ids."],
         [],
         ["which languages the code runner supports",
          "the list of supported runtimes"]),
        (["Generate UUID", "uuid", "newGuid"],
         ["Creates random version 4 UUIDs.",
          "Generates one or more random unique identifiers.",
          "Fresh GUIDs, as many as you ask for."],
         [("count", "NUMBER", "5")],
         ["{v} fresh UUIDs for my test fixtures",
          "generate {v} GUIDs"]),
        (["Format JSON", "prettify", "jsonFormat"],
         ["Pretty-prints a JSON document with indentation.",
          "Reformats JSON text so it is easy to read.",
          "Indents and sorts a JSON payload."],
         [("json", "STRING", "{\"a\":1}")],
         ["tidy up this JSON: {v}",
          "pretty-print {v}"]),
    ],
    "Real Estate": [
        (["Search For Sale", "forSale", "listingsSale"],
         ["Homes for sale in a city with price and size filters.",
          "Properties on the market in an area, filtered by price.",
          "Houses and flats you can buy in a location."],
         [("city", "STRING", "Austin"), ("max_price", "NUMBER", "400000")],
         ["houses for sale in {v} under 400k",
          "what I could buy in {v}"]),
        (["Search Rentals", "forRent", "listingsRent"],
         ["Rental listings in a city with rent and bedroom filters.",
          "Apartments and houses to rent in an area.",
          "Places for rent near a location, by monthly price."],
         [("city", "STRING", "Austin"), ("beds", "NUMBER", "2")],
         ["two-bedroom rentals in {v}",
          "apartments to rent in {v}"]),
        (["Property Details", "details", "propertyById"],
         ["Everything known about one listing: photos, rooms, history.",
          "Full details of a property by its listing id.",
          "Rooms, price history and photos of a listing."],
         [("property_id", "STRING", "P-88213")],
         ["the details of listing {v}",
          "more about the property {v}"]),
    ],
    "Travel": [
        (["Search Flights", "flights", "flightSearch"],
         ["One-way and return flights between two airports on a date.",
          "Finds flights from one airport to another with prices.",
          "Available flights for a route and day."],
         [("from", "STRING", "LIS"), ("to", "STRING", "BER"), ("date", "STRING", "2024-09-02")],
         ["flights from Lisbon to Berlin on {v}",
          "a cheap flight to Berlin on {v}"]),
        (["Hotel Search", "hotels", "staySearch"],
         ["Hotels in a city with availability for given dates.",
          "Rooms available in a destination between two dates.",
          "Places to stay in a city, with prices per night."],
         [("city", "STRING", "Berlin"), ("checkin", "STRING", "2024-09-02")],
         ["a hotel in {v} for three nights",
          "where to stay in {v} next month"]),
        (["Airport Info", "airport", "airportByCode"],
         ["Name, city and timezone of an airport from its code.",
          "Looks up an airport by its IATA code.",
          "Details of an airport: location, terminals, timezone."],
         [("iata", "STRING", "BER")],
         ["which airport the code {v} is",
          "the timezone of airport {v}"]),
    ],
    "Media": [
        (["Movie Search", "search", "findTitle"],
         ["Finds films and series by title.",
          "Searches the catalogue of movies and shows by name.",
          "Titles matching a search string."],
         [("title", "STRING", "The Long Harbour")],
         ["the film {v}",
          "details of the movie {v}"]),
        (["Title Ratings", "ratings", "scoresByTitle"],
         ["Critic and audience ratings of a title.",
          "How a movie or show is rated by viewers and critics.",
          "Scores of a film from reviewers."],
         [("title_id", "STRING", "tt0099123")],
         ["how well {v} is rated",
          "the reviews of {v}"]),
        (["Song Lyrics", "lyrics", "lyricsByTrack"],
         ["Lyrics of a song by artist and track name.",
          "The words of a song.",
          "Full lyrics for a track."],
         [("track", "STRING", "Salt Road"), ("artist", "STRING", "Mira Holm")],
         ["the lyrics of {v}",
          "the words to the song {v}"]),
    ],
}
# fmt: on
#: Endpoints many tools share with the same words (RapidAPI's health checks): identical
#: non-empty descriptions across unrelated tools.
SHARED = (["Health Check", "status"], ["Returns OK when the service is up."])
_SYLLABLES = (
    "zor", "vel", "qua", "min", "tor", "lux", "pen", "dra", "kel", "vo", "ra", "ny",
    "sol", "ter", "ba", "fi", "mo", "cas", "lin", "dor", "rex", "ul", "pi",
)  # fmt: skip
_SUFFIXES = ("", "", " Hub", " Works", " Cloud", " Point", " Desk", " Link", " Labs")
#: How a sibling of a tool is named, as on RapidAPI: the same family once filler is dropped.
_SIBLINGS = ("{b} Data API", "{b}_v2", "{b} Extra", "{b} Pro API", "{b} API")
#: Tails some tools add to a description: the same job, not quite the same words.
_TAILS = (
    " Answers in JSON.",
    " Free tier: 100 calls a day.",
    " Results are cached for an hour.",
    " Data refreshed every few minutes.",
    " Works worldwide.",
)
PERSONAS = (
    "I'm planning a weekend away.",
    "I run a small online shop.",
    "My team is preparing a report for Monday.",
    "I'm helping a friend with a project.",
    "",
)


@dataclass
class Tool:
    name: str
    category: str
    apis: list[dict[str, Any]] = field(default_factory=list)
    #: (job index, api dict) for the jobs a query can ask for.
    jobs: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    kind: str = "plain"  # plain | sibling | clone | lookalike


def _brand(rng: random.Random, taken: set[str]) -> str:
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 2, 3))))
        name = word.capitalize() + rng.choice(_SUFFIXES)
        if name not in taken:
            taken.add(name)
            return name


def _params(spec: list[tuple[str, str, str]]) -> tuple[list[Any], list[Any]]:
    made = [{"name": n, "type": t, "description": "", "default": v} for n, t, v in spec]
    return made[:1], made[1:]


def _api(category: str, tool: str, name: str, description: str, spec: Any) -> dict[str, Any]:
    required, optional = _params(spec)
    return {
        "category_name": category,
        "tool_name": tool,
        "api_name": name,
        "api_description": description,
        "required_parameters": required,
        "optional_parameters": optional,
        "method": "GET",
        "template_response": {"status": "str", "data": "dict"},
    }


def _plain(rng: random.Random, category: str, name: str) -> Tool:
    """An ordinary tool: every job of its category, each in one naming and wording."""
    tool = Tool(name, category)
    for index, (names, descriptions, spec, _) in enumerate(JOBS[category]):
        description = rng.choice(descriptions)
        if rng.random() < 0.8:  # most tools say it their own way: near, not exact, copies
            tail = rng.choice((*_TAILS, " Backed by {b} data.", " {b} keeps it current."))
            description += tail.format(b=name.split()[0])
        api = _api(category, name, rng.choice(names), description, spec)
        tool.apis.append(api)
        tool.jobs.append((index, api))
    if rng.random() < 0.5:
        tool.apis.append(_api(category, name, rng.choice(SHARED[0]), SHARED[1][0], []))
    return tool


def _copy(base: Tool, name: str, kind: str, rename: bool, rng: random.Random) -> Tool:
    """A re-published copy: same descriptions; API names kept or taken from another variant."""
    tool = Tool(name, base.category, kind=kind)
    for api in base.apis:
        new = dict(api, tool_name=name)
        if rename:
            variants = [
                n for job in JOBS[base.category] for n in job[0] if api["api_name"] in job[0]
            ]
            others = [n for n in variants if n != api["api_name"]]
            new["api_name"] = rng.choice(others) if others else api["api_name"] + " v2"
        tool.apis.append(new)
        for index, old in base.jobs:
            if old is api:
                tool.jobs.append((index, new))
    return tool


def _line(rng: random.Random, base: Tool, taken: set[str]) -> Tool:
    """Another product of the same brand ("Zorvel Hub" / "Zorvel Live"): not one family (the
    second words differ), names not near-identical, each description with another closing
    sentence (not near-identical either), yet the encoder puts many at cosine >= 0.9: the
    similarity ceiling is what catches those."""
    brand, own = base.name.split(" ", 1)
    words = [w for w in ("Live", "Direct", "Express", "Now", "Go", "Plus") if w != own.strip()]
    name = f"{brand} {rng.choice(words)}"
    while name in taken:
        name += "x"
    taken.add(name)
    tool = Tool(name, base.category, kind="line")
    for api in base.apis:
        old_text = api["api_description"]
        core = next((d for j in JOBS[base.category] for d in j[1] if old_text.startswith(d)), "")
        tails = [t for t in _TAILS if core + t != old_text]
        description = core + rng.choice(tails) if core else old_text + " Same as before."
        new = dict(api, tool_name=name, api_description=description)
        tool.apis.append(new)
        tool.jobs += [(index, new) for index, old in base.jobs if old is api]
    return tool


def make_pool(seed: int, tools_per_category: int) -> list[Tool]:
    """Plain tools plus siblings (~12 %), clones under another brand (~6 %), other products
    of the same brand (~15 % of tools with a two-word name) and look-alike brands one letter
    apart (~5 % of one-word names), category by category."""
    rng = random.Random(f"realshape-pool|{seed}")
    taken: set[str] = set()
    tools: list[Tool] = []
    for category in JOBS:
        for _ in range(tools_per_category):
            base = _plain(rng, category, _brand(rng, taken))
            tools.append(base)
            roll = rng.random()
            if roll < 0.12:
                pattern = rng.choice(_SIBLINGS)
                name = pattern.format(b=base.name)
                if name not in taken:
                    taken.add(name)
                    tools.append(_copy(base, name, "sibling", rename=False, rng=rng))
            elif roll < 0.18:
                tools.append(_copy(base, _brand(rng, taken), "clone", rename=True, rng=rng))
            elif roll < 0.33 and " " in base.name:
                tools.append(_line(rng, base, taken))
            elif roll < 0.38 and " " not in base.name:
                name = base.name + rng.choice("sxz")
                if name not in taken:
                    taken.add(name)
                    copy = _copy(base, name, "lookalike", rename=False, rng=rng)
                    for api in copy.apis:  # its own wording, the same endpoint names
                        job = [j for j in JOBS[category] if api["api_name"] in j[0]]
                        if job:
                            api["api_description"] = rng.choice(job[0][1])
                    tools.append(copy)
    return tools


def _request(rng: random.Random, category: str, job: int) -> str:
    _, _, spec, asks = JOBS[category][job]
    value = spec[0][2] if spec else ""
    return rng.choice(asks).format(v=value)


def _query(rng: random.Random, picks: list[tuple[Tool, int, dict[str, Any]]]) -> str:
    asks = [_request(rng, tool.category, job) for tool, job, _ in picks]
    opener = rng.choice(PERSONAS)
    body = "Can you find " + asks[0] + "?"
    for ask in asks[1:]:
        body += " I'd also like " + ask + "."
    return (opener + " " + body).strip()


def _record(rng: random.Random, picks: list[tuple[Tool, int, dict[str, Any]]], qid: int) -> Any:
    """One query: the relevant APIs plus one or two other APIs of each tool (never all of
    them, so the rest of a tool stays in the pool as a same-tool candidate)."""
    api_list: list[dict[str, Any]] = []
    for tool, _, api in picks:
        others = [a for a in tool.apis if a is not api and a not in api_list]
        api_list.append(api)
        api_list.extend(rng.sample(others, k=min(len(others), rng.choice((1, 2)))))
    return {
        "query": _query(rng, picks),
        "query_id": qid,
        "api_list": api_list,
        "relevant APIs": [[tool.name, api["api_name"]] for tool, _, api in picks],
    }


#: The public file names and how many tools a query draws (G1: one tool; G2: two tools of a
#: category; G3: two tools of different categories).
GROUPS = (("G1_instruction", 1, "same"), ("G2_category", 2, "same"), ("G3_instruction", 2, "any"))


def write_queries(out: Path, tools: list[Tool], queries: int, seed: int) -> dict[str, int]:
    """The query files (split 50/30/20 over G1/G2/G3) and one pool file with every API."""
    rng = random.Random(f"realshape-queries|{seed}")
    out.mkdir(parents=True, exist_ok=True)
    askable = [t for t in tools if t.kind == "plain"]
    by_category: dict[str, list[Tool]] = {}
    for tool in askable:
        by_category.setdefault(tool.category, []).append(tool)
    counts: dict[str, int] = {}
    qid = 1000
    for (name, width, scope), share in zip(GROUPS, (0.5, 0.3, 0.2), strict=True):
        records = []
        for _ in range(max(1, round(queries * share))):
            first = rng.choice(askable)
            chosen = [first]
            while len(chosen) < width:
                pool = by_category[first.category] if scope == "same" else askable
                extra = rng.choice(pool)
                if extra not in chosen:
                    chosen.append(extra)
            picks = [(t, *rng.choice(t.jobs)) for t in chosen]
            qid += 1
            records.append(_record(rng, picks, qid))
        _dump(out / f"{name}.json", records)
        counts[name] = len(records)
    return counts


def write_pool(path: Path, tools: list[Tool]) -> int:
    """Every API once, as query records (one per tool): the file ``--pool`` reads."""
    records = [
        {
            "query": f"(pool record for {tool.name})",
            "query_id": number,
            "api_list": tool.apis,
            "relevant APIs": [[tool.name, tool.apis[0]["api_name"]]],
        }
        for number, tool in enumerate(tools, start=1)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    _dump(path, records)
    return sum(len(t.apis) for t in tools)


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
