"""The annotation in a terminal: one key loop for every use of the annotation store.

One instance at a time; a use's keys decide it, ``s`` skips, ``u`` undoes the person's latest
decision, ``q`` quits. Every key is stored at once, so quitting (or a crash, or Ctrl-C) loses
nothing and the next session continues where this one stopped. Several people can run this on
one file at the same time: the store leases each shown instance to one of them. When nothing is
left for this person, undo is still offered (the last decision of a queue must be undoable),
and while others hold instances, a look again.

A use (``aware.review.terminal``, ``aware.evaluate.human``) subclasses ``KeyLoop``: how an
instance is shown (``show``), what its own keys store (``decide``), what a skip stores
(``skip``) and what an undo says (``undone``).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.text import Text

from toolbench.aware.annotate.keys import EndOfInput, KeyInput
from toolbench.aware.annotate.store import AnnotationStore


class Quit(Exception):
    """The person asked to stop (q, Ctrl-C, end of input)."""


class KeyLoop:
    """The key loop of one person's session over ``queue`` (ids, in the order offered).

    A use sets ``keys_help``, ``prompt``, ``busy`` ("being reviewed": what others are doing to
    the instances they hold) and ``finished`` (the line when the queue is done)."""

    keys_help = ""
    prompt = ""
    busy = ""
    finished = ""

    def __init__(
        self,
        store: AnnotationStore[Any],
        queue: list[str],
        who: str,
        keys: KeyInput,
        console: Console,
    ) -> None:
        self.store = store
        self.queue = queue
        self.who = who
        self.keys = keys
        self.console = console

    # ---- what a use provides ----

    def show(self, instance_id: str) -> None:
        raise NotImplementedError

    def decide(self, key: str, instance_id: str, seconds: float) -> bool | None:
        """Act on ``key``: True when a decision was stored (go on to the next instance), False
        when the key was the use's but stored nothing (stay), None for a key it does not know."""
        raise NotImplementedError

    def skip(self, instance_id: str, seconds: float) -> None:
        raise NotImplementedError

    def undone(self, event: Any) -> None:
        """Say what ``event`` (an undo) gave back; it is shown next."""
        raise NotImplementedError

    # ---- the loop ----

    def run(self) -> None:
        """Show instances until the queue is done or the person quits (``Quit``, ``EndOfInput``
        or ``KeyboardInterrupt`` propagate; see ``session``)."""
        while True:
            instance_id = self.store.claim_next(self.who, self.queue)
            if instance_id is None:
                if self._idle():
                    continue
                return
            self.show(instance_id)
            self._act(instance_id, time.monotonic())

    def _act(self, instance_id: str, shown_at: float) -> None:
        """Read keys until one of them moves on to the next instance."""
        while True:
            key = self.keys.key(self.prompt)
            seconds = round(time.monotonic() - shown_at, 3)
            if key == "s":
                self.skip(instance_id, seconds)
                self.console.print(Text("skipped (it comes back at the end)", "yellow"))
                return
            if key == "u":
                if self.undo():
                    return
                continue
            if key == "q":
                raise Quit
            moved = self.decide(key, instance_id, seconds)
            if moved:
                return
            if moved is None and key:
                self.console.print(Text(f"unknown key {key!r}: {self.keys_help}", "yellow"))

    def undo(self) -> bool:
        """Undo this person's latest decision; True if there was one (it is shown next, and the
        instance that was on screen keeps its lease and comes right after)."""
        event = self.store.undo(self.who)
        if event is None:
            self.console.print(Text("nothing to undo", "yellow"))
            return False
        self.undone(event)
        return True

    def _idle(self) -> bool:
        """Nothing to show: offer undo, and while others hold instances, a look again. False
        ends the session."""
        leased = set(self.store.leases())
        decided = self.store.decided()
        busy = [i for i in self.queue if i not in decided and i in leased]
        if busy:
            self.console.print(
                Text(f"nothing for you now: {len(busy)} instance(s) are {self.busy} by others")
            )
            prompt = "[u undo, q quit, any other key: look again] > "
        else:
            self.console.print(Text(self.finished, "green"))
            prompt = "[u undo, any other key: finish] > "
        key = self.keys.key(prompt)
        if key == "u":
            self.undo()
            return True
        return bool(busy) and key != "q"


def session(loop: KeyLoop, stopped: str) -> None:
    """Run ``loop``; quitting says ``stopped``, and whatever was on screen goes back to the
    pool (the person's leases are released) however the session ends."""
    try:
        loop.run()
    except (Quit, EndOfInput, KeyboardInterrupt):
        loop.console.print()
        loop.console.print(Text(stopped, "yellow"))
    finally:
        loop.store.release(loop.who)
