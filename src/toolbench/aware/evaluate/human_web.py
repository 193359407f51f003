"""``toolbench aware human FILE --web``: the human baseline in a browser, on the terminal's store.

The annotation server (``toolbench.aware.annotate.web``) under the same protocol as the terminal
session (``human``): the same seeded sample and presentation order, the same ``AnswerStore`` (so
terminal and browser annotators can share one answer file),
the instructions (``EXPLICIT_SYSTEM``) once and then each instance's ``explicit_user_message``
verbatim, Yes / No / skip / undo, one lease per annotator.

A participant must never learn the labels or how they are doing: the page carries no instance
id (ids name the manipulation), label, provenance or score, and forms post the instance's
*position* in the sample instead of its id. The results (Table 5, the terminal's ``--report``
tables) are at ``/results?token=...`` with a token printed only to the person who started the
server. The seconds an instance was on
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
from starlette.exceptions import HTTPException
from starlette.responses import Response

from toolbench.aware.annotate.web import AnnotationWeb, Chosen, Site, Words, serve
from toolbench.aware.annotate.webkit import (
    LOOPBACK_HOSTS,
    Form,
    Guard,
    bind,
    hosts_for,
    one,
    page,
    whole_number,
)
from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.evaluate.human_results import Line
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message

COOKIE = "toolbench_human"
NOTICES = {
    "answered": "answer saved",
    "skipped": "skipped: it comes back at the end",
    "undone": "undone: your last answer; answer this one again",
    "nothing": "nothing to undo",
    "taken": "that one was answered by someone else meanwhile; here is the next one",
}
#: The study never says "instance" (ids name the manipulation): a question is what people see.
SITE = Site(
    "study",
    "answer",
    "/answer",
    "/answer",
    NOTICES,
    Words("answered", "answer", "question(s)", "Every question is answered. Thank you!"),
)


class HumanWeb(AnnotationWeb):
    """The human-baseline server's state: the session (sample), its store and the guard."""

    site = SITE

    def __init__(
        self,
        session: HumanSession,
        *,
        hosts: tuple[str, ...] = LOOPBACK_HOSTS,
        results_token: str = "",
    ) -> None:
        self.session = session
        self.ids = session.sample.ids
        self._shown: dict[tuple[str, str], float] = {}
        self._shown_lock = threading.Lock()
        guard = Guard(COOKIE, hosts)
        extra = {"instructions": EXPLICIT_SYSTEM}
        self.start(session.open_store(), self.ids, guard, results_token, extra=extra)

    # ---- answering ----

    def instance_page(self, who: str, instance_id: str, common: dict[str, Any]) -> Response:
        with self._shown_lock:
            self._shown.setdefault((who, instance_id), time.monotonic())
        return page(
            "human.html",
            position=self.session.position[instance_id],
            message=explicit_user_message(self.session.by_id[instance_id]),
            **common,
        )

    def read(self, who: str, form: Form) -> Chosen | Response:
        position = whole_number(one(form, "position"))
        if position is None or not 1 <= position <= len(self.ids):
            raise HTTPException(400, "that question is not in this study")
        instance_id = self.ids[position - 1]
        choice = one(form, "choice")
        if choice not in ("yes", "no", "skip"):
            raise HTTPException(400, "the answer must be yes, no or skip")
        if not self._handed(who, instance_id):
            return self._not_handed(who, instance_id)
        with self._shown_lock:
            shown = self._shown.pop((who, instance_id), None)
        seconds = round(time.monotonic() - shown, 3) if shown is not None else 0.0
        if choice == "skip":
            return Chosen(instance_id, "skip", (None, seconds), "skipped")
        return Chosen(instance_id, "answer", (choice, seconds), "answered")

    def _handed(self, annotator: str, instance_id: str) -> bool:
        """Whether this server showed ``instance_id`` to ``annotator`` and they have not
        answered or skipped it since. The position in a form is typed by the participant's
        browser, so it proves nothing; what the server handed out does. (Sessions live in
        this server, so a form always comes back to the server that showed its question; a
        restarted one shows the question again after sign-in)."""
        with self._shown_lock:
            return (annotator, instance_id) in self._shown

    def _not_handed(self, annotator: str, instance_id: str) -> Response:
        """A form for a question not given to this annotator stores nothing. One already
        answered, or skipped by them, is a resent form (double click, back button): it goes
        on to the next question. Any other is refused, saying what to do."""
        if instance_id in self.store.decided():
            return self.to("taken")
        mine = self.store.events(who=annotator)
        if any(e.instance_id == instance_id and e.action == "skip" for e in mine):
            return self.to("skipped")
        raise HTTPException(
            409, "that question was not given to you: go back to the answer page for yours"
        )

    # ---- for the person running the study ----

    def results_page(self) -> Response:
        """The terminal's ``--report`` as an HTML page: the same blocks, its grids as tables
        (every cell autoescaped: annotator names are typed by anyone with the address)."""
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

    def make() -> HumanWeb:
        return HumanWeb(session, hosts=hosts_for(host), results_token=secrets.token_urlsafe(18))

    def lines(web: AnnotationWeb, url: str) -> str:
        return (
            f"human baseline on {session.dataset}: {len(web.queue)} instances at {url}\n"
            f"  give that address to the annotators; Ctrl-C stops (answers are saved as given)\n"
            f"  results (for you only, never for annotators): {url}results?token="
            f"{web.results_token}"
        )

    serve(make, sock, host, console, lines, on_server)
