"""Progress lines for a run printed without a terminal (CI logs, ``| tee``, a notebook).

Why a timer and not only the finished samples: a local model on a CPU can spend minutes on one
batch, so a line printed only when a sample finishes leaves the log silent for as long; a run
that promises a line every ``every_s`` seconds prints one on time, finished samples or not.

Why "ETA unknown": samples run ``concurrency`` at a time (and a local model batches them), so
they finish in waves. The rate of the first sample of a wave (1 sample in 200 s) says nothing
of the wave (8 samples in 200 s) and turned into an estimate 100 times too long. An estimate is
given once a whole wave has finished this session (as many samples as run at once, at least
two), from this session's own measured rate, and never from one sample.

Tokens are the completion tokens the model generated this session (calls answered from the
cache are not generated); a model that reports none (oracle, baseline, replay, agents) gets no
token part at all rather than a row of zeros.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections.abc import AsyncIterator

from rich.console import Console
from rich.progress import ProgressColumn
from rich.progress import Task as ProgressTask
from rich.text import Text

from toolbench.runner.engine import SessionStats

#: Overrides the plain-line interval, in seconds (tests, or a user who wants a denser log).
EVERY_ENV = "TOOLBENCH_PROGRESS_EVERY_S"
#: The timer never wakes more often than this, whatever the interval (0 in tests).
MIN_TICK_S = 0.05
#: An estimate of the time left needs at least this many samples finished this session.
MIN_FINISHED_FOR_ETA = 2


def interval(default: float) -> float:
    """``default`` unless ``$TOOLBENCH_PROGRESS_EVERY_S`` holds a finite number >= 0."""
    text = os.environ.get(EVERY_ENV, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if math.isfinite(value) and value >= 0 else default


def rate_text(per_s: float) -> str:
    """A rate with the digits that carry information: ``120``, ``12.3``, ``0.48``, ``0.0048``
    (never ``0.0``: a slow model's rate is small, not zero)."""
    if per_s >= 10:
        return f"{per_s:,.0f}"
    if per_s >= 1:
        return f"{per_s:.1f}"
    if per_s >= 0.1:
        return f"{per_s:.2f}"
    return f"{per_s:.2g}"


def duration_text(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``: what a person reads at a glance."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def eta_needs(concurrency: int, todo: int) -> int:
    """Samples that must have finished this session before the time left is estimated: one
    whole wave (as many as run at once), at least two, never more than there are to do."""
    return min(todo, max(MIN_FINISHED_FOR_ETA, min(max(concurrency, 1), todo)))


class PlainProgress:
    """One plain line when the work starts, then one at least every ``every_s`` seconds while
    it runs (``ticking``), and one when a sample finishes after ``every_s`` of quiet."""

    def __init__(
        self,
        console: Console,
        planned: int,
        done_before: int,
        every_s: float,
        stats: SessionStats | None = None,
        concurrency: int = 1,
    ) -> None:
        self.console, self.planned, self.every_s = console, planned, every_s
        self.done_before, self.done = done_before, 0
        self.stats, self.concurrency = stats, concurrency
        self.start = self.last = time.monotonic()
        todo = planned - done_before
        self._say(
            f"progress: {todo} sample x epochs to do ({done_before} of {planned} done before)"
        )

    def advance(self) -> None:
        """A sample finished: a line if none was printed for ``every_s``."""
        self.done += 1
        self.tick()

    def tick(self) -> None:
        """A line if none was printed for ``every_s`` (called by the timer and per sample)."""
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            self._say(self.line(now))

    @contextlib.asynccontextmanager
    async def ticking(self) -> AsyncIterator[None]:
        """While the block runs, a line at least every ``every_s`` even if nothing finishes."""
        timer = asyncio.create_task(self._tick_forever())
        try:
            yield
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer

    async def _tick_forever(self) -> None:
        while True:
            wait = self.last + self.every_s - time.monotonic()
            await asyncio.sleep(max(MIN_TICK_S, wait))
            self.tick()

    def line(self, now: float) -> str:
        elapsed = now - self.start
        total = self.done_before + self.done
        percent = 100 * total / self.planned if self.planned else 100.0
        parts = [f"progress: {total}/{self.planned} sample x epochs ({percent:.0f}%)"]
        if self.done and elapsed > 0:
            parts.append(
                f"{rate_text(self.done / elapsed)} samples/s this session "
                "(solving only, loading excluded)"
            )
        else:
            parts.append("none finished yet this session")
        tokens = self.stats.completion_tokens if self.stats is not None else 0
        if tokens > 0 and elapsed > 0:
            parts.append(f"{tokens:,} tokens generated ({rate_text(tokens / elapsed)} tokens/s)")
        parts.append(f"{duration_text(elapsed)} elapsed")
        parts.append(self.eta(elapsed))
        return ", ".join(parts)

    def eta(self, elapsed: float) -> str:
        """``about 40 s left`` from this session's rate once a wave has finished; else
        ``ETA unknown`` and what it waits for."""
        todo = self.planned - self.done_before
        left = todo - self.done
        if left <= 0:
            return "nothing left"
        needs = eta_needs(self.concurrency, todo)
        if self.done < needs or elapsed <= 0:
            return f"ETA unknown (an estimate needs {needs} of the {todo} finished)"
        seconds = left * elapsed / self.done
        return "less than a second left" if seconds < 1 else f"about {duration_text(seconds)} left"

    def _say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)


class WaveRemainingColumn(ProgressColumn):
    """The terminal bar's time left, by the same rule as the plain lines: ``ETA unknown``
    until a whole wave of this session's samples has finished, then this session's rate over
    what is left (rich's own column extrapolates from the first sample of a wave). The bar's
    task carries ``done_before`` (this session's start) and ``needs`` (the wave) as fields."""

    def render(self, task: ProgressTask) -> Text:
        start = int(task.fields.get("done_before", 0))
        needs = int(task.fields.get("needs", MIN_FINISHED_FOR_ETA))
        done, total, elapsed = task.completed - start, task.total or 0, task.elapsed or 0.0
        if task.finished or total <= task.completed:
            text = "done"
        elif done < needs or elapsed <= 0:
            text = "ETA unknown"
        else:
            seconds = (total - task.completed) * elapsed / done
            text = (
                "less than a second left" if seconds < 1 else f"about {duration_text(seconds)} left"
            )
        return Text(text, style="progress.remaining")
