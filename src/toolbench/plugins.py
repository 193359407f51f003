"""Finding what other installed distributions register: tasks and models by entry point.

Both registries (``toolbench.tasks.registry`` for the group ``toolbench.tasks``,
``toolbench.models.registry`` for ``toolbench.models``) read a group's entry points the same
way, and treat a broken one the same way: one broken distribution must not take the others,
or the built-ins, down with it. So

* ``installed`` lists a group's entry points by name and sets aside, each with its one-line
  ``Problem``, an entry point that takes a built-in's name (the built-in keeps the name) and
  a name two distributions register (neither is used);
* ``call_plugin`` runs a distribution's code (importing its entry point, calling its factory)
  and turns whatever it raises, ``BaseException`` included, into a ``PluginError``: a plugin
  that calls ``sys.exit()`` or raises ``KeyboardInterrupt`` while being imported is a broken
  plugin, not the end of ``toolbench list``. A real Ctrl-C is not swallowed: a SIGINT that
  arrives while the plugin runs is seen by a handler installed for that time, and the
  ``KeyboardInterrupt`` then goes on to stop the command as the user asked (off the main
  thread, where no handler can be installed, every ``KeyboardInterrupt`` is taken as real).

Listing commands show every usable entry and print each problem as one warning line
(``warning_line``); asking for a broken entry by name is a ``UserError`` with its problem
(exit 2). Every message names the entry point and its distribution, since the fix is there.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import Distribution, EntryPoint, entry_points
from typing import Any, TypeVar

from toolbench.errors import UserError

T = TypeVar("T")

#: The longest reason a problem line quotes from a plugin's own exception.
MAX_REASON_CHARS = 300


class PluginError(UserError):
    """An installed entry point that cannot be used; the message is its problem, one line."""


@dataclass(frozen=True)
class Problem:
    """Why one entry point (or one distribution) is left out, and what fixes it."""

    name: str  # the entry point's name ('' for a distribution that does not read)
    message: str  # one line, naming the entry point and its distribution, and the fix


@dataclass
class Installed:
    """A group's usable entry points by name, and the ones set aside."""

    points: dict[str, EntryPoint] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def problem(self, name: str) -> Problem | None:
        """The problem of the entry point called ``name``, if one was set aside."""
        return next((p for p in self.problems if p.name == name), None)

    def find(self, name: str, load: Callable[[EntryPoint], T | PluginError]) -> T | None:
        """The installed entry called ``name`` as ``load`` reads it, or None when none is; a
        ``PluginError`` (raised) when one of that name was set aside or does not load."""
        point = self.points.get(name)
        if point is not None:
            loaded = load(point)
            if isinstance(loaded, PluginError):
                raise loaded
            return loaded
        problem = self.problem(name)
        if problem is not None:
            raise PluginError(problem.message)
        return None


def installed(group: str, builtin: Collection[str], kind: str) -> Installed:
    """The group's entry points by name (``kind`` is "task" or "model", for the messages)."""
    found = Installed()
    named: dict[str, list[EntryPoint]] = {}
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        if point.name in builtin:
            found.problems.append(
                Problem(
                    point.name,
                    f"{where(point)}: a built-in {kind} is called {point.name!r}, so this one "
                    f"is not used; give its entry point another name, or {_remove(point.dist)}",
                )
            )
        else:
            named.setdefault(point.name, []).append(point)
    for name, points in named.items():
        if len({point.value for point in points}) > 1:
            others = " and ".join(where(point) for point in points)
            message = f"{kind} {name!r} is registered twice, by {others}; neither is used: "
            found.problems.append(Problem(name, message + "uninstall one of them"))
        else:
            found.points[name] = points[0]
    return found


def problem_lines(found: Installed, load: Callable[[EntryPoint], object]) -> list[str]:
    """Why each installed entry that cannot be used is left out, one line each: what the
    listing found (``found.problems``), then each entry point whose ``load`` gives a
    ``PluginError`` (this imports every installed entry)."""
    lines = [problem.message for problem in found.problems]
    for point in found.points.values():
        loaded = load(point)
        if isinstance(loaded, PluginError):
            lines.append(str(loaded))
    return lines


def call_plugin(function: Callable[[], T]) -> T:
    """``function()``, a distribution's code; whatever it raises is a ``PluginError`` whose
    message is the reason (the caller adds the entry point), except a real Ctrl-C."""
    with _sigint_watch() as pressed:
        try:
            return function()
        except PluginError:
            raise  # already a problem in the plugin's words (a check of what it gave)
        except KeyboardInterrupt:
            if pressed is None or pressed[0]:
                raise  # the user's Ctrl-C: stop, as asked
            raise PluginError("KeyboardInterrupt raised by the plugin itself") from None
        except BaseException as exc:  # third-party code: SystemExit and the like included
            raise PluginError(reason(exc)) from None


@contextmanager
def _sigint_watch() -> Iterator[list[bool] | None]:
    """While the block runs, note whether SIGINT arrives (and still raise as Python would);
    None where signals cannot be handled (not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    previous = signal.getsignal(signal.SIGINT)
    pressed = [False]

    def noted(signum: int, frame: Any) -> None:
        pressed[0] = True
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, noted)
    except ValueError:  # no signals here (an embedded interpreter)
        yield None
        return
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


def reason(exc: BaseException) -> str:
    """``Type: message`` of a plugin's exception, on one bounded line."""
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def unusable(point: EntryPoint, why: str) -> PluginError:
    """The one-line error of an entry point whose object cannot be used: what is wrong, and
    the fix (in that distribution, or its removal)."""
    return PluginError(f"{where(point)}: {why}; fix that distribution, or {_remove(point.dist)}")


def cannot_load(point: EntryPoint, kind: str, error: PluginError) -> PluginError:
    """The one-line error of an entry point whose import (or factory) failed."""
    return unusable(point, f"cannot load the {kind} ({error})")


def warning_line(message: str) -> str:
    """How a listing command shows a problem: one line on stderr."""
    return f"toolbench: warning: {message}"


def where(point: EntryPoint) -> str:
    """``entry point NAME = VALUE (GROUP, distribution DIST)``: what a user must fix."""
    dist = _display(point.dist)
    return f"entry point {point.name} = {point.value} ({point.group}, distribution {dist})"


def _display(dist: Distribution | None) -> str:
    if dist is None:
        return "an unknown distribution"
    try:
        return str(dist.metadata["Name"] or "an unnamed distribution")
    except Exception:  # a metadata file that does not read
        return "an unnamed distribution"


def _remove(dist: Distribution | None) -> str:
    if dist is None:
        return "uninstall its distribution"
    return f"uninstall it (pip uninstall {_display(dist)})"
