"""``toolbench serve``: a simulated API over real HTTP on localhost, for other frameworks."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from toolbench.errors import UserError
from toolbench.tasks.service import SIMULATED_API_KEY


def command_serve(args: argparse.Namespace, console: Console) -> int:
    """Serve a simulator so other agent frameworks can call it like the real API."""
    import uvicorn

    from toolbench.tasks.http_exec import serving_app
    from toolbench.tasks.registry import get_task

    task = get_task(args.task)
    service = getattr(task, "service", None)
    if service is None:
        raise UserError(f"task {task.name} has no HTTP service to serve (try open_weather)")
    app, key = serving_app(service), SIMULATED_API_KEY
    if args.api_key is not None:
        app, key = _app_accepting(service, task.name, args.api_key), args.api_key
    console.print(
        f"serving the simulated {task.name} API for host(s) {', '.join(sorted(service.hosts))} "
        f"on http://{args.host}:{args.port}  ({_key_note(service, key)}; Ctrl-C stops)",
        markup=False,
        highlight=False,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _app_accepting(service: Any, task: str, key: str) -> Any:
    """The service bound to one world that accepts ``key`` (and no other key)."""
    from toolbench.tasks.http_exec import bind_world

    world_accepting = getattr(service, "world_accepting", None)
    if world_accepting is None:
        raise UserError(f"--api-key: the {task} simulator checks no API key; drop the flag")
    if not key or not key.isprintable() or any(ch.isspace() for ch in key) or len(key) > 256:
        raise UserError(
            "--api-key: give 1 to 256 printable characters without spaces, e.g. --api-key abc123"
        )
    world = world_accepting(key)
    return bind_world(service.app, lambda: world)


def _key_note(service: Any, key: str) -> str:
    """What the start line says about keys: the one accepted, or that none is checked."""
    if getattr(service, "world_accepting", None) is None:
        return "no API key is checked"
    return f"API key: {key}"
