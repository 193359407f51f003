"""A local model served as Ray replicas (``--model-replicas``): the pool answers as the one
in-process model does, finds the same replicas from every process of a run, survives a lost
replica, and stops the run (``ServiceDown``) when none is left.

The Ray tests start one small local Ray (2 CPUs, no dashboard, a temp dir of their own) in this
process for the module and shut it down at the end; each replica is an actor process that
imports torch, so the tests hold at most 2 at a time.
"""

from __future__ import annotations

import asyncio
import pickle
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tinylm import build_tiny_lm
from toolbench.errors import UserError
from toolbench.models.balance import Balancer
from toolbench.models.base import ModelOptions
from toolbench.models.ray_replicas import (
    ReplicaPool,
    ReplicaServer,
    _portable,
    _strip,
    placement,
    replica_names,
)
from toolbench.models.spec import make_model
from toolbench.types import (
    ContextOverflow,
    Generation,
    GenerationRequest,
    InfraError,
    Sample,
    ServiceDown,
    TaskContext,
)

# ---- without Ray ----


def test_a_replica_takes_a_gpu_when_the_cluster_has_them_else_a_cpu() -> None:
    assert placement({"CPU": 16.0, "GPU": 4.0}, 4) == {"num_gpus": 1}
    assert placement({"CPU": 2.0}, 2) == {"num_cpus": 1}
    assert placement({"CPU": 2.0, "GPU": 0.0}, 1) == {"num_cpus": 1}
    # --hf-device decides where the model runs, so what a replica takes.
    assert placement({"CPU": 16.0, "GPU": 4.0}, 2, "cpu") == {"num_cpus": 1}
    assert placement({"CPU": 16.0, "GPU": 4.0}, 2, "cuda:0") == {"num_gpus": 1}
    with pytest.raises(UserError, match="each replica needs one GPU and the Ray cluster has 0;"):
        placement({"CPU": 16.0}, 1, "cuda")


def test_more_replicas_than_the_cluster_can_place_is_refused() -> None:
    with pytest.raises(UserError, match=r"--model-replicas 3: each replica needs one GPU .* has 2"):
        placement({"CPU": 64.0, "GPU": 2.0}, 3)
    with pytest.raises(UserError, match=r"--model-replicas 5: .* one CPU .* at most 2 replicas"):
        placement({"CPU": 2.0}, 5)


@given(
    st.lists(st.text(min_size=1, max_size=20), min_size=2, max_size=4, unique=True),
    st.integers(min_value=1, max_value=6),
)
def test_replica_names_differ_per_model_and_copy_and_repeat_per_group(
    specs: list[str], count: int
) -> None:
    names = [name for spec in specs for name in replica_names("g1", spec, count)]
    assert len(set(names)) == len(names) == len(specs) * count
    assert replica_names("g1", specs[0], count) == replica_names("g1", specs[0], count)
    assert set(replica_names("g2", specs[0], count)).isdisjoint(names)
    assert all(name.startswith("toolbench-g1-") for name in names)


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("openai:gpt-4o-mini", "served by its endpoints; give each with --base-url"),
        ("oracle", "does not run a model in this process"),
        ("baseline", "replicas are for hf:, smollm2"),
    ],
)
def test_backends_that_do_not_run_a_model_here_refuse_replicas(spec: str, why: str) -> None:
    with pytest.raises(UserError) as caught:
        make_model(spec, ModelOptions(model_args={"replicas": 2}))
    message = str(caught.value)
    assert message.startswith(f"--model-replicas 2: cannot replicate {spec}: ")
    assert why in message and "\n" not in message
    one = ModelOptions(base_url="http://127.0.0.1:9/v1", model_args={"replicas": 1})
    assert make_model(spec, one).name  # one copy: as ever


def test_replicas_without_ray_installed_say_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # ``import ray`` raises ImportError
    with pytest.raises(UserError) as caught:
        make_model("hf:/models/any", ModelOptions(model_args={"replicas": 2}))
    assert str(caught.value) == (
        "--model-replicas: Ray is not installed; install it with pip install 'toolbench[ray]'"
    )


def test_a_wrong_spec_is_refused_before_replicas_are_considered() -> None:
    with pytest.raises(UserError, match="unknown model 'hff:x'"):
        make_model("hff:x", ModelOptions(model_args={"replicas": 2}))


def test_what_only_builtin_models_read_is_not_shipped_to_a_replica() -> None:
    sample = Sample(id="1", task="t", query="q", labels=("a",))
    context = TaskContext(functions=(), examples=())
    request = GenerationRequest(
        prompt="p", stop=("x",), sample=sample, context=context, ideal="gold", step="turn-2"
    )
    sent = _strip(request)
    assert sent.sample is None and sent.context is None and sent.ideal is None
    assert (sent.prompt, sent.stop, sent.step, sent.max_tokens) == ("p", ("x",), "turn-2", 256)


class _NeedsTwo(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(a)  # pickles as _NeedsTwo(a): unpickling fails
        self.b = b


def test_a_replicas_exception_crosses_as_itself_or_as_an_infra_error() -> None:
    overflow = ContextOverflow("too long", prompt_tokens=9, max_tokens=5, context_length=10)
    kept = _portable(overflow)
    assert kept is overflow
    back = pickle.loads(pickle.dumps(kept))
    assert isinstance(back, ContextOverflow)
    assert (back.prompt_tokens, back.max_tokens, back.context_length) == (9, 5, 10)
    lost = _portable(_NeedsTwo("first\nline", "second"))
    assert isinstance(lost, InfraError) and str(lost) == "_NeedsTwo: first line"


def test_a_replica_that_cannot_load_its_model_says_why_instead_of_dying(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import toolbench.models.ray_replicas as spec_module  # where the replica finds it

    def broken(spec: str, options: ModelOptions) -> Any:
        # (issue 38: replicas are the backend's option now, no longer ModelOptions.replicas)
        assert options.model_args["replicas"] == 1  # a replica holds one bare copy
        raise RuntimeError("CUDA out of\nmemory")

    monkeypatch.setattr(spec_module, "make_bare_model", broken)
    server = ReplicaServer("hf:/m", ModelOptions(model_args={"replicas": 2}), creator="me")
    assert server.model is None and server.creator == "me"
    assert server.error == (
        "--model-replicas 2: a replica could not load hf:/m (RuntimeError: CUDA out of memory)"
    )
    answer = asyncio.run(server.generate(GenerationRequest(prompt="p")))
    assert isinstance(answer, InfraError) and "could not load" in str(answer)


@dataclass
class _Raise:
    """In a script: what awaiting the call raises (Ray's errors), not what the replica
    returned."""

    error: BaseException


class _Calls:
    """A replica handle's ``generate`` as the pool calls it (``.remote(request)``, awaited):
    answers in turn from a script of returned values (a replica returns its model's
    exceptions as values) and ``_Raise``."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.sent: list[GenerationRequest] = []

    def remote(self, request: GenerationRequest) -> Any:
        self.sent.append(request)
        outcome = self.script.pop(0)

        async def answer() -> Any:
            if isinstance(outcome, _Raise):
                raise outcome.error
            return outcome

        return answer()


def _scripted_pool(*scripts: list[Any], clock: list[float]) -> ReplicaPool:
    """A pool over scripted handles (no Ray): what it does when a replica is lost, out of
    reach for a while, or answers with an exception."""
    pool = object.__new__(ReplicaPool)
    pool.name, pool.handles = "hf:m", [SimpleNamespace(generate=_Calls(s)) for s in scripts]
    names = [f"replica {i}" for i in range(len(scripts))]
    pool.balancer = Balancer(names, clock=lambda: clock[0])
    return pool


def test_lost_and_unreachable_replicas_are_taken_out_dead_for_good() -> None:
    ray = pytest.importorskip("ray")
    done = Generation(text="ok", completion_tokens=1)
    unreachable = _Raise(ray.exceptions.ActorUnavailableError("node busy", None))
    dead = _Raise(ray.exceptions.ActorDiedError())
    clock = [0.0]
    pool = _scripted_pool(
        [dead],  # replica 0: dead at its first call
        [unreachable, done],  # replica 1: out of reach once, then answers
        [done, done, done],
        clock=clock,
    )
    request = GenerationRequest(prompt="p", sample=Sample(id="1", task="t", query="q", labels=()))
    # Replica 0 (dead) then 1 (unreachable) fail; replica 2 answers the same request.
    assert asyncio.run(pool.generate(request)) is done
    assert pool.handles[2].generate.sent[0].sample is None  # shipped without the sample
    assert asyncio.run(pool.generate(request)) is done  # replica 2 again: 1 is out for now
    clock[0] = 11.0  # replica 1's time out is over: it is picked again, replica 0 never
    assert asyncio.run(pool.generate(request)) is done
    assert asyncio.run(pool.generate(request)) is done
    stats = pool.pool_stats()["endpoints"]
    assert [stats[f"replica {i}"]["calls"] for i in range(3)] == [1, 2, 3]
    assert [stats[f"replica {i}"]["errors"] for i in range(3)] == [1, 1, 0]
    assert [stats[f"replica {i}"]["taken_out"] for i in range(3)] == [1, 1, 0]
    pool.handles[1].generate.script[:] = [dead]
    pool.handles[2].generate.script[:] = [dead]
    with pytest.raises(ServiceDown, match="hf:m: all 3 Ray replicas of the model are lost"):
        asyncio.run(pool.generate(request))
    assert all(m.in_flight == 0 for m in pool.balancer.members)


def test_a_call_ray_cannot_carry_is_an_infra_error_and_leaves_nothing_in_flight() -> None:
    pytest.importorskip("ray")
    pool = _scripted_pool([_Raise(RuntimeError("object store\nfull"))], clock=[0.0])
    with pytest.raises(InfraError) as caught:
        asyncio.run(pool.generate(GenerationRequest(prompt="p")))
    assert str(caught.value) == ("hf:m: replica 0 did not answer (RuntimeError: object store full)")
    member = pool.balancer.members[0]
    assert (member.in_flight, member.calls, member.errors) == (0, 1, 1)


def test_a_replicas_answer_that_is_an_exception_is_raised_as_it() -> None:
    pytest.importorskip("ray")
    overflow = ContextOverflow("too long", prompt_tokens=9, max_tokens=5, context_length=10)
    failed = InfraError("hf:m: generation failed: boom")
    pool = _scripted_pool([overflow, failed], clock=[0.0])
    with pytest.raises(ContextOverflow):  # the model's failure: an answer, not an error
        asyncio.run(pool.generate(GenerationRequest(prompt="p")))
    with pytest.raises(InfraError, match="generation failed: boom"):
        asyncio.run(pool.generate(GenerationRequest(prompt="p")))
    stats = pool.pool_stats()["endpoints"]["replica 0"]
    assert (stats["calls"], stats["errors"], stats["taken_out"]) == (2, 1, 0)


# ---- with a local Ray and a tiny model ----


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    """Ray started in this process: 2 CPUs (room for 2 replicas), no dashboard, a temp dir of
    its own (short: Ray's socket paths must fit 107 bytes), shut down after the module."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("transformers")
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    temp = Path(f"/tmp/rt-{uuid.uuid4().hex[:6]}")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        namespace="toolbench",
        _temp_dir=str(temp),
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Scaled output weights: the best token wins by a margin no batching order rounds away.
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"), seed=0, lm_head_scale=10.0)


def _options(**more: Any) -> ModelOptions:
    return ModelOptions(replica_group=uuid.uuid4().hex[:8], **more, model_args={"replicas": 2})


def _requests() -> list[GenerationRequest]:
    words = ["homes in Austin", "a 3-bed house", "price under 500k", "near a park", "pool", "x"]
    return [
        GenerationRequest(prompt=f"Task: find {w}\nAction:", max_tokens=6 + i % 3, stop=("\n",))
        for i, w in enumerate(words)
    ]


def _answers(generations: list[Generation]) -> list[tuple[Any, ...]]:
    return [
        (g.text, g.prompt_tokens, g.completion_tokens, g.finish_reason, g.raw_text)
        for g in generations
    ]


async def _ask(model: Any, requests: list[GenerationRequest]) -> list[Generation]:
    return list(await asyncio.gather(*(model.generate(r) for r in requests)))


def test_replicas_answer_as_the_local_model_does(ray_local: Any, tiny: Path) -> None:
    spec = f"hf:{tiny}"
    local = make_model(spec, ModelOptions())
    pool = make_model(spec, _options())
    assert isinstance(pool, ReplicaPool)  # no cache path, no retries: the bare pool
    assert (pool.name, pool.cacheable) == (local.name, local.cacheable)
    assert pool.created == [True, True] and pool.nodes == 1
    requests = _requests()
    try:
        replicated = asyncio.run(_ask(pool, requests))
        assert _answers(replicated) == _answers(asyncio.run(_ask(local, requests)))
        # The model's own failure crosses as itself, numbers and all.
        with pytest.raises(ContextOverflow) as caught:
            asyncio.run(pool.generate(replace(requests[0], max_tokens=10_000)))
        assert caught.value.max_tokens == 10_000 and caught.value.context_length == 4096
        stats = pool.pool_stats()["endpoints"]
        assert set(stats) == {"replica 0", "replica 1"}
        assert sum(s["calls"] for s in stats.values()) == len(requests) + 1
        assert all(s["calls"] >= 1 and s["errors"] == 0 for s in stats.values())
    finally:
        asyncio.run(pool.aclose())


def test_every_process_of_a_run_finds_the_same_replicas_and_only_the_creator_kills_them(
    ray_local: Any, tiny: Path
) -> None:
    pool = ReplicaPool(f"hf:{tiny}", _options())
    try:
        # A copy sent elsewhere (a Ray sample actor) rebuilds itself from spec and options.
        copy = pickle.loads(pickle.dumps(pool))
        assert copy.names == pool.names and copy.created == [False, False]
        asyncio.run(copy.aclose())  # lets go, kills nothing
        answers = asyncio.run(_ask(pool, _requests()[:2]))
        assert len(answers) == 2
    finally:
        asyncio.run(pool.aclose())
    # The creator closed: the replicas are gone, and a process still holding them is told
    # the model's service is down (the run stops; a rerun starts new replicas).
    with pytest.raises(ServiceDown, match="all 2 Ray replicas of the model are lost"):
        asyncio.run(copy.generate(_requests()[0]))


def test_a_lost_replica_is_taken_out_and_the_other_answers(
    ray_local: Any, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative model path means to each replica what it means to the run (Ray started its
    # worker processes elsewhere).
    monkeypatch.chdir(tiny.parent)
    pool = ReplicaPool(f"hf:{tiny.name}", _options())
    assert pool.name == f"hf:{tiny.name}"
    try:
        ray_local.kill(pool.handles[0], no_restart=True)
        answers = asyncio.run(_ask(pool, _requests()))
        assert len(answers) == len(_requests()) and all(a.completion_tokens > 0 for a in answers)
        stats = pool.pool_stats()["endpoints"]
        # The requests sent to it before its loss was seen failed there, and went on.
        lost = stats["replica 0"]["calls"]
        assert 1 <= lost <= len(_requests()) and stats["replica 0"]["errors"] == lost
        assert stats["replica 1"]["calls"] == len(_requests())
        assert stats["replica 1"]["errors"] == 0
        asyncio.run(_ask(pool, _requests()))  # out for good: never tried again
        stats = pool.pool_stats()["endpoints"]
        assert stats["replica 0"]["calls"] == lost
        assert stats["replica 1"]["calls"] == 2 * len(_requests())
    finally:
        asyncio.run(pool.aclose())


def test_a_model_the_replicas_cannot_load_is_the_runs_user_error(
    ray_local: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(UserError) as caught:
        make_model(f"hf:{missing}", _options())
    assert str(caught.value).startswith(f"--model hf:{missing}: no model folder at {missing}")
