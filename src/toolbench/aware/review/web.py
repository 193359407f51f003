"""``toolbench aware verify FILE --web``: the review in a browser, on the terminal's store.

The page is another client of ``ReviewStore``, exactly like the terminal review: the same queue
(incomplete instances, pending ones unless ``--all``), the same leases (``claim_next`` with the
reviewer's name), the same append-only decisions and undo events, the paper's criteria as
rejection reasons. So terminals and browsers can review one file at the same time.

What the browser adds over a terminal is that forms get resent: a double click, a reload, a tab
left open until its lease ran out and someone else decided the instance. Decisions are therefore
written ``exclusive`` (refused, not duplicated, when the instance already has a decision or
someone else's lease) and undo names the decision it cancels (``only``), so a resent request
never becomes a second decision or a second undo. Each page load re-claims: a reload shows the
instance the reviewer holds.

Who is reviewing is a name typed into a form, kept in a signed cookie (``webkit.Guard``); each
name gets its own leases. When the server stops, the leases of everyone who used it are released
(as a terminal releases its own when it quits) and the CLI exports the decisions into the file.
``results_token`` unlocks ``/results`` (counts per reviewer) for the person running the review.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbench.aware.review import web_view
from toolbench.aware.review.reasons import reasons_for
from toolbench.aware.review.signin import SignIn
from toolbench.aware.review.store import DEFAULT_LEASE_S, ReviewStore, Taken, default_db_path
from toolbench.aware.review.terminal import review_queue
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
from toolbench.aware.schema import Instance, read_instances

NOTE_MAX = 2000
COOKIE = "toolbench_review"
#: Notices are passed as codes in the redirect URL, never as text from the request.
NOTICES = {
    "accepted": "accepted",
    "rejected": "rejected",
    "skipped": "skipped: it comes back at the end of your queue",
    "undone": "undone: your last decision; decide this instance again",
    "nothing": "nothing to undo",
    "elsewhere": "undone: a decision on an instance this review does not show (review with --all)",
    "taken": "that instance was decided or taken by someone else meanwhile; here is the next one",
    "reason": "a rejection needs at least one reason (press its number, then r)",
    "note": "'other' needs a note saying what is wrong",
}

_DONE = {"accept": "accepted", "reject": "rejected", "skip": "skipped"}


class ReviewWeb(SignIn):
    """The review server's state: the dataset, its queue, the store, the guard."""

    title = "review"
    what = "review"
    landing = "/review"

    def __init__(
        self,
        dataset: Path,
        *,
        db: Path | None = None,
        only_pending: bool = True,
        hosts: tuple[str, ...] = LOOPBACK_HOSTS,
        results_token: str = "",
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self.dataset = Path(dataset)
        instances = read_instances(self.dataset)
        self.by_id: dict[str, Instance] = {i.id: i for i in instances}
        self.queue = review_queue(instances, only_pending=only_pending)
        self.queued = frozenset(self.queue)
        self.db = db if db is not None else default_db_path(self.dataset)
        self.store = ReviewStore(self.db, list(self.by_id), dataset=self.dataset)
        self.start_sign_in(Guard(COOKIE, hosts), self.store, results_token)
        self.lease_s = lease_s
        self.app = make_app(
            [
                *self.sign_in_routes(),
                Route("/review", self.review, methods=["GET"]),
                Route("/decide", self.decide, methods=["POST"]),
                Route("/undo", self.undo, methods=["POST"]),
                Route("/results", self.results, methods=["GET"]),
            ],
            self.guard,
        )

    def _reviewer(self, request: Request) -> tuple[str, str] | None:
        session = self.guard.session(request)
        if session is None or not session.name:
            return None
        self.people.add(session.name)
        return session.name, session.csrf

    # ---- the review page ----

    async def review(self, request: Request) -> Response:
        who = self._reviewer(request)
        if who is None:
            return redirect("/")
        reviewer, csrf = who
        notice = NOTICES.get(request.query_params.get("n", ""), "")
        return await run_in_threadpool(self._review_page, reviewer, csrf, notice)

    def _review_page(self, reviewer: str, csrf: str, notice: str) -> Response:
        instance_id = self.store.claim_next(reviewer, self.queue, self.lease_s)
        decided = self.store.current_decisions()
        latest = self.store.latest_decision(reviewer)
        common: dict[str, Any] = {
            "title": "review",
            "reviewer": reviewer,
            "csrf": csrf,
            "notice": notice,
            "reviewed": sum(1 for i in self.queue if i in decided),
            "total": len(self.queue),
            "mine": sum(1 for d in decided.values() if d.reviewer == reviewer),
            "undo_seq": latest[0] if latest else None,
            "dataset": self.dataset.name,
            "done_word": "reviewed",
            "done_noun": "decision",
        }
        if instance_id is None:
            leased = self.store.leases()
            busy = sum(1 for i in self.queue if i not in decided and i in leased)
            return page("review_done.html", busy=busy, **common)
        instance = self.by_id[instance_id]
        twin = self.by_id.get(instance.twin_id) if instance.twin_id else None
        reasons = list(reasons_for(instance.manipulation).items())
        return page(
            "review.html",
            instance=instance,
            twin_id=twin.id if twin else "",
            apis=web_view.apis(instance),
            dialogue=web_view.dialogue(instance, twin),
            changes=web_view.changes(instance, twin is not None),
            reasons=reasons,
            **common,
        )

    async def decide(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        instance_id = one(form, "instance")
        if instance_id not in self.queued:
            raise HTTPException(400, "that instance is not in this review")
        action = one(form, "action")
        if action not in ("accept", "reject", "skip"):
            raise HTTPException(400, "the action must be accept, reject or skip")
        codes = reasons_for(self.by_id[instance_id].manipulation)
        reasons = list(dict.fromkeys(form.get("reason", [])))
        note = " ".join(one(form, "note").split())
        if any(code not in codes for code in reasons):
            raise HTTPException(400, "unknown rejection reason")
        if len(note) > NOTE_MAX:
            raise HTTPException(400, f"the note is longer than {NOTE_MAX} characters")
        if action == "reject" and not reasons:
            return redirect("/review?n=reason")
        if action == "reject" and "other" in reasons and not note:
            return redirect("/review?n=note")
        if action != "reject":
            reasons, note = [], ""
        self.people.add(session.name)
        try:
            await run_in_threadpool(
                self.store.record,
                instance_id,
                session.name,
                action,  # type: ignore[arg-type]
                reasons,
                note,
                exclusive=True,
            )
        except Taken:
            return redirect("/review?n=taken")
        return redirect(f"/review?n={_DONE[action]}")

    async def undo(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        if not session.name:
            return redirect("/")
        only = whole_number(one(form, "seq"))
        if only is None:
            return redirect("/review?n=nothing")
        event = await run_in_threadpool(self.store.undo, session.name, self.lease_s, only=only)
        if event is None:
            return redirect("/review?n=nothing")
        if event.instance_id not in self.queued:
            await run_in_threadpool(self.store.release, session.name, event.instance_id)
            return redirect("/review?n=elsewhere")
        return redirect("/review?n=undone")

    # ---- for the person running the review ----

    def results(self, request: Request) -> Response:
        self.require_results_token(request)
        decided = self.store.current_decisions()
        counts: Counter[tuple[str, str]] = Counter(
            (d.reviewer, d.status) for i, d in decided.items() if i in self.queued
        )
        reviewers = sorted({who for who, _ in counts})
        rows = [(who, counts[(who, "accepted")], counts[(who, "rejected")]) for who in reviewers]
        reasons = Counter(
            r for i, d in decided.items() if i in self.queued for r in d.reasons
        ).most_common()
        return page(
            "review_results.html",
            title="review results",
            dataset=self.dataset.name,
            rows=rows,
            reasons=reasons,
            reviewed=sum(1 for i in self.queue if i in decided),
            total=len(self.queue),
        )


def serve_review(
    dataset: Path,
    *,
    db: Path | None,
    only_pending: bool,
    host: str,
    port: int,
    console: Console,
    on_server: Callable[[Any], None] | None = None,
) -> None:
    """Serve the review until Ctrl-C. The dataset is read and the port bound before the store
    is opened, so a bad file or a busy port (exit 2) leaves no decisions file behind."""
    read_instances(dataset)
    sock = bind(host, port)
    try:
        web = ReviewWeb(
            dataset,
            db=db,
            only_pending=only_pending,
            hosts=hosts_for(host),
            results_token=secrets.token_urlsafe(18),
        )
    except BaseException:
        sock.close()
        raise
    url = url_of(sock)
    try:
        console.print(
            f"reviewing {dataset} ({len(web.queue)} instances in the queue) at {url}\n"
            f"  open it in a browser, one tab per reviewer; Ctrl-C stops and exports\n"
            f"  results (for you, not the reviewers): {url}results?token={web.results_token}"
            + exposure(host),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        run(web.app, sock, on_server)
    finally:
        web.close()
