"""The annotation in a browser: one server shape for every use of the annotation store.

A page is another client of the store, exactly like the terminal loop: the same queue, the same
leases (``claim_next`` with the person's name), the same append-only decisions and undo events.
So terminals and browsers can work on one file at the same time.

What the browser adds over a terminal is that forms get resent: a double click, a reload, a tab
left open until its lease ran out and someone else decided the instance. Decisions are therefore
written ``exclusive`` (refused, not duplicated, when the instance already has a decision or
someone else's lease) and undo names the decision it cancels (``only``), so a resent request
never becomes a second decision or a second undo. Each page load re-claims: a reload shows the
instance the person holds.

Who is deciding is a name typed into a form, kept in a signed cookie (``webkit.Guard``); each
name gets its own leases. When the server stops, the leases of everyone who used it are released.
``results_token`` unlocks ``/results`` for the person running the server.

A use (``aware.review.web``, ``aware.evaluate.human_web``) names its routes and words
(``Site``) and says what its instance page shows (``instance_page``), how a posted form becomes
a decision (``read``) and what its results page shows (``results_page``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import Console
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbench.aware.annotate.signin import SignIn
from toolbench.aware.annotate.store import DEFAULT_LEASE_S, AnnotationStore, Taken
from toolbench.aware.annotate.webkit import (
    Form,
    Guard,
    exposure,
    make_app,
    one,
    page,
    redirect,
    run,
    url_of,
    whole_number,
)


@dataclass(frozen=True)
class Chosen:
    """A decision read from a posted form: what to append, and the notice to show after."""

    instance_id: str
    action: str
    values: tuple[object, ...]
    notice: str


@dataclass(frozen=True)
class Words:
    """What the pages call things: ``done_word`` ("reviewed"), ``done_noun`` ("decision"),
    ``items`` ("instance(s)") and ``all_done`` (the sentence when nothing is left)."""

    done_word: str
    done_noun: str
    items: str
    all_done: str


@dataclass(frozen=True)
class Site:
    """A use's server: ``title`` of its pages, ``what`` the sign-in form names ("review"),
    ``landing`` (GET: the next instance) and ``post`` (POST: a decision), ``notices`` (code ->
    the line shown after a redirect; codes, never text from the request, travel in URLs)."""

    title: str
    what: str
    landing: str
    post: str
    notices: Mapping[str, str]
    words: Words


class AnnotationWeb(SignIn):
    """The server's state: its store and queue, the guard, and the four routes besides sign-in
    (``landing`` shows the next instance, ``post`` decides, ``/undo``, ``/results``). A use
    sets ``site`` and calls ``start``."""

    site: ClassVar[Site]

    def start(
        self,
        store: AnnotationStore[Any],
        queue: list[str],
        guard: Guard,
        results_token: str,
        lease_s: float = DEFAULT_LEASE_S,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Serve ``queue`` from ``store``; ``extra`` goes to every page (e.g. the dataset's
        name, the instructions)."""
        self.title, self.what, self.landing = self.site.title, self.site.what, self.site.landing
        self.store = store
        self.extra = extra or {}
        self.queue = queue
        self.queued = frozenset(queue)
        self.lease_s = lease_s
        self.start_sign_in(guard, store, results_token)
        self.app = make_app(
            [
                *self.sign_in_routes(),
                Route(self.landing, self.show, methods=["GET"]),
                Route(self.site.post, self.decide, methods=["POST"]),
                Route("/undo", self.undo, methods=["POST"]),
                Route("/results", self.results, methods=["GET"]),
            ],
            self.guard,
        )

    # ---- what a use provides ----

    def instance_page(self, who: str, instance_id: str, common: dict[str, Any]) -> Response:
        raise NotImplementedError

    def read(self, who: str, form: Form) -> Chosen | Response:
        """The decision a form posts (or a redirect to show instead); HTTPException if bad.
        Runs in a worker thread, so it may read the store."""
        raise NotImplementedError

    def results_page(self) -> Response:
        raise NotImplementedError

    # ---- the pages ----

    async def show(self, request: Request) -> Response:
        session = self.guard.session(request)
        if session is None or not session.name:
            return redirect("/")
        self.people.add(session.name)
        notice = self.site.notices.get(request.query_params.get("n", ""), "")
        return await run_in_threadpool(self._page, session.name, session.csrf, notice)

    def _page(self, who: str, csrf: str, notice: str) -> Response:
        instance_id = self.store.claim_next(who, self.queue, self.lease_s)
        decided = self.store.decided()
        latest = self.store.latest(who)
        common: dict[str, Any] = {
            "title": self.title,
            "reviewer": who,
            "csrf": csrf,
            "notice": notice,
            "reviewed": sum(1 for i in self.queue if i in decided),
            "total": len(self.queue),
            "mine": self.store.decided_by(who),
            "undo_seq": latest[0] if latest else None,
            "done_word": self.site.words.done_word,
            "done_noun": self.site.words.done_noun,
            **self.extra,
        }
        if instance_id is not None:
            return self.instance_page(who, instance_id, common)
        leased = self.store.leases()
        busy = sum(1 for i in self.queue if i not in decided and i in leased)
        return page(
            "done.html",
            busy=busy,
            items=self.site.words.items,
            all_done=self.site.words.all_done,
            landing=self.landing,
            **common,
        )

    async def decide(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        chosen = await run_in_threadpool(self.read, session.name, form)
        if isinstance(chosen, Response):
            return chosen
        self.people.add(session.name)
        try:
            await run_in_threadpool(
                self.store.append,
                chosen.instance_id,
                session.name,
                chosen.action,
                chosen.values,
                exclusive=True,
            )
        except Taken:
            return self.to("taken")
        return self.to(chosen.notice)

    async def undo(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        only = whole_number(one(form, "seq"))
        if only is None:
            return self.to("nothing")
        event = await run_in_threadpool(self.store.undo, session.name, self.lease_s, only=only)
        if event is None:
            return self.to("nothing")
        if event.instance_id not in self.queued:
            await run_in_threadpool(self.store.release, session.name, event.instance_id)
            return self.to("elsewhere")
        return self.to("undone")

    def to(self, notice: str) -> Response:
        """Back to the landing page with a notice (a code, never text from the request)."""
        return redirect(f"{self.landing}?n={notice}")

    def results(self, request: Request) -> Response:
        self.require_results_token(request)
        return self.results_page()


def serve(
    web: Callable[[], AnnotationWeb],
    sock: Any,
    host: str,
    console: Console,
    lines: Callable[[AnnotationWeb, str], str],
    on_server: Callable[[Any], None] | None = None,
) -> None:
    """Serve until Ctrl-C on an already bound ``sock``: the server is made (and its store
    opened) only now, so a busy port leaves no file behind. ``lines(web, url)`` is what the
    person starting it reads (the address, the results link)."""
    try:
        server = web()
    except BaseException:
        sock.close()
        raise
    url = url_of(sock)
    try:
        console.print(
            lines(server, url) + exposure(host),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        run(server.app, sock, on_server)
    finally:
        server.close()
