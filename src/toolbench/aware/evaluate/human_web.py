"""``toolbench aware human FILE --web``: the human baseline in a browser, on the terminal's store.

The same protocol as the terminal session (``human``): the same seeded sample and presentation
order, the same ``AnswerStore`` (so terminal and browser annotators can share one answer file),
the instructions (``EXPLICIT_SYSTEM``) once and then each instance's ``explicit_user_message``
verbatim, Yes / No / skip / undo, one lease per annotator.

A participant must never learn the labels or how they are doing: the page carries no instance
id (ids name the manipulation), label, provenance or score, and forms post the instance's
*position* in the sample instead of its id. The results (Table 5, the terminal's ``--report``
tables) are at ``/results?token=...`` with a token printed only to the person who started the
server. Answers are written ``exclusive`` and undo names the answer it cancels, so a resent form
(double click, reload) never adds a second answer or undoes two. The seconds an instance was on
screen are measured by the server from the first time it showed the instance to that annotator.
A form's position is only taken if the server handed that question to that annotator (showed it
to them, not yet answered or skipped by them): any other is a 409 and nothing is stored, so an
edited form cannot answer someone else's question or one never shown.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.evaluate.human_results import Line
from toolbench.aware.evaluate.human_store import AnswerStore
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.aware.review.signin import SignIn
from toolbench.aware.review.store import Taken
from toolbench.aware.review.webkit import (
    LOOPBACK_HOSTS,
    Guard,
    bind,
    exposure,
    hosts_for,
    make_app,
    one,
    page,
    redirect,
    run,
    url_of,
    whole_number,
)

COOKIE = "toolbench_human"
NOTICES = {
    "answered": "answer saved",
    "skipped": "skipped: it comes back at the end",
    "undone": "undone: your last answer; answer this one again",
    "nothing": "nothing to undo",
    "taken": "that one was answered by someone else meanwhile; here is the next one",
}
_DONE = {"yes": "answered", "no": "answered", "skip": "skipped"}


class HumanWeb(SignIn):
    """The human-baseline server's state: the session (sample), its store and the guard."""

    title = "study"
    what = "answer"
    landing = "/answer"

    def __init__(
        self,
        session: HumanSession,
        *,
        hosts: tuple[str, ...] = LOOPBACK_HOSTS,
        results_token: str = "",
    ) -> None:
        self.session = session
        self.store: AnswerStore = session.open_store()
        self.ids = session.sample.ids
        self.start_sign_in(Guard(COOKIE, hosts), self.store, results_token)
        self._shown: dict[tuple[str, str], float] = {}
        self._shown_lock = threading.Lock()
        self.app = make_app(
            [
                *self.sign_in_routes(),
                Route("/answer", self.answer_page, methods=["GET"]),
                Route("/answer", self.answer, methods=["POST"]),
                Route("/undo", self.undo, methods=["POST"]),
                Route("/results", self.results, methods=["GET"]),
            ],
            self.guard,
        )

    # ---- answering ----

    async def answer_page(self, request: Request) -> Response:
        session = self.guard.session(request)
        if session is None or not session.name:
            return redirect("/")
        self.people.add(session.name)
        notice = NOTICES.get(request.query_params.get("n", ""), "")
        return await run_in_threadpool(self._page, session.name, session.csrf, notice)

    def _page(self, annotator: str, csrf: str, notice: str) -> Response:
        instance_id = self.store.claim_next(annotator)
        given = self.store.given()
        latest = self.store.latest_answer(annotator)
        common: dict[str, Any] = {
            "title": "study",
            "reviewer": annotator,
            "csrf": csrf,
            "notice": notice,
            "reviewed": len({g.instance_id for g in given}),
            "total": len(self.ids),
            "mine": sum(1 for g in given if g.annotator == annotator),
            "undo_seq": latest[0] if latest else None,
            "done_word": "answered",
            "done_noun": "answer",
            "instructions": EXPLICIT_SYSTEM,
        }
        if instance_id is None:
            answered = {g.instance_id for g in given}
            leased = self.store.leases()
            busy = sum(1 for i in self.ids if i not in answered and i in leased)
            return page("human_done.html", busy=busy, **common)
        with self._shown_lock:
            self._shown.setdefault((annotator, instance_id), time.monotonic())
        return page(
            "human.html",
            position=self.session.position[instance_id],
            message=explicit_user_message(self.session.by_id[instance_id]),
            **common,
        )

    async def answer(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        position = whole_number(one(form, "position"))
        if position is None or not 1 <= position <= len(self.ids):
            raise HTTPException(400, "that question is not in this study")
        instance_id = self.ids[position - 1]
        choice = one(form, "choice")
        if choice not in _DONE:
            raise HTTPException(400, "the answer must be yes, no or skip")
        if not self._handed(session.name, instance_id):
            return await run_in_threadpool(self._not_handed, session.name, instance_id)
        with self._shown_lock:
            shown = self._shown.pop((session.name, instance_id), None)
        seconds = round(time.monotonic() - shown, 3) if shown is not None else 0.0
        self.people.add(session.name)
        try:
            if choice == "skip":
                await run_in_threadpool(
                    self.store.skip, instance_id, session.name, seconds, exclusive=True
                )
            else:
                await run_in_threadpool(
                    self.store.answer,
                    instance_id,
                    session.name,
                    choice,  # type: ignore[arg-type]
                    seconds,
                    exclusive=True,
                )
        except Taken:
            return redirect("/answer?n=taken")
        return redirect(f"/answer?n={_DONE[choice]}")

    def _handed(self, annotator: str, instance_id: str) -> bool:
        """Whether this server showed ``instance_id`` to ``annotator`` and they have not
        answered or skipped it since. The position in a form is typed by the participant's
        browser, so it proves nothing; what the server handed out does. (Sessions live in
        this server, so a form always comes back to the server that showed its question; a
        restarted one shows the question again after sign-in.)"""
        with self._shown_lock:
            return (annotator, instance_id) in self._shown

    def _not_handed(self, annotator: str, instance_id: str) -> Response:
        """A form for a question not given to this annotator stores nothing. One already
        answered, or skipped by them, is a resent form (double click, back button): it goes
        on to the next question as before. Any other is refused, saying what to do."""
        if instance_id in self.store.answers():
            return redirect("/answer?n=taken")
        mine = self.store.events(annotator=annotator)
        if any(e.instance_id == instance_id and e.action == "skip" for e in mine):
            return redirect("/answer?n=skipped")
        raise HTTPException(
            409, "that question was not given to you: go back to the answer page for yours"
        )

    async def undo(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        seq = whole_number(one(form, "seq"))
        if seq is None:
            return redirect("/answer?n=nothing")
        event = await run_in_threadpool(self.store.undo, session.name, only=seq)
        return redirect("/answer?n=undone" if event is not None else "/answer?n=nothing")

    # ---- for the person running the study ----

    def results(self, request: Request) -> Response:
        """The terminal's ``--report`` as an HTML page: the same blocks, its grids as tables
        (every cell autoescaped: annotator names are typed by anyone with the address)."""
        self.require_results_token(request)
        blocks: list[dict[str, Any]] = []
        for block in self.session.results():
            if isinstance(block, Line):
                blocks.append({"line": block.text, "style": block.style})
                continue
            keys = block.key_columns
            rows = [[(block.text(c), k < keys) for k, c in enumerate(row)] for row in block.rows]
            blocks.append({"title": block.title, "columns": block.columns, "rows": rows})
        return page("human_results.html", title="study results", blocks=blocks)


def serve_human(
    session: HumanSession,
    *,
    host: str,
    port: int,
    console: Console,
    on_server: Callable[[Any], None] | None = None,
) -> None:
    """Serve the study until Ctrl-C; the port is bound before the answer store is opened."""
    sock = bind(host, port)
    try:
        web = HumanWeb(session, hosts=hosts_for(host), results_token=secrets.token_urlsafe(18))
    except BaseException:
        sock.close()
        raise
    url = url_of(sock)
    try:
        console.print(
            f"human baseline on {session.dataset}: {len(web.ids)} instances at {url}\n"
            f"  give that address to the annotators; Ctrl-C stops (answers are saved as given)\n"
            f"  results (for you only, never for annotators): {url}results?token="
            f"{web.results_token}" + exposure(host),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        run(web.app, sock, on_server)
    finally:
        web.close()
