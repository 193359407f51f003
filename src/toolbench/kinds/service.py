"""The contract between curl tasks and their simulated HTTP services.

A curl task parses the model's curl line into an ``HttpRequest`` (``toolbench.sandbox.curl``)
and sends it, in-process through httpx's ASGI transport (no sockets), to the task's service.
Each execution gets a fresh *world* (``new_state``); the one ASGI app serves every world because
the task injects the world into the ASGI scope (``scope["state"]["world"]``), where handlers read
it as ``request.state.world``. So concurrent executions never share state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

# The key the simulators accept; ``{API_KEY}`` in a curl line is replaced by it offline.
SIMULATED_API_KEY = "toolbench-simulated-key"


class SimulatedService(Protocol):
    #: Task name, e.g. "open_weather".
    name: str
    #: Hosts this service answers for; a request to any other host is rejected before sending.
    hosts: frozenset[str]

    @property
    def app(self) -> Any:
        """The ASGI app (FastAPI/Starlette); reads its world from ``request.state.world``."""
        ...

    def new_state(self, fields: Mapping[str, Any]) -> Any:
        """A fresh world for one execution; ``fields`` are the sample's extra data-line fields
        (e.g. the Cat API's seeded user state). Deterministic."""
        ...

    def snapshot(self, state: Any) -> Any:
        """The world's mutable state as JSON data (None for a stateless service)."""
        ...

    #: Whether the simulator checks an API key (``toolbench serve --api-key`` needs one that does).
    checks_api_key: bool

    def world_accepting(self, key: str) -> Any:
        """One world that accepts ``key`` and no other, for ``toolbench serve --api-key``;
        only called when ``checks_api_key``."""
        ...
