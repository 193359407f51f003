"""Retrying transient service failures, so one overloaded minute does not cost a whole run.

Policy: 429, 408, 409, 5xx, timeouts and connection errors are retried with exponential
backoff and full jitter (``uniform(0, min(max_delay, base_delay * 2**n))``), which spreads a
burst of concurrent clients out instead of making them retry in lockstep. A ``Retry-After``
header wins over the computed delay (capped at ``max_delay``) because the server knows best.
Every other 4xx means the request itself is wrong (bad parameter, bad key): retrying cannot
help, so it fails at once. Either way the caller gets ``InfraError``: the sample is excluded
from scores rather than blamed on the model.
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
from toolbench.types import Generation, GenerationRequest, InfraError

log = logging.getLogger(__name__)

#: 4xx statuses that are about timing, not about the request, and so are worth retrying.
RETRIABLE_4XX = frozenset({408, 409, 429})


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


class RetryingModel:
    """Wraps a model and retries its transient failures.

    Counters (``calls``, ``attempts``, ``retries``, ``failures``) are totals over the wrapper's
    life; ``delays`` records every wait chosen, so tests can check the policy without sleeping.
    """

    def __init__(
        self,
        inner: Model,
        max_retries: int,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.inner = inner
        self.name = inner.name
        self.cacheable = inner.cacheable
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self._rng = rng
        self.calls = 0
        self.attempts = 0
        self.retries = 0
        self.failures = 0
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

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        total = self.max_retries + 1
        last: BaseException | None = None
        what = ""
        for attempt in range(1, total + 1):
            self.attempts += 1
            try:
                return await self.inner.generate(request)
            except openai.APIStatusError as error:
                status = error.status_code
                if status < 500 and status not in RETRIABLE_4XX:
                    self.failures += 1
                    raise InfraError(
                        f"{self.name}: HTTP {status}: {_one_line(error)} (not retried)"
                    ) from error
                last, what = error, f"HTTP {status}"
            except RETRIABLE_ERRORS as error:
                last, what = error, type(error).__name__
            except openai.APIError as error:
                # E.g. a response that does not parse: the server is broken, not busy.
                self.failures += 1
                raise InfraError(
                    f"{self.name}: {type(error).__name__}: {_one_line(error)} (not retried)"
                ) from error
            assert last is not None  # every path that gets here caught an error
            if attempt == total:
                break
            delay = self._backoff(attempt - 1, last)
            self.retries += 1
            self.delays.append(delay)
            log.info("%s: %s, retry %d/%d in %.2fs", self.name, what, attempt, total - 1, delay)
            await self._sleep(delay)
        assert last is not None
        self.failures += 1
        raise InfraError(
            f"{self.name}: gave up after {total} attempts (last: {what}: {_one_line(last)})"
        ) from last

    async def aclose(self) -> None:
        await self.inner.aclose()
