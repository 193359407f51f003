"""``toolbench serve``: a simulated API over real HTTP on localhost, for other frameworks; for
web_shop, the store as pages a person can shop in and as a JSON API; with ``--mcp``, one
sample's world as MCP tools (``serve_mcp``), for any agent."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import uvicorn
from rich.console import Console

from toolbench.agents.listen import listening_socket
from toolbench.errors import UserError
from toolbench.kinds.http_exec import bind_world, serving_app
from toolbench.kinds.service import SIMULATED_API_KEY, SimulatedService
from toolbench.tasks.registry import get_task
from toolbench.tasks.web_shop.web.app import CyclePicker, ShopConfig, create_app


@runtime_checkable
class Servable(Protocol):
    """A task whose tool is a simulated HTTP service (the curl tasks): ``toolbench serve TASK``
    (owned by this module) exposes it on localhost for other frameworks, as the real API."""

    @property
    def service(self) -> SimulatedService: ...


def command_serve(args: argparse.Namespace, console: Console) -> int:
    """Serve a simulator so other agent frameworks can call it like the real API."""
    if getattr(args, "mcp", False):
        # deferred: --mcp only; serve_mcp loads the MCP SDK (the optional extra toolbench[mcp])
        from toolbench.cli.serve_mcp import command_serve_mcp

        return command_serve_mcp(args)
    _refuse_mcp_flags(args)
    task = get_task(args.task)
    if task.name == "web_shop":
        return _serve_shop(args, console)
    if getattr(args, "data_version", None) is not None:
        raise UserError(
            f"--version: only web_shop has page layouts to choose; drop it for {task.name}"
        )
    if not isinstance(task, Servable):
        raise UserError(f"task {task.name} has no HTTP service to serve (try open_weather)")
    service = task.service
    app, key = serving_app(service), SIMULATED_API_KEY
    if args.api_key is not None:
        app, key = _app_accepting(service, task.name, args.api_key), args.api_key
    hosts = ", ".join(sorted(service.hosts))

    def announce(url: str) -> None:
        console.print(
            f"serving the simulated {task.name} API for host(s) {hosts} on {url}  "
            f"({_key_note(service, key)}; Ctrl-C stops)",
            markup=False,
            highlight=False,
        )

    # Bound here first, so a bad --host or a taken --port is one line, not uvicorn's exit.
    run_server(app, args.host, args.port, announce)
    return 0


def _refuse_mcp_flags(args: argparse.Namespace) -> None:
    """Flags that only mean something with --mcp are refused without it (not ignored)."""
    for flag, value in (
        ("--sample", getattr(args, "sample", None)),
        ("--transport", getattr(args, "transport", None)),
        ("--verdict", getattr(args, "verdict", None)),
        ("--data-dir", getattr(args, "data_dir", None)),
        ("--log", getattr(args, "log", None)),
    ):
        if value is not None:
            raise UserError(f"{flag}: only with --mcp (serving a sample's world); add --mcp")


def _app_accepting(service: Any, task: str, key: str) -> Any:
    """The service bound to one world that accepts ``key`` (and no other key)."""
    if not service.checks_api_key:
        raise UserError(f"--api-key: the {task} simulator checks no API key; drop the flag")
    if not key or not key.isprintable() or any(ch.isspace() for ch in key) or len(key) > 256:
        raise UserError(
            "--api-key: give 1 to 256 printable characters without spaces, e.g. --api-key abc123"
        )
    world = service.world_accepting(key)
    return bind_world(service.app, lambda: world)


def _key_note(service: Any, key: str) -> str:
    """What the start line says about keys: the one accepted, or that none is checked."""
    if not service.checks_api_key:
        return "no API key is checked"
    return f"API key: {key}"


def _serve_shop(args: argparse.Namespace, console: Console) -> int:
    """The web_shop store for people (HTML) and agent frameworks (JSON), one process, goals
    from ``?goal=N`` or the version's test ids in turn."""
    if args.api_key is not None:
        raise UserError("--api-key: the web_shop store checks no key; drop the flag")
    version = args.data_version or "v0"
    if version not in ("v0", "v1"):
        raise UserError(f"--version {version}: web_shop pages come as v0 or v1")
    data = get_task("web_shop").load(version, None)
    store = data.runtime.store
    ids = [int(sample.id) for sample in data.samples]
    app = create_app(
        ShopConfig(store, version, CyclePicker(ids, len(store.goals)), title="toolbench web shop")
    )

    def announce(url: str) -> None:
        console.print(
            f"web_shop store ({version} pages) on {url}  (shop: open it in a browser; agents: "
            f"POST {url}api/sessions; Ctrl-C stops)",
            markup=False,
            highlight=False,
        )

    run_server(app, args.host, args.port, announce)
    return 0


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line ``UserError`` naming --host/--port and the fix."""
    return listening_socket(host, port)


def run_server(
    app: Any,
    host: str,
    port: int,
    announce: Callable[[str], None],
    started: Callable[[Any], None] | None = None,
) -> None:
    """Serve ``app`` with uvicorn on a socket bound here (so ``--port 0`` can say which port
    it got); ``started`` receives the server (to stop it: ``server.should_exit = True``).
    Ctrl-C stops the server and then raises KeyboardInterrupt, as uvicorn re-raises it."""
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    if started is not None:
        started(server)
    announce(f"http://{shown}:{actual}/")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
