"""``toolbench aware verify FILE --web``: the review in a browser, on the terminal's store.

The annotation server (``toolbench.aware.annotate.web``) with the review's page: the same queue
as the terminal review (incomplete instances, pending ones unless ``--all``), the paper's
criteria as rejection reasons, accept / reject / skip posted to ``/decide``. When the server
stops the CLI exports the decisions into the file. ``/results`` (with the token) counts
decisions per reviewer and rejection reasons.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from starlette.exceptions import HTTPException
from starlette.responses import Response

from toolbench.aware.annotate.store import DEFAULT_LEASE_S
from toolbench.aware.annotate.web import AnnotationWeb, Chosen, Site, Words, serve
from toolbench.aware.annotate.webkit import LOOPBACK_HOSTS, Form, Guard, bind, hosts_for, one, page
from toolbench.aware.review import web_view
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.terminal import review_queue
from toolbench.aware.review_reasons import reasons_for
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
_WORDS = Words(
    "reviewed", "decision", "instance(s)", "Every instance in the queue is reviewed. Thank you."
)
SITE = Site("review", "review", "/review", "/decide", NOTICES, _WORDS)


class ReviewWeb(AnnotationWeb):
    """The review server's state: the dataset, its queue, the store, the guard."""

    store: ReviewStore
    site = SITE

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
        self.db = db if db is not None else default_db_path(self.dataset)
        store = ReviewStore(self.db, list(self.by_id), dataset=self.dataset)
        queue = review_queue(instances, only_pending=only_pending)
        extra = {"dataset": self.dataset.name}
        self.start(store, queue, Guard(COOKIE, hosts), results_token, lease_s, extra)

    def instance_page(self, who: str, instance_id: str, common: dict[str, Any]) -> Response:
        instance = self.by_id[instance_id]
        twin = self.by_id.get(instance.twin_id) if instance.twin_id else None
        return page(
            "review.html",
            instance=instance,
            twin_id=twin.id if twin else "",
            apis=web_view.apis(instance),
            dialogue=web_view.dialogue(instance, twin),
            changes=web_view.changes(instance, twin is not None),
            reasons=list(reasons_for(instance.manipulation).items()),
            **common,
        )

    def read(self, who: str, form: Form) -> Chosen | Response:
        instance_id = one(form, "instance")
        if instance_id not in self.queued:
            raise HTTPException(400, "that instance is not in this review")
        action = one(form, "action")
        if action not in _DONE:
            raise HTTPException(400, "the action must be accept, reject or skip")
        codes = reasons_for(self.by_id[instance_id].manipulation)
        reasons = list(dict.fromkeys(form.get("reason", [])))
        note = " ".join(one(form, "note").split())
        if any(code not in codes for code in reasons):
            raise HTTPException(400, "unknown rejection reason")
        if len(note) > NOTE_MAX:
            raise HTTPException(400, f"the note is longer than {NOTE_MAX} characters")
        if action == "reject" and not reasons:
            return self.to("reason")
        if action == "reject" and "other" in reasons and not note:
            return self.to("note")
        if action != "reject":
            reasons, note = [], ""
        return Chosen(instance_id, action, ReviewStore.values(reasons, note), _DONE[action])

    def results_page(self) -> Response:
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

    def make() -> ReviewWeb:
        return ReviewWeb(
            dataset,
            db=db,
            only_pending=only_pending,
            hosts=hosts_for(host),
            results_token=secrets.token_urlsafe(18),
        )

    def lines(web: AnnotationWeb, url: str) -> str:
        return (
            f"reviewing {dataset} ({len(web.queue)} instances in the queue) at {url}\n"
            f"  open it in a browser, one tab per reviewer; Ctrl-C stops and exports\n"
            f"  results (for you, not the reviewers): {url}results?token={web.results_token}"
        )

    serve(make, sock, host, console, lines, on_server)
