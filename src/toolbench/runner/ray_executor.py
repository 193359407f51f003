"""``--executor ray``: a run's samples solved on a Ray cluster's nodes, every record written
here, by the driver, into the one run log.

Each alive node gets one sample actor (pinned to the node), which builds the run's work from
the run's recipe (``runner.work.open_work``): its own sandbox workers, its own loaded tasks and
executed golds, its own model client, kept warm for the whole run. The driver hands keys to
actors in small batches (one remote call per batch keeps the driver's CPU per sample low) and
keeps each actor's share of ``--concurrency`` in flight; a batch's records come back to
``on_record`` in this process, the only writer of the log, so resume, the checksum chain and
"exactly one record per sample x epoch" are the lifecycle's, as in a local run.

A key lives in exactly one place at a time: not yet handed out, waiting to be handed out again,
or in one batch in flight on one actor. An actor that dies (its node lost, its process killed)
takes its batches with it: their keys go back to be handed to another actor, and a key that
was in flight on ``MAX_LOSSES`` dead actors is written as its own ``infra_error`` record
(retried by a rerun, like any infra error), so one sample that kills its worker cannot kill
the run. A result that never came back is never written, so nothing is written twice.
``ServiceDown`` from a sample stops the dispatching, as locally; Ctrl-C kills the actors and
writes nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.solve import SampleState, one_line_text
from toolbench.models.balance import merge_stats
from toolbench.models.ray_setup import connect
from toolbench.models.spec import pool_stats
from toolbench.runner.engine import OnRecord, SampleWork, SessionStats, Todo, make_record
from toolbench.runner.store import Key
from toolbench.runner.work import WorkRecipe, open_work
from toolbench.types import Outcome, Sample, ServiceDown, Status

#: A key in flight on this many actors that died is written as its infra error.
MAX_LOSSES = 3
#: The most keys in one remote call (fewer when an actor's share of the concurrency is small).
MAX_BATCH = 16
#: How often the driver looks for nodes that joined (or for replacements after a loss).
REFRESH_S = 5.0
#: How long, after the first actor is ready, the others of the run's start get to be ready
#: before keys are handed out (they build the same work, so they are ready at about the same
#: time; waiting spreads the first keys over every node instead of the quickest one).
STARTUP_WAIT_S = 30.0
#: How long the driver waits for actors to report their models' stats and shut down cleanly.
CLOSE_TIMEOUT_S = 30.0
#: Environment the actors need from the driver's (API keys, toolbench's own settings): a node's
#: processes otherwise see only the environment its ``ray start`` had.
ENV_PREFIXES = ("TOOLBENCH_", "OPENAI_", "HF_", "HUGGING_FACE_", "TRANSFORMERS_")

Solved = tuple[Key, dict[str, Any] | None, str | None]  # (key, record, why the service is down)


class SampleActor:
    """One node's worker: the run's work built on the node, solving keys handed to it.

    The work is built in a thread of its own: ``open_work`` runs the golds in an event loop of
    its own, which cannot start inside the actor's."""

    def __init__(self, recipe: WorkRecipe, run_dirs: dict[str, str | None]) -> None:
        self._stack = contextlib.ExitStack()
        with ThreadPoolExecutor(max_workers=1) as pool:
            opened = pool.submit(self._stack.enter_context, open_work(recipe)).result()
        self.work = opened.work
        for prepared in self.work.prepared:  # where tasks save files: the driver's run folder
            folder = run_dirs.get(prepared.task.name)
            prepared.resources.run_dir = Path(folder) if folder else None
        self._closers = [opened.work.subject, *opened.roles.values()]

    async def ready(self) -> dict[str, Any]:
        """Where this actor runs (its constructor finished: the work is ready)."""
        import ray  # deferred: ray is the optional extra toolbench[ray]

        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def solve(self, keys: list[Key]) -> list[Solved]:
        """Every key's record; a key whose model service is gone has none (and says why)."""

        async def one(key: Key) -> Solved:
            try:
                return key, await self.work.solve(key), None
            except ServiceDown as exc:
                return key, None, one_line_text(str(exc))

        return list(await asyncio.gather(*(one(key) for key in keys)))

    async def close(self) -> dict[str, Any]:
        """This actor's model pool stats; then its models, sandbox workers and tasks closed."""
        stats = pool_stats(self.work.model)
        for under_test in self._closers:
            with contextlib.suppress(Exception):
                await under_test.aclose()
        self._stack.close()
        return stats


@dataclass(eq=False)
class Slot:
    """One actor as the driver sees it."""

    handle: Any
    node: str
    ready: bool = False
    in_flight: int = 0
    alone: bool = False  # solving a key lost twice, and nothing else


@dataclass
class Tally:
    """What the executor did this session, for run.json's ``executor`` field."""

    nodes: set[str] = field(default_factory=set)
    actors: int = 0
    actors_lost: int = 0
    actor_start_errors: list[str] = field(default_factory=list)
    redispatched: int = 0
    lost_as_infra: int = 0
    batches: int = 0
    samples: int = 0
    driver_cpu_s: float = 0.0
    writing_cpu_s: float = 0.0  # of which appending records to the log (as a local run does)
    startup_s: float = 0.0
    pools: list[dict[str, Any]] = field(default_factory=list)


class RayExecutor:
    """Samples solved by one actor per node of the Ray cluster at ``address`` (see module
    doc). Ray is connected to on construction, so a missing Ray or an unreachable cluster is
    refused (``UserError``) before the run's folder is made."""

    def __init__(self, recipe: WorkRecipe, address: str | None = None) -> None:
        self.recipe, self.address = recipe, address
        self.tally = Tally()
        connect(address)

    async def run(
        self,
        todo: Todo,
        work: SampleWork,
        on_record: OnRecord,
        stats: SessionStats,
        concurrency: int,
    ) -> None:
        ray = connect(self.address)
        start = time.perf_counter()
        dispatch = _Dispatch(ray, self.recipe, todo, work, on_record, stats, self.tally)
        try:
            await dispatch.run(max(1, concurrency))
        finally:
            # Solving time and the driver's CPU, as a local run counts them: the actors' start
            # (each node loading the tasks and running the golds) is ``startup_s``.
            if dispatch.gate_cpu is not None:
                self.tally.driver_cpu_s += time.process_time() - dispatch.gate_cpu
            solving_from = dispatch.gate_opened or time.perf_counter()
            self.tally.startup_s += solving_from - start
            stats.elapsed_s = time.perf_counter() - solving_from
            await dispatch.shutdown()

    def final_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """run.json's ``executor`` (nodes, actors, losses, driver CPU per sample), and the
        actors' model pools' stats merged with the driver's."""
        t = self.tally
        executor = {
            "kind": "ray",
            "address": self.address or os.environ.get("RAY_ADDRESS") or "local",
            "nodes": len(t.nodes),
            "actors": t.actors,
            "actors_lost": t.actors_lost,
            "samples": t.samples,
            "redispatched": t.redispatched,
            "lost_as_infra_error": t.lost_as_infra,
            "batches": t.batches,
            "startup_s": round(t.startup_s, 3),
            "driver_cpu_ms_per_sample": _per_sample(t.driver_cpu_s, t.samples),
            "writing_cpu_ms_per_sample": _per_sample(t.writing_cpu_s, t.samples),
        }
        if t.actor_start_errors:
            executor["actor_start_errors"] = t.actor_start_errors[:5]
        fields = {"endpoints", *(name for part in t.pools for name in part)}
        driver = {name: info[name] for name in fields if name in info}  # the driver's own pool
        pools = merge_pool_stats([driver, *t.pools])
        return {"executor": executor, **pools}


def _per_sample(seconds: float, samples: int) -> float | None:
    return round(1000 * seconds / samples, 3) if samples else None


def merge_pool_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Pool stats of several processes as one: per field (``endpoints``, ...) the members'
    counts and latency summed, the mean latency of answered calls recomputed
    (``models.balance.merge_stats``, as for the sessions of a resumed run)."""
    fields = dict.fromkeys(name for part in parts for name in part)
    return {name: merge_stats([part.get(name) or {} for part in parts]) for name in fields}


class _Dispatch:
    """One session's hand-out loop (see the module doc for what it guarantees)."""

    def __init__(
        self,
        ray: Any,
        recipe: WorkRecipe,
        todo: Todo,
        work: SampleWork,
        on_record: OnRecord,
        stats: SessionStats,
        tally: Tally,
    ) -> None:
        self.ray, self.recipe, self.todo, self.on_record = ray, recipe, todo, on_record
        self.stats, self.tally = stats, tally
        self.samples = {(s.task, s.id): s for p in work.prepared for s in p.samples}
        # The run folder the lifecycle gave the driver's tasks (the actors' tasks save files
        # there too: the same path on the node that solves the sample).
        self.run_dirs = {
            p.task.name: str(p.resources.run_dir) if p.resources.run_dir else None
            for p in work.prepared
        }
        self.again: deque[tuple[Key, str]] = deque()  # keys whose actor died, to hand out again
        self.quarantine: deque[tuple[Key, str]] = deque()  # keys whose actors died twice
        self.losses: dict[Key, int] = {}
        self.slots: list[Slot] = []
        # Actors per node that died before they were ready (bounded: see refresh). Actors that
        # die while solving need no bound: each such death costs a key one of its MAX_LOSSES.
        self.failed_starts: dict[str, int] = {}
        self.pending: dict[asyncio.Future[Any], tuple[Slot, list[tuple[Key, str]] | None]] = {}
        self.exhausted = False
        self.last_refresh = 0.0
        self.first_ready: float | None = None  # when the first actor was ready
        self.gate_open = False  # keys are handed out (see STARTUP_WAIT_S)
        self.gate_opened: float | None = None  # perf_counter() when it opened
        self.gate_cpu: float | None = None  # process_time() when it opened
        self.starting: list[Slot] = []  # the actors started with the run
        self.actor_class = ray.remote(SampleActor)

    async def run(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.refresh()
        self.starting = list(self.slots)
        while True:
            self.fill()
            if not self.pending:
                if self.finished() or not self.refresh():
                    break
                continue
            timeout = REFRESH_S if self.gate_open else 1.0
            done, _ = await asyncio.wait(
                self.pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            for future in done:
                if future in self.pending:  # not dropped with its actor by an earlier one
                    self.settle(future)
            if time.monotonic() - self.last_refresh >= REFRESH_S:
                self.refresh()
        if not self.finished() and self.stats.stopped is None:
            why = "; ".join(self.tally.actor_start_errors[-1:]) or "every node was lost"
            self.stats.stopped = one_line_text(f"no Ray node left to run samples on ({why})")

    def finished(self) -> bool:
        waiting = self.again or self.quarantine
        return self.stats.stopped is not None or (self.exhausted and not waiting)

    # -- actors ---------------------------------------------------------------------------
    def refresh(self) -> bool:
        """An actor on every alive node (with CPUs) that has none; True if any was started.
        A node whose actors failed to start ``MAX_LOSSES`` times is left alone."""
        self.last_refresh = time.monotonic()
        if self.finished():
            return False
        # deferred: ray is the optional extra toolbench[ray]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        live = {slot.node for slot in self.slots}
        started = False
        for node in self.ray.nodes():
            node_id = node.get("NodeID", "")
            if not node.get("Alive") or not node.get("Resources", {}).get("CPU"):
                continue
            if node_id in live or self.failed_starts.get(node_id, 0) >= MAX_LOSSES:
                continue
            handle = self.actor_class.options(
                num_cpus=0,  # it uses CPU through its sandbox processes; CPUs stay for replicas
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                runtime_env={"env_vars": _forwarded_env()},
            ).remote(self.recipe, self.run_dirs)
            slot = Slot(handle, node_id)
            self.slots.append(slot)
            self.pending[_future(handle.ready.remote())] = (slot, None)
            self.tally.actors += 1
            started = True
        return started

    def shares(self) -> tuple[int, int]:
        """(keys in flight per ready actor, keys per batch)."""
        ready = sum(1 for slot in self.slots if slot.ready) or 1
        share = max(1, math.ceil(self.concurrency / ready))
        return share, max(1, min(MAX_BATCH, share // 2))

    def open_gate(self) -> bool:
        """Whether keys may be handed out: every actor of the start is ready (or gone), or
        the first has waited ``STARTUP_WAIT_S`` for the others."""
        if not self.gate_open and self.first_ready is not None:
            starting = [slot for slot in self.starting if slot in self.slots and not slot.ready]
            waited = time.monotonic() - self.first_ready
            self.gate_open = not starting or waited >= STARTUP_WAIT_S
            if self.gate_open:
                self.gate_opened, self.gate_cpu = time.perf_counter(), time.process_time()
        return self.gate_open

    def fill(self) -> None:
        """Hand keys to every ready actor up to its share. While keys lost twice wait, actors
        drain and take them one at a time, each alone on its actor (see ``lose``)."""
        if not self.open_gate():
            return
        share, batch_size = self.shares()
        for slot in self.slots:
            if not slot.ready or slot.alone or self.stats.stopped is not None:
                continue
            if self.quarantine:
                if slot.in_flight == 0:
                    slot.alone = True
                    self.send(slot, [self.quarantine.popleft()])
                continue
            while slot.in_flight < share:
                batch = self.take(min(batch_size, share - slot.in_flight))
                if not batch:
                    return
                self.send(slot, batch)

    def send(self, slot: Slot, batch: list[tuple[Key, str]]) -> None:
        slot.in_flight += len(batch)
        future = _future(slot.handle.solve.remote([key for key, _ in batch]))
        self.pending[future] = (slot, batch)
        self.tally.batches += 1

    def take(self, n: int) -> list[tuple[Key, str]]:
        """The next keys to hand out: a key handed out again (its actor died) goes alone, so
        that keys that merely shared a batch with one that kills its actor part from it."""
        if self.again:
            return [self.again.popleft()]
        batch: list[tuple[Key, str]] = []
        while not self.exhausted and len(batch) < n:
            try:
                batch.append(next(self.todo))
            except StopIteration:
                self.exhausted = True
        return batch

    # -- results ----------------------------------------------------------------------------
    def settle(self, future: asyncio.Future[Any]) -> None:
        slot, batch = self.pending.pop(future)
        try:
            result = future.result()
        except self.ray.exceptions.RayTaskError:
            if batch is None:  # the actor's constructor failed (e.g. the node lacks the data)
                self.failed_start(slot, future.exception())
                return
            raise  # a method of ours raised: a harness bug, not a node lost
        except self.ray.exceptions.RayError as exc:
            if batch is None:  # its node died before it was ready
                self.failed_start(slot, exc)
                return
            self.drop(slot, lost=True)
            self.lose(batch)
            return
        if batch is None:
            slot.ready = True
            self.tally.nodes.add(slot.node)
            if self.first_ready is None:
                self.first_ready = time.monotonic()
            return
        slot.in_flight -= len(batch)
        slot.alone = False
        bars = dict(batch)
        for key, record, down in result:
            if record is None:
                if self.stats.stopped is None:
                    self.stats.stopped = down
                continue
            self.tally.samples += 1
            writing = time.thread_time()
            self.on_record(record, bars[key])
            self.tally.writing_cpu_s += time.thread_time() - writing

    def failed_start(self, slot: Slot, exc: BaseException | None) -> None:
        self.failed_starts[slot.node] = self.failed_starts.get(slot.node, 0) + 1
        self.tally.actor_start_errors.append(_start_error(exc))
        self.drop(slot, lost=False)

    def drop(self, slot: Slot, lost: bool) -> None:
        """The actor is gone (or as good as gone: killed, so it can never answer late); its
        other batches in flight are lost with it."""
        if slot not in self.slots:
            return
        self.slots.remove(slot)
        if lost:
            self.tally.actors_lost += 1
        with contextlib.suppress(Exception):
            self.ray.kill(slot.handle)
        for future, (other, batch) in list(self.pending.items()):
            if other is slot:
                del self.pending[future]
                future.cancel()
                if batch is not None:
                    self.lose(batch)

    def lose(self, batch: list[tuple[Key, str]]) -> None:
        """Keys that were in flight on an actor that died. Lost once (a node lost: the
        common case), a key is handed out again at once; lost twice, it waits to run alone on
        an actor, so that a key that kills its actor takes no other key with it the third
        time; lost ``MAX_LOSSES`` times, it is written as its infra error."""
        for key, bar in batch:
            losses = self.losses.get(key, 0) + 1
            self.losses[key] = losses
            if losses < MAX_LOSSES:
                (self.again if losses == 1 else self.quarantine).append((key, bar))
                self.tally.redispatched += 1
                continue
            self.tally.lost_as_infra += 1
            self.tally.samples += 1
            self.on_record(self.lost_record(key, losses), bar)

    def lost_record(self, key: Key, losses: int) -> dict[str, Any]:
        sample: Sample = self.samples[(key[0], key[1])]
        message = (
            f"ray: the worker running this sample was lost {losses} times (node or actor "
            "died); rerun the command to retry it"
        )
        outcome = Outcome(status=Status.INFRA_ERROR, message=message)
        return make_record(SampleState(sample=sample, epoch=key[2]), outcome)

    async def shutdown(self) -> None:
        """Collect the actors' pool stats and close them (their sandbox workers stop); then
        kill them. After a Ctrl-C (or any failure) they are killed at once."""
        for future in self.pending:
            future.cancel()
        self.pending.clear()
        slots, self.slots = self.slots, []
        if not _cancelled():  # a clean end: the actors' stats, and their sandboxes stopped
            closing = [_future(slot.handle.close.remote()) for slot in slots if slot.ready]
            done, _ = await asyncio.wait(closing, timeout=CLOSE_TIMEOUT_S) if closing else ((), ())
            for future in done:
                if not future.cancelled() and future.exception() is None:
                    self.tally.pools.append(future.result())
        for slot in slots:
            with contextlib.suppress(Exception):
                self.ray.kill(slot.handle)


def _future(ref: Any) -> asyncio.Future[Any]:
    """A Ray object ref as an asyncio future of this loop."""
    return asyncio.wrap_future(ref.future())


def _cancelled() -> bool:
    current = asyncio.current_task()
    cancelling = getattr(current, "cancelling", None)  # Python >= 3.11
    return callable(cancelling) and bool(cancelling())


def _start_error(exc: BaseException | None) -> str:
    text = one_line_text(str(exc))
    marker = "Error"  # the constructor's own exception line, where Ray's text names it
    for line in str(exc).splitlines()[::-1]:
        if marker in line and ":" in line:
            text = one_line_text(line.strip())
            break
    return text[:300]


def _forwarded_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)}
