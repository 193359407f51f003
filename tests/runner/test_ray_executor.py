"""The Ray executor on a real one-node Ray cluster (``tests/raycluster.py``): a sample that
kills the process solving it, every time, ends as its own infra error after ``MAX_LOSSES``
lost actors, and takes no other sample with it; a model service that is gone stops the run as
locally. And the merge of the actors' model pool stats (hypothesis).

The models here are objects given to ``toolbench.run``: they travel to the node's actor inside
the run's recipe (pickled; the actor imports this module from the driver's working dir). The
driver of each run is a fresh interpreter (``drive``): Ray connects once per process, and a
process that connected to another Ray before (an earlier test module's) loses its actors to
that session's leftovers, which is not what these tests are about."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.raycluster import LocalCluster
from toolbench.errors import UserError
from toolbench.models.base import Generation, GenerationRequest
from toolbench.models.ray_setup import check_reachable, host_port
from toolbench.models.reference.oracle import OracleModel
from toolbench.runner.ray_executor import MAX_LOSSES, merge_pool_stats
from toolbench.types import ServiceDown

POISON = "2"  # the home_search sample whose solving kills its process


class PoisonModel(OracleModel):
    """The oracle, except that the process (never the driver: the one that made this object)
    solving sample ``POISON`` dies on the spot, as a segfault or the OOM killer would."""

    name = "poison"

    def __init__(self) -> None:
        self.driver_pid = os.getpid()

    async def generate(self, request: GenerationRequest) -> Generation:
        sample = request.sample
        if sample is not None and sample.id == POISON and os.getpid() != self.driver_pid:
            os._exit(1)
        return await super().generate(request)


class GoneModel(OracleModel):
    """A model whose service is gone (the retry layer's breaker tripped) for every sample."""

    name = "gone"

    async def generate(self, request: GenerationRequest) -> Generation:
        raise ServiceDown("model service gone: connection refused (test)")


class SlowOracle(OracleModel):
    """The oracle, answering after 0.1 s (a run that lasts long enough for a node to join)."""

    name = "slow-oracle"

    async def generate(self, request: GenerationRequest) -> Generation:
        await asyncio.sleep(0.1)
        return await super().generate(request)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A head node only; each test's run connects to it from a process of its own."""
    pytest.importorskip("ray")
    with LocalCluster(workers=0) as started:
        yield started


def drive(model: str, cluster: LocalCluster, out: Path, **options: Any) -> subprocess.Popen[str]:
    """``toolbench.run("home_search", <model>(), ...)`` on the cluster, in a fresh interpreter
    (``model`` names a class of this module); the caller waits for it."""
    kwargs = {"out": str(out), "runs_dir": str(out.parent), "use_cache": False,
              "executor": "ray", "ray_address": cluster.address, **options}  # fmt: skip
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from toolbench.api import run\n"
        f"from tests.runner.test_ray_executor import {model}\n"
        "kwargs = json.loads(sys.argv[1])\n"
        "kwargs['out'], kwargs['runs_dir'] = Path(kwargs['out']), Path(kwargs['runs_dir'])\n"
        f"run('home_search', {model}(), **kwargs)\n"
    )
    command = [sys.executable, "-c", script, json.dumps(kwargs)]
    return subprocess.Popen(command, env=cluster.env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip


def finish(process: subprocess.Popen[str], timeout_s: float = 600) -> None:
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"the run did not end: {output[-3000:]}") from None
    assert process.returncode == 0, output[-3000:]


def read(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    info = json.loads((folder / "run.json").read_text())
    log = folder / "samples.jsonl"  # made with the first record
    lines = log.read_text().splitlines() if log.exists() else []
    records = [json.loads(line) for line in lines]
    return info, records


@pytest.mark.slow
def test_a_sample_that_kills_its_worker_ends_as_its_infra_error_and_alone(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    finish(drive("PoisonModel", cluster, out, limit=12, concurrency=4))
    info, records = read(out)
    keys = [(r["task"], r["id"], r["epoch"]) for r in records]
    assert len(keys) == len(set(keys)) == 12  # one record per sample, none twice
    poisoned = [r for r in records if r["id"] == POISON]
    assert len(poisoned) == 1 and poisoned[0]["status"] == "infra_error"
    assert f"lost {MAX_LOSSES} times" in poisoned[0]["message"]
    others = [r for r in records if r["id"] != POISON]
    assert all(r["status"] == "scored" and r["success"] for r in others)  # no bystander lost
    executor = info["executor"]
    assert executor["actors_lost"] == MAX_LOSSES and executor["lost_as_infra_error"] == 1
    assert info["status"] == "incomplete"  # the infra error is retried by a rerun


@pytest.mark.slow
def test_a_model_service_gone_stops_the_run_and_writes_nothing_for_it(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    finish(drive("GoneModel", cluster, out, limit=20, concurrency=4))
    info, records = read(out)
    assert records == []  # undone, left for a rerun, not a pile of infra errors
    assert "model service gone" in info["stopped"]
    assert info["status"] == "incomplete"


@pytest.mark.slow
def test_a_node_that_joins_mid_run_gets_an_actor_and_keys(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """Last of the cluster tests: it leaves the module's cluster with two nodes."""
    out = tmp_path / "run"
    process = drive("SlowOracle", cluster, out, limit=100, epochs=10, concurrency=2)
    deadline = time.monotonic() + 120
    while not (out / "samples.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    cluster.add_worker()  # ~15 s to join; the run has ~50 s of work, 2 at a time
    finish(process)
    info, records = read(out)
    keys = {(r["task"], r["id"], r["epoch"]) for r in records}
    assert len(keys) == len(records) == 1000
    assert all(r["status"] == "scored" for r in records)
    assert info["executor"]["nodes"] == 2 and info["executor"]["actors"] == 2


NUMBERS = st.integers(min_value=0, max_value=10**6)
MEMBER = st.fixed_dictionaries(
    {"calls": NUMBERS, "errors": NUMBERS, "latency_s": st.floats(0, 1e4), "taken_out": NUMBERS}
)
POOL = st.dictionaries(st.sampled_from(["http://a/v1", "http://b/v1", "http://c/v1"]), MEMBER)


@given(st.lists(st.fixed_dictionaries({"endpoints": POOL}), max_size=5))
def test_merged_pool_stats_sum_every_process_and_recompute_the_mean(
    parts: list[dict[str, Any]],
) -> None:
    merged = merge_pool_stats(parts).get("endpoints", {})
    names = {name for part in parts for name in part["endpoints"]}
    assert set(merged) == names
    for name, sums in merged.items():
        members = [part["endpoints"][name] for part in parts if name in part["endpoints"]]
        for field in ("calls", "errors", "taken_out"):
            assert sums[field] == sum(m[field] for m in members)
        latency = sum(m["latency_s"] for m in members)
        assert sums["latency_s"] == pytest.approx(latency, abs=1e-3)
        answered = sums["calls"] - sums["errors"]
        if answered > 0:  # the mean is over answered calls (latency counts only those)
            assert sums["mean_latency_s"] == pytest.approx(sums["latency_s"] / answered, abs=1e-4)
        else:
            assert sums["mean_latency_s"] is None


def test_pool_stats_that_are_not_member_tables_are_left_out() -> None:
    assert merge_pool_stats([{"endpoints": "n/a"}, {"endpoints": {"u": 3}}]) == {"endpoints": {}}


@given(st.text(max_size=200))
def test_any_address_text_parses_without_raising(text: str) -> None:
    parsed = host_port(text)
    if parsed is not None:
        host, port = parsed
        assert host and port >= 0


@given(
    st.sampled_from(["ray://", ""]),
    st.from_regex(r"[a-z0-9.-]{1,30}", fullmatch=True),
    st.integers(0, 65535),
)
def test_host_port_addresses_parse_back(prefix: str, host: str, port: int) -> None:
    assert host_port(f"{prefix}{host}:{port}") == (host, port)
    assert host_port("auto") is None


def test_an_address_nobody_listens_on_is_refused_naming_it() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(UserError, match=f"--ray-address 127.0.0.1:{port}: cannot reach"):
        check_reachable(f"127.0.0.1:{port}", timeout_s=2)
