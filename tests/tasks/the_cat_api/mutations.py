"""Deliberately wrong requests and semantically equivalent rewrites of a gold curl line.

A wrong request differs from the gold in meaning: another endpoint, another value, a dropped
or added filter, a limit off by one, another id on a write. An equivalent one differs only in
form: query order, quoting, ``-d`` for ``--data``, explicit defaults.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.tasks.the_cat_api.judging import V1
from toolbench.tasks.the_cat_api.catalogue import id_at
from toolbench.tasks.the_cat_api.derive import split_curl

OTHER_IMAGE = id_at(4242)


def _parts(gold: str) -> tuple[str, str, list[tuple[str, str]], dict[str, Any] | None]:
    method, url, body = split_curl(gold)
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k]
    return method, parts.path.removeprefix("/v1/"), query, json.loads(body) if body else None


def _line(method: str, path: str, query: list[tuple[str, Any]], body: Any = None) -> str:
    url = f"{V1}/{path}" + (f"?{urlencode(query, safe=',')}" if query else "")
    data = f" --data '{json.dumps(body)}'" if body is not None else ""
    return f"curl -X {method} '{url}'{data}"


def _set(query: list[tuple[str, str]], key: str, value: Any) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in query if k != key] + [(key, value)]


def _drop(query: list[tuple[str, str]], key: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in query if k != key]


def _search_mutations(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    params = dict(query)
    limit = int(params.get("limit", 1))
    out = [
        ("limit off by one", _line("GET", "images/search", _set(query, "limit", limit + 1))),
        ("wrong endpoint", _line("GET", "breeds", [("limit", limit)])),
        ("size typo", _line("GET", "images/search", _set(query, "size", "fullx"))),
    ]
    if limit > 1:
        out.append(("limit minus one", _line("GET", "images/search", _set(query, "limit", 1))))
    for key in ("breed_ids", "breeds", "category_ids", "mime_types", "order", "page"):
        if key in params and params[key] != "RANDOM":  # RANDOM is the default
            out.append((f"dropped {key}", _line("GET", "images/search", _drop(query, key))))
    if "breed_ids" in params or "breeds" in params:
        key = "breed_ids" if "breed_ids" in params else "breeds"
        wrong = params[key] + ",siamx"
        out.append(("nonexistent breed", _line("GET", "images/search", _set(query, key, wrong))))
        other = "beng" if "beng" not in params[key] else "abys"
        out.append(("other breed", _line("GET", "images/search", _set(query, key, other))))
    else:
        added = ("has_breeds", 1) if "has_breeds" not in params else ("category_ids", 1)
        out.append(("added filter", _line("GET", "images/search", [*query, added])))
    flipped = {"ASC": "DESC", "DESC": "ASC"}.get(params.get("order", ""), "ASC")
    out.append(("other order", _line("GET", "images/search", _set(query, "order", flipped))))
    mime = "gif" if params.get("mime_types") != "gif" else "png"
    out.append(("other mime", _line("GET", "images/search", _set(query, "mime_types", mime))))
    return out


def _record_ids(state: dict[str, Any] | None, kind: str, exclude: str) -> list[str]:
    records = (state or {}).get(kind, [])
    return [str(r["id"]) for r in records if str(r["id"]) != exclude] or ["424242"]


def wrong_requests(gold: str, state: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(what is wrong, curl line) pairs for one gold line."""
    method, path, query, body = _parts(gold)
    head, _, ident = path.partition("/")
    if (method, path) == ("GET", "images/search"):
        return _search_mutations(query)
    if method == "GET" and head in ("favourites", "votes") and not ident:
        other = "votes" if head == "favourites" else "favourites"
        # One more than asked, or (no limit asked) fewer than all.
        limit = int(dict(query)["limit"]) + 1 if "limit" in dict(query) else 1
        flip = "ASC" if dict(query).get("order") == "DESC" else "DESC"
        return [
            ("wrong endpoint", _line("GET", other, query)),
            ("added sub_id", _line("GET", head, _set(query, "sub_id", "nobody-here"))),
            ("limit off by one", _line("GET", head, _set(query, "limit", limit))),
            ("other order", _line("GET", head, _set(query, "order", flip))),
        ]
    if head in ("favourites", "votes") and ident:
        other_id = _record_ids(state, head, ident)[0]
        other_kind = "votes" if head == "favourites" else "favourites"
        return [
            ("another id", _line(method, f"{head}/{other_id}", [])),
            ("wrong endpoint", _line(method, f"{other_kind}/{ident}", [])),
        ]
    if method == "POST" and body is not None:
        other_kind = "votes" if head == "favourites" else "favourites"
        wrong_body = dict(body, image_id=OTHER_IMAGE)
        out = [
            ("another image on a write", _line("POST", head, [], wrong_body)),
            ("wrong endpoint", _line("POST", other_kind, [], {**body, "value": 1})),
            ("added sub_id", _line("POST", head, [], {**body, "sub_id": "not-asked"})),
        ]
        if head == "votes":
            flipped = -1 if int(body.get("value", 1)) == 1 else 1  # the other direction
            out.append(("other vote value", _line("POST", head, [], {**body, "value": flipped})))
        return out
    if head == "breeds" and ident and ident != "search":
        other = "breeds/beng" if ident != "beng" else "breeds/abys"
        return [("other breed", _line("GET", other, []))]
    if path == "breeds/search":
        return [("other query", _line("GET", path, [("q", "rex")]))]
    if head == "breeds":
        limit = int(dict(query).get("limit", 5))
        return [
            ("limit off by one", _line("GET", "breeds", _set(query, "limit", limit + 1))),
            ("wrong endpoint", _line("GET", "categories", [])),
        ]
    if head == "categories":
        return [("wrong endpoint", _line("GET", "breeds", []))]
    if head == "images" and ident:
        return [
            ("another image", _line("GET", f"images/{OTHER_IMAGE}", [])),
            ("wrong endpoint", _line("GET", "images/search", [])),
        ]
    raise AssertionError(f"no mutations for {gold}")


_DEFAULTS = {
    "images/search": [("limit", "1"), ("page", "0"), ("order", "RANDOM"), ("size", "med"),
                      ("include_breeds", "1"), ("has_breeds", "0")],
    "favourites": [("order", "ASC")],
    "votes": [("order", "ASC")],
}  # fmt: skip


def equivalent_requests(gold: str) -> list[tuple[str, str]]:
    """(how it is rewritten, curl line) pairs that mean exactly what the gold means."""
    method, url, body = split_curl(gold)
    _, path, query, parsed = _parts(gold)
    out = []
    reordered = list(reversed(query))
    out.append(("param order", _line(method, path, reordered, parsed)))
    escaped = (body or "").replace('"', '\\"')
    data = f' --data "{escaped}"' if body is not None else ""
    out.append(("double quotes", f'curl -X {method} "{url}"{data}'))
    if body is not None:
        out.append(("-d", f"curl -X {method} '{url}' -d '{body}'"))
        header = "-H 'Content-Type: application/json'"
        out.append(("json header", f"curl '{url}' {header} -d '{body}'"))
    elif method == "GET":
        out.append(("no -X GET", f"curl '{url}'"))
    else:
        out.append(("--request", f"curl --request {method} '{url}'"))
    present = {k for k, _ in query}
    defaults = [(k, v) for k, v in _DEFAULTS.get(path, []) if k not in present]
    if defaults:
        out.append(("explicit defaults", _line(method, path, query + defaults, parsed)))
    return out
