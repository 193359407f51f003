"""Rewrites and perturbations of one-line curl golds (open_weather, the_cat_api).

A gold is read as ``curl -X METHOD 'URL' [--data 'JSON']`` (the original data's shape); lines
of another shape only get the whitespace rewrite. Rewrites respell the same request (quoting,
parameter order, ``%20``/``+``, ``-G -d``, explicit defaults, JSON spacing); perturbations change
what is asked (a value, a parameter dropped or added, an endpoint, an id on a write).
``compare_string_only`` lines are judged by their text, as in the original, so for them only
whitespace is a rewrite.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tests.judge_validity.cases import Case, fenced, perturbations, rewrites, rotate
from toolbench.sandbox.curl import CurlError, parse_curl

# open_weather: what the original appended when missing, except on these endpoints
WEATHER_DEFAULTS = (("lang", "en"), ("units", "standard"), ("mode", "json"))
NO_DEFAULTS = ("/data/2.5/air_pollution", "/geo/1.0/direct")
COUNTS = ("limit", "cnt", "page")
CAT = "the_cat_api"
LOCATION = ("q", "zip", "id", "lat", "lon")  # open_weather: one place per request
# the_cat_api image search: what the service assumes when a parameter is left out
IMAGE_SEARCH_DEFAULTS: tuple[tuple[str, str], ...] = (("order", "RAND"), ("limit", "1"))
IMAGE_SEARCH_DEFAULTS += (("page", "0"), ("include_breeds", "1"), ("has_breeds", "0"))


@dataclass(frozen=True)
class Line:
    method: str
    base: str  # URL without the query
    params: tuple[tuple[str, str], ...]  # raw (still encoded) name/value pairs
    body: str | None

    @classmethod
    def read(cls, gold: str) -> Line | None:
        words = shlex.split(gold)
        if words[:2] != ["curl", "-X"] or len(words) not in (4, 6):
            return None
        if len(words) == 6 and words[4] not in ("--data", "-d"):
            return None
        base, _, query = words[3].partition("?")
        params = tuple(tuple(p.partition("=")[::2]) for p in query.split("&") if p)
        return cls(words[2], base, params, words[5] if len(words) == 6 else None)  # type: ignore[arg-type]

    @property
    def path(self) -> str:
        return "/" + self.base.split("/", 3)[3]

    def url(self) -> str:
        query = "&".join(f"{k}={v}" for k, v in self.params)
        return f"{self.base}?{query}" if query else self.base

    def render(self, quote: str = "'", method_flag: str = "-X", data_flag: str = "--data") -> str:
        head = f"curl {method_flag} {self.method} " if method_flag else "curl "
        line = f"{head}{quote}{self.url()}{quote}"
        return f"{line} {data_flag} '{self.body}'" if self.body is not None else line


# -- rewrites ----------------------------------------------------------------------------------


def curl_rewrites(task: str, gold: str, string_only: bool) -> list[Case]:
    edits: dict[str, Callable[[str], str | None]] = {
        "whitespace": _spaced,
        "fenced_chat_reply": fenced,
    }
    line = Line.read(gold)
    if line is not None and not string_only:
        edits.update(
            {
                "double_quotes": lambda _: line.render(quote='"'),
                "long_method_option": lambda _: line.render(method_flag="--request"),
                "parameter_order": lambda _: _reordered(line),
                "plus_for_space": lambda _: _respelled(line, "%20", "+"),
                "percent_encoded_comma": lambda _: _respelled(line, ",", "%2C"),
                "get_with_data_options": lambda _: _as_get_data(line),
                "implicit_get": lambda _: (
                    line.render(method_flag="") if line.method == "GET" else None
                ),
                "json_body_respelled": lambda _: _json_respelled(line),
            }
        )
        if task == "open_weather":
            edits["explicit_defaults"] = lambda _: _explicit_defaults(line)
    return rewrites(gold, edits)


def _spaced(gold: str) -> str:
    """Runs of spaces between words and around the line (outside the quotes)."""
    return (
        "  "
        + " ".join(f"{w} " if w.startswith(("curl", "-")) else w for w in _split_outside(gold))
        + "   "
    )


def _split_outside(gold: str) -> list[str]:
    """Words of the line with their quotes kept (split on spaces outside quotes)."""
    words, current, quote = [], "", ""
    for char in gold:
        if char in "'\"" and (not quote or quote == char):
            quote = "" if quote else char
        if char == " " and not quote:
            words.append(current)
            current = ""
        else:
            current += char
    return [*words, current]


def _reordered(line: Line) -> str | None:
    return (
        line.render() if len(line.params) < 2 else replace(line, params=line.params[::-1]).render()
    )


def _respelled(line: Line, old: str, new: str) -> str | None:
    params = tuple((k, v.replace(old, new)) for k, v in line.params)
    return replace(line, params=params).render() if params != line.params else None


def _as_get_data(line: Line) -> str | None:
    if line.method != "GET" or not line.params:
        return None
    data = " ".join(f"-d '{k}={v}'" for k, v in line.params)
    return f"curl -G '{line.base}' {data}"


def _json_respelled(line: Line) -> str | None:
    """The body's keys in reverse order with other spacing, sent with ``-d`` and a content type."""
    if line.body is None:
        return None
    try:
        body = json.loads(line.body)
    except ValueError:
        return None
    text = json.dumps(dict(reversed(list(body.items()))), separators=(" ,", " : "))
    respelled = replace(line, body=text).render(data_flag="-d")
    return f"{respelled} -H 'Content-Type: application/json'"


def _explicit_defaults(line: Line) -> str | None:
    if line.path.startswith(NO_DEFAULTS):
        return None
    names = {k for k, _ in line.params}
    extra = tuple((k, v) for k, v in WEATHER_DEFAULTS if k not in names)
    return replace(line, params=line.params + extra).render() if extra else None


# -- perturbations -----------------------------------------------------------------------------


def curl_perturbations(
    task: str, gold: str, golds: Sequence[str], seed: int, state: Any
) -> list[Case]:
    line = Line.read(gold)
    if line is None:
        return []
    others = [o for o in (Line.read(g) for g in golds) if o is not None]
    found = [
        *_wrong_values(line, others, seed),
        ("dropped_parameter", _dropped(line, seed)),
        ("added_parameter", _added(line, others, seed)),
        ("other_endpoint", _other_endpoint(line, others, seed)),
        ("other_id_in_path", _other_path_id(line, others, seed, state) if task == CAT else None),
        *_body_changes(line, others, seed),
    ]
    return perturbations(found, gold)


def _values_of(others: Sequence[Line], name: str) -> list[str]:
    return sorted({v for o in others for k, v in o.params if k == name})


def _wrong_values(line: Line, others: Sequence[Line], seed: int) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for index, (name, value) in enumerate(line.params):
        new: str | None
        if name == "appid":
            continue
        if name.startswith(("has_", "include_")) and value in ("0", "1"):
            kind, new = "flipped_flag", "1" if value == "0" else "0"
        elif name in COUNTS and value.isdigit():
            kind, new = "off_by_one_limit", str(int(value) + 1)
        elif _is_number(value):
            kind, new = "wrong_number", _bumped(value)
        else:
            kind, new = f"wrong_{name}", rotate(_values_of(others, name), seed, value)
        if new is not None:
            params = list(line.params)
            params[index] = (name, new)
            found.append((kind, replace(line, params=tuple(params)).render()))
    return found


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _bumped(value: str) -> str:
    """One more in the integer part, keeping the decimals as written (27.8580 -> 28.8580)."""
    whole, dot, decimals = value.partition(".")
    return f"{int(whole) + 1 if not whole.startswith('-') else int(whole) - 1}{dot}{decimals}"


# parameters whose removal or addition asks for nothing else (the services' defaults)
NO_OP = frozenset(WEATHER_DEFAULTS) | frozenset(IMAGE_SEARCH_DEFAULTS)


def _dropped(line: Line, seed: int) -> str | None:
    droppable = [i for i, p in enumerate(line.params) if p[0] != "appid" and p not in NO_OP]
    if not droppable:
        return None
    index = droppable[seed % len(droppable)]
    return replace(line, params=line.params[:index] + line.params[index + 1 :]).render()


def _added(line: Line, others: Sequence[Line], seed: int) -> str | None:
    """A parameter another gold of the same GET endpoint sets (never a second place)."""
    names = {k for k, _ in line.params}
    if line.method != "GET":
        return None
    if names & set(LOCATION):
        names |= set(LOCATION)
    same = [o for o in others if o.path == line.path]
    extra = sorted({p for o in same for p in o.params if p[0] not in names and p not in NO_OP})
    if not extra:
        return None
    return replace(line, params=(*line.params, extra[seed % len(extra)])).render()


def _other_endpoint(line: Line, others: Sequence[Line], seed: int) -> str | None:
    """The same parameters sent to another collection endpoint of the same method."""
    bases = sorted(
        {
            o.base
            for o in others
            if o.method == line.method and o.base.count("/") == line.base.count("/")
        }
    )
    base = rotate(bases, seed, line.base)
    return replace(line, base=base).render() if base else None


def _other_path_id(line: Line, others: Sequence[Line], seed: int, state: Any) -> str | None:
    """Another id in a ``/collection/{id}`` path: one the world has, else one from other golds."""
    head, _, last = line.base.rpartition("/")
    if head.rstrip("/").endswith("/v1") or not last or line.path.count("/") < 3:
        return None
    collection = head.rsplit("/", 1)[1]
    known = [
        str(item["id"]) for item in (state or {}).get(collection, []) if isinstance(item, dict)
    ]
    known += sorted(
        {o.base.rpartition("/")[2] for o in others if o.base.rpartition("/")[0] == head}
    )
    new = rotate(known, seed, last)
    return replace(line, base=f"{head}/{new}").render() if new else None


def _body_changes(line: Line, others: Sequence[Line], seed: int) -> list[tuple[str, str | None]]:
    """A write sent with another image id, or another value of a body field."""
    if line.body is None:
        return []
    try:
        body = json.loads(line.body)
    except ValueError:
        return []
    bodies = [json.loads(o.body) for o in others if o.body is not None]
    found: list[tuple[str, str | None]] = []
    for key, value in body.items():
        seen = sorted({str(b[key]) for b in bodies if key in b} - {str(value)})
        if isinstance(value, int):
            new: Any = 1 - value if key == "value" else value + 1
        else:
            new = rotate(seen, seed, value)
        if new is not None:
            changed = json.dumps({**body, key: new})
            found.append((f"other_{key}_in_body", replace(line, body=changed).render()))
    return found


# -- does a perturbation ask for something else? -----------------------------------------------


def same_request(task: str, prediction: str, labels: Sequence[str]) -> bool:
    mine = _decoded(task, prediction)
    return mine is not None and any(mine == _decoded(task, label) for label in labels)


# open_weather parameters whose values the API maps many to one: ``limit`` is capped at 5 and
# cannot show more places than match, PO-box ZIPs share their area's centroid, and nearby
# coordinates can have the same nearest places. A perturbation of only these that gets the
# gold's very response is the same answer in this world (and in the real API), not a blind spot.
MANY_TO_ONE = {"open_weather": frozenset({"limit", "zip", "lat", "lon"})}


def differs_only_in_many_to_one(task: str, prediction: str, labels: Sequence[str]) -> bool:
    """Same method, host and path as a label, and only ``MANY_TO_ONE`` parameters differ."""
    names = MANY_TO_ONE.get(task)
    mine = _decoded(task, prediction)
    if names is None or mine is None:
        return False
    for label in labels:
        theirs = _decoded(task, label)
        if theirs is None or mine[:3] != theirs[:3] or mine[4] != theirs[4]:
            continue
        changed = set(dict(mine[3]).items()) ^ set(dict(theirs[3]).items())
        if {name for name, _ in changed} <= names:
            return True
    return False


def _decoded(task: str, line: str) -> tuple[Any, ...] | None:
    """Method, path, parameters (defaults filled, numbers as numbers) and parsed body."""
    try:
        request = parse_curl(line, api_key="KEY")
    except CurlError:
        return None
    params = {k: _number_or_text(v) for k, v in request.query}
    if task == "open_weather" and not request.path.startswith(NO_DEFAULTS):
        for name, value in WEATHER_DEFAULTS:
            params.setdefault(name, value)
    if task == CAT and request.path == "/v1/images/search":
        for name, value in IMAGE_SEARCH_DEFAULTS:
            params.setdefault(name, _number_or_text(value))
    try:
        body = json.loads(request.body) if request.body else None
    except ValueError:
        body = request.body
    return request.method, request.host, request.path, sorted(params.items()), json.dumps(body)


def _number_or_text(value: str) -> Any:
    return float(value) if _is_number(value) else value
