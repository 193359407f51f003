"""Several servers of one model (``--base-url`` repeated): a pool that spreads the requests,
keeps answering while some servers are down, and says what each one did.

- Each request goes to the endpoint with the fewest requests in flight (``Balancer``), so a
  slow or busy server gets less work without any tuning.
- A request whose endpoint could not be reached (refused, reset, disconnected) is sent at once
  to another endpoint it has not tried: a replica going away costs its in-flight requests a
  second trip, not a retry delay, and the retry layer's breaker never hears of it. Only when
  every endpoint failed it, or every endpoint is out of service, does the failure reach the
  retry layer; then its breaker (``ServiceDown``, exit 3) trips as for one server. A timeout
  or a 5xx is not sent on to another endpoint (the server may still be working on it): it
  goes back to the retry layer, whose next attempt is picked afresh (usually another
  endpoint: on a tie the one picked longest ago wins).
- An endpoint that fails ``FAILS_TO_TAKE_OUT`` requests in a row, or its health check (``GET
  /models`` at preflight), is taken out of service; once its backoff has passed (1 s, doubling
  up to ``PROBE_MAX_S``, back to 1 s once it answers a request) the next request starts a
  health check of it, and it is back when the check is answered. Requests that find every
  endpoint out wait for a running check.
- Which endpoint answered never reaches a record or the response cache: the pool's identity
  (``base_url``) is its URLs sorted and joined by spaces, the same whichever one answers. Per
  endpoint counts go to ``run.json`` (``stats``) and from there to the summary and the report.

The members are models with ``base_url``, ``generate``, ``aclose``, ``preflight`` (raising
``Unreachable`` when nobody listens, ``NotAnAPI`` when what answers is no OpenAI API: a wrong
URL, which stops the run as a refused key does) and ``health`` (None when the server answers,
else why not in a few words); ``OpenAIModel`` is one. One event loop at a time, no lock (asyncio).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import re
import sys
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import openai

from toolbench.errors import UserError
from toolbench.models.balance import Balancer, Member
from toolbench.models.retry import RETRIABLE_ERRORS, is_connection_failure
from toolbench.types import Generation, GenerationRequest, InfraError

log = logging.getLogger(__name__)

#: Failures in a row (connection, timeout, 5xx) that take an endpoint out of service.
FAILS_TO_TAKE_OUT = 3
#: The first wait before an endpoint that went out is checked again; it doubles up to...
PROBE_FIRST_S = 1.0
#: ... this, for an endpoint that stays down.
PROBE_MAX_S = 15.0
#: A health check that takes longer than this counts as failed.
PROBE_TIMEOUT_S = 10.0
#: What counts as an endpoint's failure: no answer (connection, timeout), an HTTP error status
#: (5xx; a 4xx is an answer), a reply that is not an API answer.
ENDPOINT_FAILURES: tuple[type[BaseException], ...] = (
    openai.APIError,
    InfraError,
    *RETRIABLE_ERRORS,
)


class Unreachable(UserError):
    """Nobody listens at the endpoint (raised by a member's ``preflight``): alone, the run
    cannot start (exit 2); in a pool, only that endpoint is out."""

    def __init__(self, url: str, cause: str) -> None:
        super().__init__(
            f"--base-url {url}: cannot connect ({cause}); start the server or fix the URL"
        )
        self.url = url
        self.cause = cause


class NotAnAPI(UserError):
    """Something answers at the endpoint, but neither API path is served there (raised by a
    member's ``preflight``): a wrong ``--base-url`` (no ``/v1``, a file server), exit 2 before
    the run starts, instead of every sample's attempts failing the same way."""

    def __init__(self, url: str, answers: Sequence[str]) -> None:
        super().__init__(
            f"--base-url {url}: no OpenAI-compatible API there ({'; '.join(answers)}); "
            f"{base_url_hint(url)}"
        )
        self.url = url


def base_url_hint(url: str) -> str:
    """The likely fix of a ``--base-url`` at which no API answers: the API's root is the URL
    that ``/chat/completions`` and ``/models`` follow, which for vLLM, SGLang, Ollama and
    llama.cpp (and OpenAI) ends in ``/v1``."""
    url = url.rstrip("/")
    path = urllib.parse.urlsplit(url).path
    for tail in ("/chat/completions", "/completions", "/models"):
        if path.endswith(tail):
            return f"give the API's root, without {tail} (--base-url {url[: -len(tail)]})"
    if not re.search(r"/v\d+(?:/|$)", path):
        return f"add /v1 to it (--base-url {url}/v1), the API's root on most servers"
    return "give the URL that the server's /chat/completions and /models follow (its API root)"


class AllEndpointsDown(ConnectionError):
    """Every endpoint of the pool is out of service: a connection failure to the retry layer
    (so that its breaker counts it), with the last cause seen as its text."""


class Endpoint(Protocol):
    base_url: str | None

    async def generate(self, request: GenerationRequest) -> Generation: ...

    async def preflight(self) -> None: ...

    async def health(self) -> str | None: ...

    async def aclose(self) -> None: ...


def pool_identity(urls: Sequence[str]) -> str:
    """What the cache key and the breaker's line call the pool: the URLs sorted, joined by one
    space (the order they were given in and the replica that answers never matter)."""
    return " ".join(sorted(urls))


def _answered(error: BaseException) -> bool:
    """The server answered (an HTTP status below 500): it is there, and not failing."""
    return isinstance(error, openai.APIStatusError) and error.status_code < 500


class EndpointPool:
    """Least-outstanding routing, failover and take-out over ``endpoints``; see the module doc."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        clock: Callable[[], float] = time.monotonic,
        probe_first_s: float = PROBE_FIRST_S,
        probe_max_s: float = PROBE_MAX_S,
    ) -> None:
        self.endpoints = list(endpoints)
        self.urls = [str(e.base_url) for e in self.endpoints]
        self.balancer = Balancer(self.urls, clock=clock)
        self.base_url = pool_identity(self.urls)
        self.probe_first_s = probe_first_s
        self.probe_max_s = probe_max_s
        self._clock = clock
        self._backoff = {m.index: probe_first_s for m in self.balancer.members}
        self._why = {m.index: "" for m in self.balancer.members}  # last failure, in words
        self._probes: dict[int, asyncio.Task[None]] = {}
        #: Requests sent again to another endpoint after a connection failure.
        self.failovers = 0

    # ---- sending ----

    async def generate(self, request: GenerationRequest) -> Generation:
        """The answer of one endpoint; a connection failure is tried on the others first."""
        self._start_due_probes()
        tried: list[Member] = []
        last: BaseException | None = None
        while True:
            member = self.balancer.pick(skip=tried)
            if member is None and not tried:
                member = await self._after_waiting_for_probes()
            if member is None:
                if last is not None:
                    raise last
                raise AllEndpointsDown(self._down_cause())
            if tried:
                self.failovers += 1
            try:
                return await self._send(member, request)
            except Exception as error:
                if not is_connection_failure(error):
                    raise
                last = error
            tried.append(member)

    async def _send(self, member: Member, request: GenerationRequest) -> Generation:
        endpoint = self.endpoints[member.index]
        start = self._clock()
        try:
            generation = await endpoint.generate(request)
        except asyncio.CancelledError:
            self.balancer.abandoned(member)
            raise
        except Exception as error:
            if _answered(error):
                self.balancer.finished(member, ok=True, latency_s=self._clock() - start)
            elif isinstance(error, ENDPOINT_FAILURES):
                self._failed(member, error)
            else:  # not the server's doing (a request this backend cannot send)
                self.balancer.abandoned(member)
            raise
        self.balancer.finished(member, ok=True, latency_s=self._clock() - start)
        # Reset by an answer, not by a passed health check: a server that lists its models
        # but fails every request stays out longer each time.
        self._backoff[member.index] = self.probe_first_s
        return generation

    def _failed(self, member: Member, error: BaseException) -> None:
        """Count one failure of ``member``; take it out when it keeps failing."""
        self.balancer.finished(member, ok=False)
        self._why[member.index] = _cause(error)
        if member.failing >= FAILS_TO_TAKE_OUT and member.out_until is None:
            self._take_out(member)

    def _take_out(self, member: Member) -> None:
        seconds = self._backoff[member.index]
        self._backoff[member.index] = min(self.probe_max_s, seconds * 2)
        self.balancer.take_out(member, seconds)
        log.info("endpoint %s out of service (%s); checked again in %.0f s", member.name,
                 self._why[member.index], seconds)  # fmt: skip

    def _down_cause(self) -> str:
        causes = [why for why in self._why.values() if why]
        return causes[-1] if causes else "every endpoint is out of service"

    # ---- taking out, checking back in ----

    def _start_due_probes(self) -> None:
        """Start a health check of each endpoint whose time out has passed (kept out while it
        runs: a request must not be the check). A check left behind by an event loop that has
        ended (a model used by a second ``asyncio.run``) is started again."""
        now, loop = self._clock(), asyncio.get_running_loop()
        for member in self.balancer.members:
            running = self._probes.get(member.index)
            if running is not None and running.get_loop() is loop:
                continue
            until = member.out_until
            if until is None or (running is None and now < until):
                continue
            member.out_until = math.inf
            task = loop.create_task(self._probe(member))
            self._probes[member.index] = task
            task.add_done_callback(functools.partial(self._probe_done, member.index))

    def _probe_done(self, index: int, task: asyncio.Task[None]) -> None:
        if self._probes.get(index) is task:
            del self._probes[index]
        member = self.balancer.members[index]
        if member.out_until == math.inf:  # cut short (its loop ended): due again at once
            member.out_until = self._clock()

    async def _probe(self, member: Member) -> None:
        try:
            why = await asyncio.wait_for(self.endpoints[member.index].health(), PROBE_TIMEOUT_S)
        except asyncio.TimeoutError:
            why = f"no answer to its health check within {PROBE_TIMEOUT_S:g} s"
        except Exception as error:  # a check that breaks counts as failed, never as a crash
            why = _cause(error)
        if why is None:  # back; its backoff is reset by its next answer, not by the check
            self.balancer.put_back(member)
            log.info("endpoint %s back in service", member.name)
            return
        self._why[member.index] = why
        seconds = self._backoff[member.index]
        self._backoff[member.index] = min(self.probe_max_s, seconds * 2)
        member.out_until = self._clock() + seconds  # still out: not counted as a new take-out

    async def _after_waiting_for_probes(self) -> Member | None:
        """Every endpoint is out: wait for the health checks running (or due), then pick."""
        self._start_due_probes()
        running = list(self._probes.values())
        if running:
            await asyncio.wait(running, timeout=PROBE_TIMEOUT_S)
        return self.balancer.pick()

    # ---- before the run, after it ----

    async def preflight(self) -> None:
        """Check every endpoint at once; the ones nobody listens at are out (and checked again
        later). The run cannot start only if no endpoint answers (one line naming them)."""
        outcomes = await asyncio.gather(
            *(e.preflight() for e in self.endpoints), return_exceptions=True
        )
        down: list[tuple[Member, Unreachable]] = []
        for member, outcome in zip(self.balancer.members, outcomes, strict=True):
            if isinstance(outcome, Unreachable):
                down.append((member, outcome))
            elif isinstance(outcome, BaseException):
                raise outcome  # e.g. the key refused: no other endpoint will take it either
        if len(down) == len(self.endpoints):
            causes = sorted({error.cause for _, error in down})
            raise UserError(
                f"--base-url {', '.join(self.urls)}: cannot connect to any of them "
                f"({'; '.join(causes)}); start the servers or fix the URLs"
            )
        for member, error in down:
            self._why[member.index] = error.cause
            self._take_out(member)
            print(
                f"toolbench: warning: --base-url {member.name}: cannot connect ({error.cause}); "
                "left out of the pool and checked again during the run",
                file=sys.stderr,
            )

    @property
    def context_length(self) -> int | None:
        """The context window the first endpoint that stated one gave (they serve one model)."""
        for endpoint in self.endpoints:
            known = getattr(endpoint, "context_length", None)
            if isinstance(known, int):
                return known
        return None

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per endpoint (by URL): calls, errors, latency, times taken out."""
        return self.balancer.stats()

    async def aclose(self) -> None:
        """Stop the health checks running (those of this event loop: one left by an ended
        loop died with it) and close every endpoint."""
        loop = asyncio.get_running_loop()
        probes = [task for task in self._probes.values() if task.get_loop() is loop]
        self._probes.clear()
        for task in probes:
            task.cancel()
        await asyncio.gather(*probes, return_exceptions=True)
        closing: list[Awaitable[None]] = [e.aclose() for e in self.endpoints]
        results = await asyncio.gather(*closing, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result


def _cause(error: BaseException) -> str:
    """A failure in a few words, for the log and the breaker's line."""
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}"
    text = " ".join(str(error).split()).removeprefix("Connection error: ")
    return text[:100] or type(error).__name__
