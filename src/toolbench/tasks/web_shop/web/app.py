"""The store over HTTP: HTML pages a person can shop in, and a JSON API for agent frameworks.

Both faces drive the same ``Episode`` (``episode.py``) over the task's ``Session``: a button
on a page posts the exact action a model would write (``click[Buy Now]``, ``click[< Prev]``,
``click[b0abc12345]``; the search box sends ``search[<what was typed>]``), so a person, a
framework and a model are judged by one implementation of the rules and the reward.

HTML: ``GET /`` opens an episode (``?goal=N``, else the picker's next goal) and redirects to
``/s/<id>``; ``POST /s/<id>`` applies one action and redirects back (post/redirect/get).
JSON: ``POST /api/sessions`` (optional ``{"goal": N}``) -> id and first observation;
``POST /api/sessions/<id>/step`` ``{"action": "search[...]"}`` -> observation, page, reward,
done; ``GET /api/sessions/<id>``. Session ids are unguessable and live in the URL (no
cookies); the server keeps at most ``MAX_SESSIONS`` (the least recently used go first).

Everything a client sends is hostile input: bodies are read up to a cap, JSON is parsed
totally, actions are bounded, and pages are rendered by autoescaped templates under a
content security policy that allows no script at all. Every POST goes through the review UI's
same-origin rule (``toolbench.webcheck``): a form another web page sends to this server from
the same browser (its ``Origin`` or ``Sec-Fetch-Site`` says so) is refused with 403 and changes
nothing; clients that send neither header (agent frameworks, curl) are served, since only a
browser can be made to send another page's form.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs

import jinja2
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolbench.tasks.web_shop.web.episode import Episode
from toolbench.tasks.web_shop.web.page_json import page_json
from toolbench.tasks.web_shop.world import StepResult, Store
from toolbench.webcheck import check_same_origin

MAX_BODY_BYTES = 64 * 1024
MAX_ACTION_CHARS = 4_000
MAX_SESSIONS = 10_000
HTML_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: under it a browser sends ``Origin: null`` with our own form POSTs, which
    # the same-origin check refuses. same-origin still keeps the session URL from other sites.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("toolbench.tasks.web_shop.web", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


class GoalPicker(Protocol):
    """Which goal ``/`` opens next, and which goals may be asked for by id."""

    reuse_open: bool  # True: ``/`` returns to the unfinished episode of the next goal

    def next_goal(self) -> int | None: ...

    def allows(self, goal: int) -> bool: ...

    def has_next(self) -> bool:
        """Whether ``/`` would open another goal, on a server that stays up to serve it: a
        page offers "Next goal" only then (a link to a stopped server is a dead end)."""
        ...

    def ended(self) -> list[tuple[str, str]]:
        """What a person reads once there is no next goal, as (sentence, command) pairs
        (command may be ""): where the results are and what to run next."""
        ...


class CyclePicker:
    """``toolbench serve``: the evaluated goals (the version's test ids) in turn, forever; any
    goal of the shop by id."""

    reuse_open = False

    def __init__(self, goal_ids: Sequence[int], goal_count: int) -> None:
        self._ids = list(goal_ids) or list(range(goal_count))
        self._count = goal_count
        self._next = 0

    def next_goal(self) -> int | None:
        goal = self._ids[self._next % len(self._ids)]
        self._next += 1
        return goal

    def allows(self, goal: int) -> bool:
        return 0 <= goal < self._count

    def has_next(self) -> bool:
        return True  # the goals come round again, and the server runs until it is stopped

    def ended(self) -> list[tuple[str, str]]:
        return []


@dataclass
class ShopConfig:
    """What a served store is: the shop, the page layout, how goals are picked, and hooks
    for recording (``step`` applies each action in place of ``Episode.step``, and may refuse
    it with an ``HTTPException``; ``after_over`` runs after a response showing an ended
    episode or the end of the goal list has been sent)."""

    store: Store
    layout: str = "v0"
    picker: GoalPicker | None = None
    step: Callable[[Episode, str], StepResult] | None = None
    after_over: Callable[[], None] | None = None
    note: Callable[[], str] | None = None  # a progress line under the banner
    title: str = "toolbench web shop"


@dataclass
class _Entry:
    id: str
    episode: Episode


class Shop:
    """The open episodes of one server (single event loop: no locking needed)."""

    def __init__(self, config: ShopConfig) -> None:
        self.config = config
        self.picker = config.picker or CyclePicker((), len(config.store.goals))
        self.entries: OrderedDict[str, _Entry] = OrderedDict()

    def open(self, goal: int | None) -> _Entry | None:
        """A new episode (or, when the picker says so, the unfinished one of that goal);
        None when the picker has no goal left."""
        if goal is None:
            goal = self.picker.next_goal()
            if goal is None:
                return None
            if self.picker.reuse_open:
                for entry in reversed(self.entries.values()):
                    if entry.episode.goal_id == goal and not entry.episode.over:
                        return entry
        elif not self.picker.allows(goal):
            raise HTTPException(404, f"goal {goal} is not offered by this server")
        session = self.config.store.new_session(goal, self.config.layout)
        entry = _Entry(secrets.token_urlsafe(16), Episode(session))
        self.entries[entry.id] = entry
        while len(self.entries) > MAX_SESSIONS:
            self.entries.popitem(last=False)
        return entry

    def get(self, sid: str) -> _Entry:
        entry = self.entries.get(sid)
        if entry is None:
            raise HTTPException(404, "no such session (it ended with a server restart, or the "
                                "id is wrong); open / for a new one")  # fmt: skip
        self.entries.move_to_end(sid)
        return entry

    def act(self, entry: _Entry, action: str) -> StepResult:
        """One action, through the ``step`` hook when there is one."""
        if len(action) > MAX_ACTION_CHARS:
            raise HTTPException(413, f"an action is at most {MAX_ACTION_CHARS} characters")
        if self.config.step is not None:
            return self.config.step(entry.episode, action)
        return entry.episode.step(action)


# ---- request helpers ----


async def _body(request: Request) -> bytes:
    """The request body, refused past ``MAX_BODY_BYTES`` without reading the rest."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise HTTPException(413, f"request body over {MAX_BODY_BYTES} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise HTTPException(413, f"request body over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_object(request: Request) -> dict[str, Any]:
    raw = await _body(request)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or nested too deeply
        raise HTTPException(400, "the body must be a JSON object") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the body must be a JSON object")
    return data


def _goal_param(value: Any, where: str) -> int | None:
    """``goal`` from a query string or JSON: absent, or a whole number."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 9:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise HTTPException(400, f"{where}: goal must be a whole number (a goal id)")


# ---- HTML ----


def _html(template: str, status: int = 200, after: Callable[[], None] | None = None,
          **context: Any) -> HTMLResponse:  # fmt: skip
    body = _TEMPLATES.get_template(template).render(**context)
    background = BackgroundTask(after) if after is not None else None
    return HTMLResponse(body, status, headers=HTML_HEADERS, background=background)


def _page_context(shop: Shop, entry: _Entry) -> dict[str, Any]:
    episode = entry.episode
    note = shop.config.note() if shop.config.note is not None else ""
    # Asked at render time: the POST that ended the episode went through the ``step`` hook,
    # so a recording whose last goal this was has no next goal, and stops.
    live = not episode.over or shop.picker.has_next()
    return {
        "title": shop.config.title, "sid": entry.id, "page": episode.page,
        "summary": episode.summary(), "keywords": episode.session.keywords or "",
        "observation": episode.observation, "note": note, "layout": shop.config.layout,
        "live": live, "ended": [] if live else shop.picker.ended(),
    }  # fmt: skip


async def _start(request: Request) -> Response:
    shop: Shop = request.app.state.shop
    entry = shop.open(_goal_param(request.query_params.get("goal"), "?goal="))
    if entry is None:
        note = shop.config.note() if shop.config.note is not None else ""
        return _html("finished.html", title=shop.config.title, note=note, live=False,
                     ended=shop.picker.ended(), after=shop.config.after_over)  # fmt: skip
    return RedirectResponse(f"/s/{entry.id}", 303)


async def _show(request: Request) -> Response:
    shop: Shop = request.app.state.shop
    entry = shop.get(request.path_params["sid"])
    after = shop.config.after_over if entry.episode.over else None
    return _html("page.html", after=after, **_page_context(shop, entry))


async def _post(request: Request) -> Response:
    check_same_origin(request)
    shop: Shop = request.app.state.shop
    entry = shop.get(request.path_params["sid"])
    raw = (await _body(request)).decode("utf-8", errors="replace")
    try:
        fields = parse_qs(raw, keep_blank_values=True, max_num_fields=8)
    except ValueError:  # more fields than a page's form has
        raise HTTPException(400, "a form posts an action (and a query)") from None
    action = (fields.get("action") or [""])[0]
    if action == "search":  # the search box: the action a model would write for it
        action = f"search[{(fields.get('query') or [''])[0]}]"
    shop.act(entry, action)
    return RedirectResponse(f"/s/{entry.id}", 303)


# ---- JSON ----


def _state(entry: _Entry, result: StepResult | None = None) -> dict[str, Any]:
    episode = entry.episode
    state = {"id": entry.id, **episode.summary(), "observation": episode.observation,
             "page": page_json(episode.page)}  # fmt: skip
    if result is not None:
        state["reward"] = result.reward
        state["info"] = dict(result.info)
    return state


async def _api_open(request: Request) -> Response:
    check_same_origin(request)
    shop: Shop = request.app.state.shop
    body = await _json_object(request)
    entry = shop.open(_goal_param(body.get("goal"), "goal"))
    if entry is None:
        return JSONResponse({"error": "every goal of this server is done"}, 410)
    return JSONResponse(_state(entry), 201)


async def _api_get(request: Request) -> Response:
    shop: Shop = request.app.state.shop
    return JSONResponse(_state(shop.get(request.path_params["sid"])))


async def _api_step(request: Request) -> Response:
    check_same_origin(request)
    shop: Shop = request.app.state.shop
    entry = shop.get(request.path_params["sid"])
    action = (await _json_object(request)).get("action")
    if not isinstance(action, str):
        raise HTTPException(400, 'send {"action": "search[...]"} or {"action": "click[...]"}')
    result = shop.act(entry, action)
    after = shop.config.after_over if entry.episode.over else None
    background = BackgroundTask(after) if after is not None else None
    return JSONResponse(_state(entry, result), background=background)


async def _api_index(request: Request) -> Response:
    return JSONResponse({
        "open": "POST /api/sessions {\"goal\": N} (goal optional)",
        "step": "POST /api/sessions/{id}/step {\"action\": \"search[...]\" | \"click[...]\"}",
        "state": "GET /api/sessions/{id}",
        "max_action_chars": MAX_ACTION_CHARS,
    })  # fmt: skip


async def _error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    if request.url.path.startswith("/api"):
        return JSONResponse({"error": detail}, status)
    return _html("error.html", status, title="toolbench web shop", message=detail)


def create_app(config: ShopConfig) -> Starlette:
    """The ASGI app serving ``config``'s store (see the module docstring for the routes)."""
    app = Starlette(
        routes=[
            Route("/", _start, methods=["GET"]),
            Route("/s/{sid}", _show, methods=["GET"]),
            Route("/s/{sid}", _post, methods=["POST"]),
            Route("/api", _api_index, methods=["GET"]),
            Route("/api/sessions", _api_open, methods=["POST"]),
            Route("/api/sessions/{sid}", _api_get, methods=["GET"]),
            Route("/api/sessions/{sid}/step", _api_step, methods=["POST"]),
        ],
        exception_handlers={HTTPException: _error},
    )
    app.state.shop = Shop(config)
    return app
