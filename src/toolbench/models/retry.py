"""Retrying transient service failures, so one overloaded minute does not cost a whole run,
and noticing when the service is gone, so a dead server does not cost an hour.

Policy: 429, 408, 409, 5xx but 501, timeouts and connection errors are retried with exponential
backoff and full jitter (``uniform(0, min(max_delay, base_delay * 2**n))``), which spreads a
burst of concurrent clients out instead of making them retry in lockstep. A ``Retry-After``
header wins over the computed delay (capped at ``max_delay``) because the server knows best.
Every other 4xx means the request itself is wrong (bad parameter, bad key), and a 501 that the
server does not do it at all: retrying cannot help, so it fails at once. Either way the caller
gets ``InfraError``: the sample is excluded from scores rather than blamed on the model. Two
exceptions:

- a 400/413/422 that says the prompt does not fit the context window (``overflow``) is the
  model's failure: ``ContextOverflow``, never retried;
- when every request has failed to *connect* for ``BREAKER_WINDOW_S`` (at least
  ``BREAKER_MIN_FAILURES`` failures, no answer in between) the breaker shared by all samples
  opens: every call, new or retrying, raises ``ServiceDown`` at once, and the runner stops
  instead of writing an infra error for each remaining sample. Any answer closes it.

A call's retries also respect a time budget (``budget_s``; by default ``default_retry_budget``
of the request timeout): no new attempt starts past it, so retries cannot pile up behind a
slow server. A call that ran out of attempts on connection failures while the breaker is still
deciding waits for the decision (at most ``BREAKER_WINDOW_S``) and tries once more, so a dead
server leaves its samples undone instead of as a pile of infra errors.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import openai

from toolbench.models.base import Model
from toolbench.models.overflow import (
    MAX_BODY_CHARS,
    OVERFLOW_STATUSES,
    describe,
    overflow_from_error,
)
from toolbench.types import (
    ContextOverflow,
    EndpointNotServed,
    Generation,
    GenerationRequest,
    InfraError,
    ServiceDown,
)

log = logging.getLogger(__name__)

#: 4xx statuses that are about timing, not about the request, and so are worth retrying.
RETRIABLE_4XX = frozenset({408, 409, 429})
#: 5xx statuses that are no passing failure: "Not Implemented" is the same on every attempt.
FINAL_5XX = frozenset({501})
# Statuses that say the request's path or model is not served at all: the run stops.
NOT_SERVED = frozenset({404, 405, 501})
#: The breaker opens after this long with every request failing to connect...
BREAKER_WINDOW_S = 10.0
#: ... and at least this many failures in that time (one failure is not a pattern).
BREAKER_MIN_FAILURES = 3


def default_retry_budget(timeout_s: float) -> float:
    """Seconds one call may spend on all its attempts and waits: three timeouts, at least a
    minute (a server restarting takes that long)."""
    return max(3 * timeout_s, 60.0)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Low-level transport errors that can escape the SDK (it wraps most as APIConnectionError).

    The openai SDK 3.x is built on ``httpx2``; older ones on ``httpx``. Catch whichever exist.
    """
    errors: list[type[BaseException]] = [
        httpx.TransportError,
        TimeoutError,
        asyncio.TimeoutError,  # a distinct class before Python 3.11
        ConnectionError,
    ]
    try:
        # deferred: httpx2 is optional: its errors are retried only where it is installed
        import httpx2

        errors.append(httpx2.TransportError)
    except ImportError:  # pragma: no cover - depends on the installed SDK
        pass
    return tuple(errors)


#: Errors that mean "could not get an answer this time" rather than "the request is wrong".
RETRIABLE_ERRORS: tuple[type[BaseException], ...] = (
    openai.APIConnectionError,  # includes APITimeoutError
    *_transport_errors(),
)


#: What ``_attempt`` lets through to the retry loop (the other failures end the call).
_RETRIED: tuple[type[BaseException], ...] = (openai.APIStatusError, *RETRIABLE_ERRORS)


def _timeout_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [
        openai.APITimeoutError,
        TimeoutError,
        asyncio.TimeoutError,
        httpx.TimeoutException,
    ]
    try:
        # deferred: httpx2 is optional: its errors are retried only where it is installed
        import httpx2

        errors.append(httpx2.TimeoutException)
    except ImportError:  # pragma: no cover - depends on the installed SDK
        pass
    return tuple(errors)


#: Retriable errors that mean "slow", not "not there": they never open the breaker.
TIMEOUT_ERRORS = _timeout_errors()


def is_connection_failure(error: BaseException) -> bool:
    """A request that found nobody to talk to (refused, reset, unreachable, disconnected), as
    opposed to one that timed out or got an answer: what the breaker counts."""
    if isinstance(error, TIMEOUT_ERRORS) or isinstance(error.__cause__, TIMEOUT_ERRORS):
        return False
    return isinstance(error, RETRIABLE_ERRORS)


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        when = email.utils.mktime_tz(parsed)
    except (TypeError, ValueError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _failure_cause(error: BaseException) -> str:
    """A connection failure in a few words ("Connection refused"), for the breaker's line."""
    text = _one_line(error).removeprefix("Connection error: ").removeprefix("Connection error.")
    return text.strip()[:100] or type(error).__name__


class Breaker:
    """Notices that the service is gone: every request failing to connect for ``window_s``
    (at least ``min_failures`` of them, no answer in between). Shared by every sample of a
    run through their ``RetryingModel``; asyncio code in one thread, so no lock.

    Open stays open until an answer arrives (one already in flight when it opened): the run
    that sees ``ServiceDown`` stops, and a rerun builds a new model with a closed breaker.

    For a pool of endpoints (``models.endpoints``) the breaker hears only of requests that no
    endpoint could take, so it opens when every endpoint is down; ``servers`` > 1 makes its
    line say so."""

    def __init__(
        self,
        where: str,
        clock: Callable[[], float] = time.monotonic,
        window_s: float = BREAKER_WINDOW_S,
        min_failures: int = BREAKER_MIN_FAILURES,
        servers: int = 1,
    ) -> None:
        self.where = where
        self.servers = servers
        self.window_s = window_s
        self.min_failures = min_failures
        self._clock = clock
        self.failures = 0  # connection failures since the last answer
        self.since: float | None = None  # when the first of them happened
        self.cause = ""
        self.opened_message: str | None = None
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def is_open(self) -> bool:
        return self.opened_message is not None

    def success(self) -> None:
        """The server answered (anything, even an error status): it is there."""
        self.failures, self.since, self.opened_message = 0, None, None

    def failure(self, cause: str) -> None:
        """One request failed to connect; opens the breaker when the pattern is clear."""
        now = self._clock()
        if self.since is None:
            self.since = now
        self.failures += 1
        self.cause = cause
        age = now - self.since
        if not self.is_open and self.failures >= self.min_failures and age >= self.window_s:
            who = (
                f"the model server at {self.where}"
                if self.servers <= 1
                else f"all {self.servers} model servers ({self.where})"
            )
            self.opened_message = f"{who} stopped answering ({cause} since {age:.0f} s)"
            log.info("%s", self.opened_message)
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def check(self) -> None:
        """Raise ``ServiceDown`` while open."""
        if self.opened_message is not None:
            raise ServiceDown(self.opened_message)

    def deciding_in(self) -> float | None:
        """Seconds until a failure would open the breaker, while connection failures are
        piling up and it is not open yet; None when there is nothing to decide."""
        if self.since is None or self.is_open:
            return None
        return max(0.0, self.since + self.window_s - self._clock())

    async def wait_open(self) -> None:
        """Return when the breaker opens (a sleeping retry wakes up to stop at once)."""
        if self.is_open:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)


def _breaker_for(inner: Model, where: str, clock: Callable[[], float]) -> Breaker:
    """The breaker of ``inner``: one server, or a pool of endpoints named by their URLs."""
    urls = getattr(inner, "endpoint_urls", None)
    if isinstance(urls, list) and len(urls) > 1:
        return Breaker(", ".join(map(str, urls)), clock=clock, servers=len(urls))
    return Breaker(where, clock=clock)


class RetryingModel:
    """Wraps a model, retries its transient failures and watches for the service going away.

    Counters (``calls``, ``attempts``, ``retries``, ``failures``, ``overflows``) are totals
    over the wrapper's life; ``delays`` records every wait chosen, so tests can check the
    policy without sleeping. ``budget_s`` (None: no limit) bounds each call's attempts in
    time; ``clock`` is what it and the breaker measure with (tests pass a fake one).
    """

    def __init__(
        self,
        inner: Model,
        max_retries: int,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        budget_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        breaker: Breaker | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if budget_s is not None and budget_s <= 0:
            raise ValueError("budget_s must be > 0")
        self.inner = inner
        self.name = inner.name
        self.cacheable = inner.cacheable
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.budget_s = budget_s
        self._sleep = sleep
        self._rng = rng
        self._clock = clock
        self.breaker = breaker or _breaker_for(inner, self.base_url or self.name, clock)
        self.calls = 0
        self.attempts = 0
        self.retries = 0
        self.failures = 0
        self.overflows = 0
        self.delays: list[float] = []

    @property
    def base_url(self) -> str | None:
        """Forwarded so a cache around this wrapper keys on the real endpoint."""
        return getattr(self.inner, "base_url", None)

    def _backoff(self, retry_number: int, error: BaseException) -> float:
        response = getattr(error, "response", None)
        retry_after = parse_retry_after(getattr(response, "headers", None))
        if retry_after is not None:
            return min(retry_after, self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * (2**retry_number))
        return self._rng() * ceiling

    def _overflow(self, error: openai.APIStatusError) -> ContextOverflow | None:
        """The context overflow a refused request means, if it is one, with the context length
        from the server's model listing when its message does not say it."""
        if error.status_code not in OVERFLOW_STATUSES:
            return None
        try:
            body = error.response.content[: 4 * MAX_BODY_CHARS].decode("utf-8", "replace")
        except Exception:  # a response without content: the SDK's message is all there is
            body = str(error)
        overflow = overflow_from_error(error.status_code, body)
        if overflow is None:
            return None
        known = getattr(self.inner, "context_length", None)
        context = overflow.context_length or (known if isinstance(known, int) else None)
        prompt, asked = overflow.prompt_tokens, overflow.max_tokens
        return ContextOverflow(
            describe(prompt, asked, context), prompt_tokens=prompt, max_tokens=asked,
            context_length=context,
        )  # fmt: skip

    async def _pause(self, delay: float) -> None:
        """Sleep ``delay``, or less if the breaker opens meanwhile."""
        if self.breaker.is_open:
            return
        sleeper = asyncio.ensure_future(self._sleep(delay))
        opened = asyncio.ensure_future(self.breaker.wait_open())
        try:
            await asyncio.wait({sleeper, opened}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, opened):
                task.cancel()
            await asyncio.gather(sleeper, opened, return_exceptions=True)

    async def _attempt(self, request: GenerationRequest) -> Generation:
        """One attempt; what it raises is the retry loop's to judge, except the failures that
        end the call at once (a wrong request, an overflow, the service gone)."""
        self.breaker.check()
        self.attempts += 1
        try:
            generation = await self.inner.generate(request)
        except openai.APIStatusError as error:
            self.breaker.success()  # an answer, even a refusal: the server is there
            status = error.status_code
            overflow = self._overflow(error)
            if overflow is not None:
                self.overflows += 1
                raise overflow from error
            if status in NOT_SERVED:  # every request would get the same: stop the run
                self.failures += 1
                raise EndpointNotServed(
                    f"{self.name}: HTTP {status} to the model's requests "
                    f"({_one_line(error)}): the server does not serve them there; check "
                    "--base-url (on most servers the API root ends in /v1) and the model name"
                ) from error
            if (status < 500 and status not in RETRIABLE_4XX) or status in FINAL_5XX:
                self.failures += 1
                raise InfraError(
                    f"{self.name}: HTTP {status}: {_one_line(error)} (not retried)"
                ) from error
            raise
        except RETRIABLE_ERRORS as error:
            if is_connection_failure(error):
                self.breaker.failure(_failure_cause(error))
                if self.breaker.is_open:
                    raise ServiceDown(str(self.breaker.opened_message)) from error
            raise
        except openai.APIError as error:
            # E.g. a response that does not parse: the server is broken, not busy.
            self.breaker.success()
            self.failures += 1
            raise InfraError(
                f"{self.name}: {type(error).__name__}: {_one_line(error)} (not retried)"
            ) from error
        self.breaker.success()
        return generation

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        deadline = None if self.budget_s is None else self._clock() + self.budget_s
        total = self.max_retries + 1
        probed = False
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._attempt(request)
            except _RETRIED as error:
                last = error
            what = (
                f"HTTP {last.status_code}"
                if isinstance(last, openai.APIStatusError)
                else type(last).__name__
            )
            delay = self._backoff(attempt - 1, last)
            spent = attempt >= total or (deadline is not None and self._clock() + delay >= deadline)
            if spent:
                # Out of attempts or time. If connections are failing and the breaker has
                # not decided yet, wait for its decision and try once more: a dead server
                # then ends the run (ServiceDown) instead of writing this sample off.
                waiting = None if probed or not is_connection_failure(last) else (
                    self.breaker.deciding_in()
                )  # fmt: skip
                if waiting is None:
                    break
                probed, delay = True, waiting
            self.retries += 1
            self.delays.append(delay)
            log.info("%s: %s, retry %d/%d in %.2fs", self.name, what, attempt, total - 1, delay)
            await self._pause(delay)
            if self.breaker.is_open:
                raise ServiceDown(str(self.breaker.opened_message)) from last
        self.failures += 1
        budget = "" if attempt >= total else f" within the {self.budget_s:g} s retry budget"
        raise InfraError(
            f"{self.name}: gave up after {attempt} attempts{budget} "
            f"(last: {what}: {_one_line(last)})"
        ) from last

    async def aclose(self) -> None:
        await self.inner.aclose()
