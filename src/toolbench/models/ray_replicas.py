"""A local model served by Ray actors, one per replica (``--model-replicas N``).

One process holds one copy of an ``hf:`` model on one device; a model that must answer
faster needs copies on more devices, perhaps on more machines. Each replica here is a Ray
actor that builds the bare model from the registry exactly as a local run would (no retries,
no cache: those wrap the pool in the calling process, so the cache key is the model's name and
never says which replica answered). Requests go to the replica with the fewest in flight
(``balance.Balancer``), and a replica batches the requests it holds as the local backend does
(``--model-arg batch_size``).

Every process of a run that builds the model (the driver, and with ``--executor ray`` each
node's sample actor) gets handles to the same replicas: they are named actors
``toolbench-<group>-<spec digest>-<i>`` in the ``toolbench`` namespace, created with
``get_if_exists``; ``ModelOptions.replica_group`` is set once per run (``runner.run.execute``).
Only the process whose request created a replica kills it when it closes (each replica keeps
its creator's token); the others just let go. Replicas are placed with ``num_gpus=1`` when the
cluster has GPUs (unless ``--hf-device cpu``), else ``num_cpus=1``.

A replica that dies is taken out of the pool for good and the request goes to another one;
when none is left the model's service is gone (``ServiceDown``: the run stops and the samples
not yet done are left for a rerun, which starts new replicas).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import os
import pickle
import time
import uuid
from typing import Any

from toolbench.errors import UserError
from toolbench.models.args import ReplicaArgs, schema_args
from toolbench.models.balance import Balancer
from toolbench.models.base import Model, ModelOptions
from toolbench.models.registry import make_bare_model
from toolbench.types import Generation, GenerationRequest, InfraError, ServiceDown

#: How long the pool waits for its replicas to load the model (a large model on a fresh node
#: takes minutes; a replica that cannot be placed at all is refused before waiting).
READY_TIMEOUT_S = 1800.0
FLAG = "--model-replicas"
#: How long a replica Ray cannot reach for now (``ActorUnavailableError``: a network blip,
#: a busy node) stays out before it is tried again; a dead one stays out for good.
UNAVAILABLE_OUT_S = 10.0


def replica_names(group: str, spec: str, count: int) -> list[str]:
    """The Ray actor names of a run's replicas of ``spec``: the group says which run, the
    digest which model (a run may replicate more than one), the index which copy."""
    digest = hashlib.sha256(spec.encode()).hexdigest()[:8]
    return [f"toolbench-{group}-{digest}-{i}" for i in range(count)]


def member_name(index: int) -> str:
    """What run.json and the summary call a replica (the same in every process of the run,
    so that per-process counts add up)."""
    return f"replica {index}"


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling as itself (so the caller raises what a local model
    would have raised, e.g. ``ContextOverflow`` with its numbers), else an ``InfraError``
    saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return InfraError(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    return exc


class ReplicaServer:
    """One replica, inside its Ray actor: the bare model the registry builds for ``spec``.

    Its constructor never raises: a model that cannot load (a wrong path, a missing library)
    is told by ``describe`` as ``error``, so the pool can refuse the run with the model's own
    one-line message instead of Ray's report of a dead actor."""

    def __init__(self, spec: str, options: ModelOptions, creator: str, cwd: str = "") -> None:
        if cwd and os.path.isdir(cwd):  # a relative model path means what it meant to the run
            os.chdir(cwd)
        self.creator = creator
        self.model: Model | None = None
        self.error: str | None = None
        try:
            self.model = make_bare_model(spec, _one_copy(options))
        except UserError as exc:
            self.error = str(exc)
        except Exception as exc:  # the backend's own failure to load, told in one line
            reason = " ".join(str(exc).split())[:300]
            self.error = (
                f"{FLAG} {_settings(options).replicas}: a replica could not load {spec} "
                f"({type(exc).__name__}: {reason})"
            )

    def describe(self) -> dict[str, Any]:
        """The model's name and cacheability (the pool answers to both as the local model
        would), who created this replica, or why the model did not load."""
        import ray  # deferred: ray is the optional extra toolbench[ray]

        model = self.model
        return {
            "name": model.name if model is not None else None,
            "cacheable": bool(model.cacheable) if model is not None else False,
            "creator": self.creator,
            "error": self.error,
            "node": ray.get_runtime_context().get_node_id(),
        }

    async def generate(self, request: GenerationRequest) -> Generation | BaseException:
        """The model's answer, or the exception it raised as a value (Ray would wrap it)."""
        if self.model is None:
            return InfraError(f"replica could not load its model: {self.error}")
        try:
            return await self.model.generate(request)
        except Exception as exc:
            return _portable(exc)

    async def aclose(self) -> None:
        if self.model is not None:
            await self.model.aclose()


def _settings(options: ModelOptions) -> ReplicaArgs:
    """The replica options among the backend's (``replicas``, ``ray_address``)."""
    return schema_args(ReplicaArgs, options.model_args)


def _one_copy(options: ModelOptions) -> ModelOptions:
    """``options`` as one replica builds its model with: one copy, in its own process."""
    return dataclasses.replace(options, model_args={**options.model_args, "replicas": 1})


def placement(cluster: dict[str, float], count: int, device: str = "auto") -> dict[str, float]:
    """Ray resources for one replica: a GPU each when the cluster has GPUs (or ``--hf-device``
    asks for CUDA), a CPU each when it has none (or ``--hf-device cpu``). ``UserError`` when
    the cluster has fewer than ``count`` of them: the replicas would wait for a place forever.
    A replica sees its own GPU as ``cuda:0``."""
    gpus = cluster.get("GPU", 0.0)
    wants_gpu = device.startswith("cuda") or (device == "auto" and gpus >= 1)
    kind, have = ("GPU", gpus) if wants_gpu else ("CPU", cluster.get("CPU", 0.0))
    if have < count:
        raise UserError(
            f"{FLAG} {count}: each replica needs one {kind} and the Ray cluster has "
            f"{have:g}; ask for at most {int(have)} replicas or add nodes"
        )
    return {"num_gpus": 1} if kind == "GPU" else {"num_cpus": 1}


def _strip(request: GenerationRequest) -> GenerationRequest:
    """The request without the fields only built-in models read (the sample, the task's whole
    context, the gold): a real model never sees them, and they would be shipped per call."""
    return dataclasses.replace(request, sample=None, context=None, ideal=None, ideal_tool_calls=())


class ReplicaPool:
    """The ``Model`` a run sees for ``--model-replicas N``: requests spread over N replicas.

    Rebuilt from ``(spec, options)`` when pickled (into a Ray sample actor, say): the copy finds
    the same replicas by name and creates nothing."""

    def __init__(self, spec: str, options: ModelOptions) -> None:
        # deferred: ray_setup is where a missing ray becomes one line
        from toolbench.models.ray_setup import NAMESPACE, connect

        settings = _settings(options)
        ray = connect(settings.ray_address, FLAG)
        group = options.replica_group or uuid.uuid4().hex[:12]
        self.spec = spec
        self.options = dataclasses.replace(options, replica_group=group)
        self.names = replica_names(group, spec, settings.replicas)
        self._token = uuid.uuid4().hex
        device = str(options.model_args.get("device", "auto"))
        resources = placement(ray.cluster_resources(), settings.replicas, device)
        actor = ray.remote(ReplicaServer)
        self.handles = [
            actor.options(
                name=name,
                namespace=NAMESPACE,
                get_if_exists=True,
                max_restarts=0,
                **resources,
            ).remote(spec, self.options, self._token, os.getcwd())
            for name in self.names
        ]
        self.created: list[bool] = []
        described = self._wait_ready(ray)
        self.name: str = described[0]["name"]
        self.cacheable: bool = described[0]["cacheable"]
        self.nodes = len({d["node"] for d in described})
        self.balancer = Balancer([member_name(i) for i in range(len(self.handles))])
        self._closed = False

    def _wait_ready(self, ray: Any) -> list[dict[str, Any]]:
        """Each replica's ``describe`` once it has loaded the model; a model that did not
        load is the run's ``UserError`` (the replicas this process made are killed)."""
        try:
            described = ray.get(
                [h.describe.remote() for h in self.handles], timeout=READY_TIMEOUT_S
            )
        except Exception as exc:  # GetTimeoutError, a replica that died while loading
            # Who created which replica is not known; they belong to their creator's process
            # and end with it.
            reason = " ".join(str(exc).split())[:300]
            raise UserError(
                f"{FLAG} {len(self.handles)}: the replicas of {self.spec} did not start "
                f"({type(exc).__name__}: {reason})"
            ) from None
        self.created = [d["creator"] == self._token for d in described]
        failed = next((d["error"] for d in described if d["error"]), None)
        if failed is None and len({d["name"] for d in described}) != 1:
            failed = f"{FLAG}: the replicas named {self.names[0]}... serve different models"
        if failed is not None:
            self._kill_created(ray)
            raise UserError(failed)
        return described

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReplicaPool, (self.spec, self.options))

    async def generate(self, request: GenerationRequest) -> Generation:
        """The answer of the least busy replica. A replica that is gone is taken out for good
        and the request goes to the next; none left: ``ServiceDown``."""
        import ray  # deferred: ray is the optional extra toolbench[ray]

        sent = _strip(request)
        while True:
            member = self.balancer.pick()
            if member is None:
                raise ServiceDown(
                    f"{self.name}: all {len(self.handles)} Ray replicas of the model are lost"
                )
            started = time.perf_counter()
            try:
                result = await self.handles[member.index].generate.remote(sent)
            except ray.exceptions.ActorUnavailableError:  # unreachable for now; may come back
                self.balancer.finished(member, ok=False)
                self.balancer.take_out(member, UNAVAILABLE_OUT_S)
                continue
            except ray.exceptions.RayActorError:  # dead (replicas are never restarted)
                self.balancer.finished(member, ok=False)
                self.balancer.take_out(member, math.inf)
                continue
            except asyncio.CancelledError:  # the run stopping: neither answer nor error
                self.balancer.abandoned(member)
                raise
            except Exception as exc:  # Ray could not carry the call (the model did not fail)
                self.balancer.finished(member, ok=False)
                reason = " ".join(str(exc).split())[:300]
                raise InfraError(
                    f"{self.name}: {member.name} did not answer ({type(exc).__name__}: {reason})"
                ) from None
            ok = not isinstance(result, InfraError)
            self.balancer.finished(member, ok=ok, latency_s=time.perf_counter() - started)
            if ok and member.out_until is not None:  # back from being out of reach
                self.balancer.put_back(member)
            if isinstance(result, BaseException):
                raise result
            return result

    def pool_stats(self) -> dict[str, Any]:
        """Calls, errors and latency per replica, for run.json (as for endpoint pools)."""
        return {"endpoints": self.balancer.stats()}

    async def aclose(self) -> None:
        """Kill the replicas this process created (the run is over); others' are left."""
        if self._closed:
            return
        self._closed = True
        import ray  # deferred: ray is the optional extra toolbench[ray]

        if ray.is_initialized():
            self._kill_created(ray)

    def _kill_created(self, ray: Any) -> None:
        for handle, mine in zip(self.handles, self.created, strict=True):
            if mine:
                try:
                    ray.kill(handle, no_restart=True)
                except Exception:  # already gone: nothing to stop
                    continue
