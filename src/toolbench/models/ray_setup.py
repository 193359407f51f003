"""Reaching Ray, for the parts of toolbench that use a cluster (``--executor ray``,
``--model-replicas``). Ray is an optional extra: nothing else imports it, and asking for it
where it is not installed is one line saying how to install it.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

from toolbench.errors import UserError

INSTALL_HINT = "pip install 'toolbench[ray]'"
#: The namespace toolbench's actors live in (named replicas are looked up there).
NAMESPACE = "toolbench"


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
    try:
        ray.init(address=target, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = target or "a local cluster"
        raise UserError(
            f"--ray-address {where}: cannot connect to Ray ({str(exc).splitlines()[0]}); "
            "start a cluster with 'ray start --head' or give its address"
        ) from None
    return ray
