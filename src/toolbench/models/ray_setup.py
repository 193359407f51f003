"""Reaching Ray, for the parts of toolbench that use a cluster (``--executor ray``,
``--model-replicas``). Ray is an optional extra: nothing else imports it, and asking for it
where it is not installed is one line saying how to install it.
"""

from __future__ import annotations

import os
import socket
from types import ModuleType
from typing import Any

from toolbench.errors import UserError

INSTALL_HINT = "pip install 'toolbench[ray]'"
#: The namespace toolbench's actors live in (named replicas are looked up there).
NAMESPACE = "toolbench"
#: How long a cluster's address may take to answer a TCP connect before it counts as down:
#: ``ray.init`` itself waits minutes on an address nobody listens on.
REACH_TIMEOUT_S = 5.0


def require_ray(flag: str) -> ModuleType:
    """The ``ray`` module, or a ``UserError`` (exit 2) naming the flag and the install."""
    try:
        import ray
    except ImportError:
        raise UserError(f"{flag}: Ray is not installed; install it with {INSTALL_HINT}") from None
    return ray


def connect(address: str | None, flag: str = "--executor ray") -> ModuleType:
    """Ray, connected to the cluster at ``address`` (``auto``, ``HOST:PORT``,
    ``ray://HOST:PORT``; None: ``$RAY_ADDRESS``, else a local cluster Ray starts for this
    process). Connecting twice is a no-op. A cluster that cannot be reached is a
    ``UserError`` naming the address."""
    ray = require_ray(flag)
    if ray.is_initialized():
        return ray
    target = address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {
        "namespace": NAMESPACE,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if target is None:  # a local cluster of this machine, started (and stopped) with us
        kwargs.update(num_cpus=os.cpu_count() or 1, include_dashboard=False)
    else:
        check_reachable(target)
    try:
        ray.init(address=target, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = target or "a local cluster"
        raise UserError(
            f"--ray-address {where}: cannot connect to Ray ({str(exc).splitlines()[0]}); "
            "start a cluster with 'ray start --head' or give its address"
        ) from None
    return ray


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
