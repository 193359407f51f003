"""A real Ray cluster on this machine, for tests and benchmarks: a head node and N worker
nodes, each a ``ray start --block`` process in its own process group, on ports of its own and
a temp dir of its own, so several clusters (other tests, other people's) share the machine.

Nothing here runs ``ray stop``: that stops every Ray process of the machine, not just ours.
A node is stopped by killing its process tree (the ``ray start`` process, the raylet, the
actors' worker processes it started). ``with LocalCluster(workers=1) as cluster:`` stops
everything it started when the block ends, whatever happened in it.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

RAY = Path(sys.executable).with_name("ray")
#: The environment of every process of a test cluster, and of the drivers that connect to it:
#: Ray >= 2.5x turns token authentication on when a token file exists (~/.ray/auth_token,
#: made by any earlier ``ray start``), and a driver that does not send the token is refused.
#: A loopback test cluster runs without it, the same way in every process.
CLUSTER_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(host: str, port: int, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


@dataclass
class Node:
    """One ``ray start --block`` process and what it was started with."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None


def _ephemeral_low() -> int:
    """The first port the kernel hands out for a bind to port 0 (Linux: 32768 by default)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768
    return max(low, 12_000)


def _ports() -> list[str]:
    """Every port a node would otherwise take from Ray's fixed defaults, picked free."""
    # The node's worker processes' range, below the kernel's ephemeral range: the other
    # ports are picked free (bound to port 0), so they come from that range and can never
    # fall among the workers' (a collision made `ray start` refuse to start).
    base = random.randrange(10_000, _ephemeral_low() - 200, 200)
    ports = [
        "--node-manager-port", str(free_port()),
        "--object-manager-port", str(free_port()),
        "--dashboard-agent-listen-port", str(free_port()),
        "--dashboard-agent-grpc-port", str(free_port()),
        "--runtime-env-agent-port", str(free_port()),
        "--metrics-export-port", str(free_port()),
        "--min-worker-port", str(base), "--max-worker-port", str(base + 199),
    ]  # fmt: skip
    return ports


@dataclass
class LocalCluster:
    """A head and ``workers`` worker nodes of ``cpus`` CPUs each, started on entering."""

    workers: int = 1
    cpus: int = 1
    nodes: list[Node] = field(default_factory=list)
    port: int = 0
    temp_dir: Path = Path()
    _logs: Path = Path()
    last_error: str = ""

    @property
    def env(self) -> dict[str, str]:
        """This process's environment plus ``CLUSTER_ENV``: give it to drivers of the cluster."""
        return {**os.environ, **CLUSTER_ENV}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> LocalCluster:
        # Ray's socket paths must stay short: /tmp/rt-XXXXXX, not pytest's long tmp paths.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
        self._logs = self.temp_dir / "nodes"
        self._logs.mkdir()
        self.port = free_port()
        try:
            self._start("head", ["--head", "--port", str(self.port), "--include-dashboard=false"])
            self._wait_for_nodes(1)
            for _ in range(self.workers):
                self.add_worker()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def add_worker(self) -> Node:
        """One more worker node, joined (alive in the cluster's node table) on return."""
        before = self.alive_nodes()
        node = self._start(f"worker{len(self.nodes)}", ["--address", self.address])
        self._wait_for_nodes(before + 1)
        return node

    def _start(self, name: str, role: list[str]) -> Node:
        log = self._logs / f"{name}.log"
        command = [
            str(RAY), "start", "--block", *role, "--num-cpus", str(self.cpus),
            "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
            "--temp-dir", str(self.temp_dir),
            *_ports(),
        ]  # fmt: skip
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        node = Node(name, process, log)
        self.nodes.append(node)
        return node

    def alive_nodes(self) -> int:
        """How many nodes the cluster's GCS reports alive (asked in a child process, so this
        process never connects to Ray itself)."""
        code = (
            "import ray,sys;"
            f"ray.init(address={self.address!r},log_to_driver=False,configure_logging=False);"
            "print(sum(1 for n in ray.nodes() if n['Alive']))"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=self.env
        )
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            self.last_error = result.stderr[-2000:]
            return -1
        return int(lines[-1])

    def _wait_for_nodes(self, count: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for node in self.nodes:
                if not node.alive():
                    raise RuntimeError(f"ray node {node.name} exited: {self.tail(node)}")
            if port_open("127.0.0.1", self.port) and self.alive_nodes() >= count:
                return
            time.sleep(0.5)
        raise RuntimeError(
            f"the cluster did not reach {count} nodes in {START_TIMEOUT_S} s: "
            f"{self.last_error}; head: {self.tail(self.nodes[0])}"
        )

    def tail(self, node: Node, chars: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return node.log.read_text(errors="replace")[-chars:]
        return ""

    def kill(self, node: Node) -> None:
        """Kill the node at once (SIGKILL to its whole process tree), as a machine that
        vanishes: its raylet, its actors and the ``ray start`` process."""
        _kill_tree(node.process, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.process.wait(10)

    def stop(self) -> None:
        """Every node this cluster started, workers first; then its temp dir."""
        for node in reversed(self.nodes):
            if node.alive():
                _kill_tree(node.process, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for node in reversed(self.nodes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(max(0.1, deadline - time.monotonic()))
            _kill_tree(node.process, signal.SIGKILL)  # whatever is left of it
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _kill_tree(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """``sig`` to the process, every descendant of it, and its process group (Ray starts
    its raylet and workers as children; some may leave the group, none leave the tree)."""
    try:
        import psutil

        try:
            tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(True)]
        except psutil.NoSuchProcess:
            tree = []
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)
    except ImportError:  # pragma: no cover - psutil comes with ray
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


@contextlib.contextmanager
def local_cluster(workers: int = 1, cpus: int = 1) -> Iterator[LocalCluster]:
    """``pytest.skip`` where Ray is not installed; else a started cluster, stopped after."""
    import pytest

    pytest.importorskip("ray")
    with LocalCluster(workers=workers, cpus=cpus) as cluster:
        yield cluster
