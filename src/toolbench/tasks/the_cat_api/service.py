"""The simulated Cat API (``api.thecatapi.com/v1``) as one FastAPI app over per-request worlds.

Endpoints: image search and lookup, breeds (list, by id, search), categories, and the user's
favourites and votes (list, get, add, delete). Read endpoints serve the seeded catalogue
(``catalogue.py``); write endpoints change only the world injected into the request
(``request.state.world``), so concurrent executions never share state.

Errors follow the real service where its behaviour is known: status 400 with a plain-text body,
e.g. ``Couldn't find an image matching the passed 'id' of xyz`` for an unknown image,
``DUPLICATE_FAVOURITE - favourites are unique for account + image_id + sub_id`` for a repeated
favourite, ``INVALID_ACCOUNT`` for a favourite or vote id the account does not own, and
``"image_id" is required`` for a missing field. An unknown breed id gives 404 ``NOT_FOUND``.
No API key is required (the original task's curl lines send none); ``api_key`` is ignored.

Values outside the documented sets are 400s in the same plain-text shape, naming the
parameter: ``size`` (thumb, small, med, full), ``mime_types`` (jpg, png, gif), ``order``
(RANDOM, ASC, DESC; ASC/DESC for favourites and votes), breed and category ids that do not
exist, boolean flags other than 0/1/true/false, and a vote ``value`` other than -1, 0 or 1.
A down-vote is ``-1``, as in the original task's test set (whose golds ran against the live
service) and the service's current clients; ``0``, the down value of the service's older
documentation, is accepted too and stored as it was sent (a different vote from ``-1``).

Image search (``search.py`` over the procedural ``catalogue.py``): ``limit`` defaults to 1 and
is clamped to 1..100; ``page`` is 0-based; ``order`` is ASC (oldest upload first), DESC or
RANDOM (the default), a draw seeded by the world's seed, the selected images and the page, so
the same request on the same world always gives the same images. ``size`` (default med)
scales the reported width and height.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.datastructures import QueryParams
from starlette.requests import ClientDisconnect

from toolbench.tasks.the_cat_api import search
from toolbench.tasks.the_cat_api.breeds import BREED_BY_ID, BREEDS, CATEGORIES, CATEGORY_IDS
from toolbench.tasks.the_cat_api.catalogue import MAX_LIMIT, SIZES, Image, breed_json, image_at
from toolbench.tasks.the_cat_api.world import (
    COUNTRY_CODE,
    FAVOURITE_ID_BASE,
    USER_ID,
    VOTE_ID_BASE,
    CatWorld,
    make_world,
    snapshot,
)

HOST = "api.thecatapi.com"
MAX_BODY = 64 * 1024  # bytes; a favourite or vote is a few dozen
MAX_DEPTH = 32  # JSON nesting; a favourite or vote is one flat object
VOTE_VALUES = (-1, 0, 1)  # down, older clients' down, up
DUPLICATE = "DUPLICATE_FAVOURITE - favourites are unique for account + image_id + sub_id"
_MIME_ALIASES = {"jpg": "jpg", "jpeg": "jpg", "png": "png", "gif": "gif"}
_BOOLEANS = {"1": True, "true": True, "0": False, "false": False}


class ApiError(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class _StripSlash:
    """Treat ``/v1/breeds/`` like ``/v1/breeds`` instead of redirecting."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and len(path) > 1 and path.endswith("/"):
            scope = dict(scope, path=path.rstrip("/") or "/")
            scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)


app = FastAPI(title="The Cat API (simulated)", openapi_url=None, docs_url=None, redoc_url=None)
app.add_middleware(_StripSlash)


@app.exception_handler(ApiError)
async def _api_error(request: Request, exc: ApiError) -> Response:
    return PlainTextResponse(exc.text, status_code=exc.status)


def _world(request: Request) -> CatWorld:
    world = getattr(request.state, "world", None)
    if not isinstance(world, CatWorld):
        raise RuntimeError("no Cat API world in the request scope")
    return world


def _int(params: QueryParams, name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(float(raw))
    except (ValueError, OverflowError):
        raise ApiError(400, f'"{name}" must be a number') from None
    return min(max(value, low), high)


def _list(params: QueryParams, *names: str) -> list[str]:
    items: list[str] = []
    for name in names:
        for raw in params.getlist(name):
            items += [part.strip() for part in raw.split(",") if part.strip()]
    return items


def _page(items: list[Any], params: QueryParams, default_limit: int) -> list[Any]:
    limit = _int(params, "limit", default_limit, 1, max(default_limit, MAX_LIMIT))
    page = _int(params, "page", 0, 0, 10**6)
    return items[page * limit : (page + 1) * limit]


# Older versions of the API's docs and examples spell random order RAND; it is the same order.
_ORDER_ALIASES = {"RAND": "RANDOM"}


def _order(params: QueryParams, default: str, allowed: tuple[str, ...]) -> str:
    order = (params.get("order") or default).strip().upper()
    order = _ORDER_ALIASES.get(order, order) if "RANDOM" in allowed else order
    if order not in allowed:
        raise ApiError(400, f'"order" must be one of [{", ".join(allowed)}]')
    return order


def _flag(params: QueryParams, name: str, default: bool) -> bool:
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in _BOOLEANS:
        raise ApiError(400, f'"{name}" must be one of [0, 1, true, false]')
    return _BOOLEANS[value]


# --- images ---------------------------------------------------------------------------------


def _filters(params: QueryParams) -> search.Selection:
    """The buckets a search's filters select; an unknown value is the API's 400, so a typo
    never passes for an empty (or unfiltered) answer."""
    mimes: set[str] = set()
    for mime in _list(params, "mime_types"):
        key = _MIME_ALIASES.get(mime.lower().removeprefix("image/"))
        if key is None:
            raise ApiError(400, '"mime_types" must be one of [jpg, png, gif]')
        mimes.add(key)
    breeds = {b.lower() for b in _list(params, "breed_ids", "breeds")}
    unknown = sorted(b for b in breeds if b not in BREED_BY_ID)
    if unknown:
        raise ApiError(400, f'"breed_ids" must be existing breed ids (unknown: {unknown[0][:40]})')
    categories: set[int] = set()
    for raw in _list(params, "category_ids"):
        category = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else None
        if category is None or category not in CATEGORY_IDS:
            raise ApiError(
                400, f'"category_ids" must be existing category ids (unknown: {raw[:40]})'
            )
        categories.add(category)
    return search.select(
        frozenset(breeds) or None,
        frozenset(categories) or None,
        frozenset(mimes) or None,
        _flag(params, "has_breeds", False),
    )


def search_images(world: CatWorld, params: QueryParams) -> list[dict[str, Any]]:
    selection = _filters(params)
    size = (params.get("size") or "med").strip().lower()
    if size not in SIZES:
        raise ApiError(400, '"size" must be one of [thumb, small, med, full]')
    order = _order(params, "RANDOM", ("RANDOM", "ASC", "DESC"))
    limit = _int(params, "limit", 1, 1, MAX_LIMIT)
    page = _int(params, "page", 0, 0, 10**6)
    if order == "RANDOM":
        found = search.sampled(selection, world.seed, page, limit)
    else:
        found = search.ordered(selection, order == "DESC", page * limit, (page + 1) * limit)
    include_breeds = _flag(params, "include_breeds", True)
    include_categories = _flag(params, "include_categories", True)
    return [image_at(i).to_json(include_breeds, include_categories, size) for i in found]


def _image(world: CatWorld, image_id: str) -> Image:
    image = world.image(image_id)
    if image is None:
        raise ApiError(400, f"Couldn't find an image matching the passed 'id' of {image_id}")
    return image


@app.get("/v1/images/search")
async def images_search(request: Request) -> list[dict[str, Any]]:
    return search_images(_world(request), request.query_params)


@app.get("/v1/images/{image_id}")
async def image_by_id(request: Request, image_id: str) -> dict[str, Any]:
    return _image(_world(request), image_id).to_json()


# --- breeds and categories ------------------------------------------------------------------


@app.get("/v1/breeds")
async def breeds_list(request: Request) -> list[dict[str, Any]]:
    return [breed_json(b["id"]) for b in _page(list(BREEDS), request.query_params, len(BREEDS))]


@app.get("/v1/breeds/search")
async def breeds_search(request: Request) -> list[dict[str, Any]]:
    query = (request.query_params.get("q") or request.query_params.get("name") or "").strip()
    if not query:
        raise ApiError(400, '"q" is required')
    return [breed_json(b["id"]) for b in BREEDS if query.lower() in b["name"].lower()]


@app.get("/v1/breeds/{breed_id}")
async def breed_by_id(breed_id: str) -> dict[str, Any]:
    if breed_id.lower() not in BREED_BY_ID:
        raise ApiError(404, "NOT_FOUND")
    return breed_json(breed_id.lower())


@app.get("/v1/categories")
async def categories_list(request: Request) -> list[dict[str, Any]]:
    return [dict(c) for c in _page(list(CATEGORIES), request.query_params, len(CATEGORIES))]


# --- favourites and votes -------------------------------------------------------------------


async def _read(request: Request) -> str:
    """The body as text, at most ``MAX_BODY`` bytes: under ``toolbench serve`` a client may
    announce (or send) gigabytes, which is a 413 here, not memory spent."""
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise ApiError(413, "request entity too large")
            chunks.append(chunk)
    except ClientDisconnect:  # a body shorter than its Content-Length: no one to answer
        raise ApiError(400, "request body ended early") from None
    return b"".join(chunks).decode("utf-8", "replace").strip()


class _NotJson(ValueError):
    """NaN/Infinity, which Python's decoder accepts but JSON (and the real API) does not."""


def _no_constant(name: str) -> Any:
    raise _NotJson(name)


async def _body(request: Request) -> dict[str, Any]:
    r"""The JSON (or form) object a write sent. Hostile JSON is the API's 400, never an
    exception out of the handler: nesting past ``MAX_DEPTH`` (the decoder would recurse),
    NaN/Infinity (not JSON; would poison comparisons), integers past Python's 4300-digit
    limit, and strings with lone surrogates (``\ud800`` escapes, which no response could
    encode)."""
    raw = await _read(request)
    if not raw:
        return {}
    if _depth(raw) > MAX_DEPTH:
        raise ApiError(400, f"request body is nested too deeply (at most {MAX_DEPTH} levels)")
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except json.JSONDecodeError:
        data = dict(parse_qsl(raw)) if "=" in raw else None
    except _NotJson as exc:
        raise ApiError(400, f"request body is not valid JSON ({exc} is not a number)") from None
    except ValueError:  # an integer past Python's 4300-digit limit
        raise ApiError(400, "request body has a number too long to read") from None
    except RecursionError:  # unreachable after _depth(); kept as the decoder's own limit
        raise ApiError(400, "request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise ApiError(400, '"value" must be of type object')
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "request body is not valid UTF-8") from None
    return data


def _depth(text: str) -> int:
    """How deeply ``[``/``{`` nest in ``text``, outside JSON strings (a linear scan)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _image_field(world: CatWorld, body: Mapping[str, Any]) -> str:
    if body.get("image_id") is None:
        raise ApiError(400, '"image_id" is required')
    if not isinstance(body["image_id"], str):
        raise ApiError(400, '"image_id" must be a string')
    return _image(world, body["image_id"]).id


def _sub_id(body: Mapping[str, Any]) -> str | None:
    sub_id = body.get("sub_id")
    if sub_id is not None and not isinstance(sub_id, str):
        raise ApiError(400, '"sub_id" must be a string')
    return sub_id


def _owned(records: list[dict[str, Any]], record_id: str) -> dict[str, Any]:
    for record in records:
        if str(record["id"]) == record_id:
            return record
    raise ApiError(400, "INVALID_ACCOUNT")


def _listing(records: list[dict[str, Any]], world: CatWorld, params: QueryParams) -> list[Any]:
    sub_id = params.get("sub_id")
    found = [r for r in records if sub_id is None or r["sub_id"] == sub_id]
    if _order(params, "ASC", ("ASC", "DESC")) == "DESC":
        found.reverse()
    return [_with_image(world, r) for r in _page(found, params, MAX_LIMIT)]


def _with_image(world: CatWorld, record: dict[str, Any]) -> dict[str, Any]:
    image = world.image(record["image_id"])
    return {**record, "image": {"id": image.id, "url": image.url} if image else {}}


@app.get("/v1/favourites")
async def favourites_list(request: Request) -> list[dict[str, Any]]:
    world = _world(request)
    return _listing(world.favourites, world, request.query_params)


@app.get("/v1/favourites/{favourite_id}")
async def favourite_get(request: Request, favourite_id: str) -> dict[str, Any]:
    world = _world(request)
    return _with_image(world, _owned(world.favourites, favourite_id))


@app.post("/v1/favourites")
async def favourite_add(request: Request) -> dict[str, Any]:
    world = _world(request)
    body = await _body(request)
    image_id, sub_id = _image_field(world, body), _sub_id(body)
    if any(f["image_id"] == image_id and f["sub_id"] == sub_id for f in world.favourites):
        raise ApiError(400, DUPLICATE)
    new_id = world.next_id(world.favourites, FAVOURITE_ID_BASE)
    world.favourites.append(
        {
            "id": new_id,
            "user_id": USER_ID,
            "image_id": image_id,
            "sub_id": sub_id,
            "created_at": world.stamp(),
        }
    )
    return {"message": "SUCCESS", "id": new_id}


@app.delete("/v1/favourites/{favourite_id}")
async def favourite_delete(request: Request, favourite_id: str) -> dict[str, Any]:
    world = _world(request)
    world.favourites.remove(_owned(world.favourites, favourite_id))
    return {"message": "SUCCESS"}


@app.get("/v1/votes")
async def votes_list(request: Request) -> list[dict[str, Any]]:
    world = _world(request)
    return _listing(world.votes, world, request.query_params)


@app.get("/v1/votes/{vote_id}")
async def vote_get(request: Request, vote_id: str) -> dict[str, Any]:
    world = _world(request)
    return _with_image(world, _owned(world.votes, vote_id))


@app.post("/v1/votes", status_code=201)
async def vote_add(request: Request) -> dict[str, Any]:
    world = _world(request)
    body = await _body(request)
    image_id, sub_id = _image_field(world, body), _sub_id(body)
    raw = body.get("value")
    if raw is None:
        raise ApiError(400, '"value" is required')
    try:
        if isinstance(raw, bool) or float(raw) != int(float(raw)):
            raise ValueError
        value = int(float(raw))
    except (TypeError, ValueError, OverflowError):
        raise ApiError(400, '"value" must be an integer') from None
    if value not in VOTE_VALUES:
        raise ApiError(400, f'"value" must be one of {list(VOTE_VALUES)}')
    new_id = world.next_id(world.votes, VOTE_ID_BASE)
    vote = {"id": new_id, "image_id": image_id, "sub_id": sub_id, "created_at": world.stamp()}
    world.votes.append({**vote, "value": value, "country_code": COUNTRY_CODE})
    return {
        "message": "SUCCESS",
        "id": new_id,
        "image_id": image_id,
        "sub_id": sub_id,
        "value": value,
        "country_code": COUNTRY_CODE,
    }


@app.delete("/v1/votes/{vote_id}")
async def vote_delete(request: Request, vote_id: str) -> dict[str, Any]:
    world = _world(request)
    world.votes.remove(_owned(world.votes, vote_id))
    return {"message": "SUCCESS"}


# --- the service object ---------------------------------------------------------------------


def bind(world: CatWorld, asgi: Any = app) -> Any:
    """``asgi`` with ``world`` injected into every request's scope (tests, ``toolbench serve``)."""

    async def bound(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = dict(scope, state={**scope.get("state", {}), "world": world})
        await asgi(scope, receive, send)

    return bound


class CatApiService:
    name = "the_cat_api"
    hosts = frozenset({HOST})

    @property
    def app(self) -> Any:
        return app

    def new_state(self, fields: Mapping[str, Any]) -> CatWorld:
        return make_world(fields.get("state"), seed=int(fields.get("seed") or 0))

    def snapshot(self, state: Any) -> Any:
        return snapshot(state)

    checks_api_key = False  # the simulator accepts any key (or none)

    def world_accepting(self, key: str) -> CatWorld:
        raise NotImplementedError("the Cat API simulator checks no key")


SERVICE = CatApiService()


def serve_app() -> Any:
    """An ASGI app bound to one default (empty) world, for ``toolbench serve``."""
    return bind(SERVICE.new_state({}))
