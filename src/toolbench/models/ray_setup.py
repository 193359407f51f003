"""Reaching Ray, for the parts of toolbench that use a cluster (``--executor ray``,
``--model-replicas``). Ray is an optional extra: nothing else imports it, and asking for it
where it is not installed is one line saying how to install it.

Without an address (no ``--ray-address``, no ``$RAY_ADDRESS``) the run joins the cluster this
machine runs (the one ``ray start --head`` wrote into Ray's current-cluster file) when it is
up, and otherwise starts a private one for itself, and says which in one line. Ray's own
``ray.init()`` would read that file too, but then refuse the CPU count a private cluster is
started with ("num_cpus ... must not be provided"), or wait on the address of a cluster that
has died since, so the choice is made here (``choose_local``).
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toolbench.errors import UserError

INSTALL_HINT = "pip install 'toolbench[ray]'"
#: The namespace toolbench's actors live in (named replicas are looked up there).
NAMESPACE = "toolbench"
#: How long a cluster's address may take to answer a TCP connect before it counts as down:
#: ``ray.init`` itself waits minutes on an address nobody listens on.
REACH_TIMEOUT_S = 5.0
#: How long the cluster named by the current-cluster file may take to answer before it counts
#: as gone (it is on this machine: it answers at once or not at all).
LOCAL_REACH_TIMEOUT_S = 2.0
#: What ``ray.init`` is given to start a new cluster even where a current-cluster file exists.
PRIVATE = "local"


def require_ray(flag: str) -> ModuleType:
    """The ``ray`` module, or a ``UserError`` (exit 2) naming the flag and the install."""
    try:
        import ray  # deferred: ray is the optional extra toolbench[ray]
    except ImportError:
        raise UserError(f"{flag}: Ray is not installed; install it with {INSTALL_HINT}") from None
    return ray


def connect(address: str | None, flag: str = "--executor ray") -> ModuleType:
    """Ray, connected to the cluster at ``address`` (``auto``, ``HOST:PORT``,
    ``ray://HOST:PORT``; None: ``$RAY_ADDRESS``, else this machine's running cluster or a
    private one: ``choose_local``). Connecting twice is a no-op. A cluster that cannot be
    reached is a ``UserError`` naming the address."""
    ray = require_ray(flag)
    if ray.is_initialized():
        return ray
    target = address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {
        "namespace": NAMESPACE,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if target is None:
        choice = choose_local(current_cluster_file(os.environ), reachable)
        target = choice.address
        if target == PRIVATE:  # started (and stopped) with us: the CPUs of this machine
            kwargs.update(num_cpus=os.cpu_count() or 1, include_dashboard=False)
        print(f"toolbench: Ray: {choice.line}", file=sys.stderr)
    else:
        check_reachable(target)
    try:
        ray.init(address=target, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "a private local cluster" if target == PRIVATE else target
        raise UserError(
            f"--ray-address {where}: cannot connect to Ray ({str(exc).splitlines()[0]}); "
            "start a cluster with 'ray start --head' or give its address"
        ) from None
    return ray


@dataclass(frozen=True)
class LocalChoice:
    """Where a run without an address goes: ``address`` is the running cluster's, or
    ``PRIVATE``; ``line`` says which, for the console."""

    address: str
    line: str


def current_cluster_file(env: Mapping[str, str]) -> Path:
    """The file ``ray start`` writes its cluster's address into, found as Ray finds it
    (``$RAY_TMPDIR``, else ``$TMPDIR`` on Linux, else /tmp; then ``ray/ray_current_cluster``)."""
    if "RAY_TMPDIR" in env:
        root = env["RAY_TMPDIR"]
    elif sys.platform.startswith("linux") and "TMPDIR" in env:
        root = env["TMPDIR"]
    elif sys.platform.startswith(("linux", "darwin")):
        root = "/tmp"
    else:
        root = tempfile.gettempdir()
    return Path(root) / "ray" / "ray_current_cluster"


def choose_local(cluster_file: Path, is_up: Callable[[str], bool]) -> LocalChoice:
    """Join the cluster ``cluster_file`` names when ``is_up`` (a cluster someone started on
    purpose, with the resources they gave it); else a private one for this run: no file, or
    one left by a cluster that died (its address answers no more)."""
    private = "started a private local cluster for this run (it stops when the run ends)"
    try:
        named = cluster_file.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return LocalChoice(PRIVATE, private)
    if not named:
        return LocalChoice(PRIVATE, private)
    if is_up(named):
        return LocalChoice(
            named,
            f"joined the running local cluster at {named} (named in {cluster_file}); "
            "--ray-address picks another",
        )
    return LocalChoice(
        PRIVATE, f"{private}; the cluster {cluster_file} names ({named[:100]}) is not running"
    )


def reachable(address: str, timeout_s: float = LOCAL_REACH_TIMEOUT_S) -> bool:
    """Whether something listens at a ``HOST:PORT`` address (False for any other form)."""
    parsed = host_port(address)
    if parsed is None:
        return False
    try:
        with socket.create_connection(parsed, timeout=timeout_s):
            return True
    except OSError:
        return False


def host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address; None for ``auto``
    (Ray finds the cluster this machine runs) and anything else Ray resolves itself."""
    text = address.removeprefix("ray://")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Refuse, in ``timeout_s`` at most, a ``HOST:PORT`` address nothing listens on (a
    ``UserError`` naming it), before ``ray.init`` would wait on it for minutes."""
    parsed = host_port(address)
    if parsed is None:
        return
    try:
        with socket.create_connection(parsed, timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(
            f"--ray-address {address}: cannot reach a Ray cluster there ({reason}); start one "
            "with 'ray start --head --port PORT' or give the address 'ray start' printed"
        ) from None
