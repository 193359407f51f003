"""``toolbench web_shop human``: a person shops the store in a browser; each episode becomes a
record of a run folder that ``toolbench report`` reads like a model's.

It is a run of the web_shop task like ``toolbench run web_shop --limit N``, whose model is the
person (``HumanModel``, ``tasks/web_shop/web/human.py``): the same runner chooses the folder
(the newest unfinished run of this person and version, else a new one), locks it, resumes it
and writes run.json. The run goes on in a thread of its own; this thread serves the shop, so
Ctrl-C stops the server, and an action the run still waits for then never comes: the run ends
as interrupted, and the same command continues it.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.cli import serve
from toolbench.cli.serve import bind
from toolbench.config import RunConfig
from toolbench.core.subject import ModelSubject
from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.runner.run import execute
from toolbench.runner.store import read_run_info
from toolbench.tasks.registry import get_task
from toolbench.tasks.web_shop.web.app import ShopConfig, create_app
from toolbench.tasks.web_shop.web.human import TITLE, HumanModel, ShopDesk

MAX_NAME_CHARS = 64


def person_name(raw: str | None) -> str:
    """The person's name as recorded (``human:<name>``): short, printable, no spaces."""
    if raw is None:
        try:
            raw = getpass.getuser()
        except (KeyError, OSError):
            raw = "person"
    name = raw.strip()
    if not name or len(name) > MAX_NAME_CHARS or not name.isprintable() or " " in name:
        raise UserError(
            f"--name: give 1 to {MAX_NAME_CHARS} printable characters without spaces, "
            "e.g. --name alice"
        )
    return name


def command_web_shop(args: argparse.Namespace, console: Console, cache_dir: Path) -> int:
    name = person_name(args.name)
    bind(args.host, args.port).close()  # a bad --host/--port is exit 2 before any folder
    config = RunConfig(tasks=["web_shop"], model=f"human:{name}", version=args.data_version,
                       limit=args.n, concurrency=1, use_cache=False)  # fmt: skip
    return record_human(config, args, console, cache_dir)


def record_human(
    config: RunConfig, args: argparse.Namespace, console: Console, cache_dir: Path
) -> int:
    """Serve until every goal is recorded (exit 0) or the server stops (130, resumable)."""
    wake = threading.Event()  # the run asks its first action, or has ended
    model = HumanModel(config.model.split(":", 1)[1], on_first_turn=wake.set)

    def run() -> Any:
        return execute(config, ModelOptions(), args.out, args.runs_dir, cache_dir, console,
                       tasks=[get_task("web_shop")], subject=ModelSubject(model))  # fmt: skip

    thread = _RunThread(run, wake.set)
    thread.start()
    try:
        wake.wait()
        if model.first_goal is not None:
            _serve(model, args, console)
    finally:
        model.stop()  # an action still awaited will not come: the run ends as interrupted
        thread.join()
        _say_where(console, model, thread)
    return 0 if thread.status() == "complete" else 130


class _RunThread(threading.Thread):
    """The run, in a thread of its own: its result, or what it raised."""

    def __init__(self, target: Callable[[], Any], done: Callable[[], None]) -> None:
        super().__init__(name="toolbench-web_shop-human-run", daemon=True)
        self._run, self._done = target, done
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._run()
        except BaseException as exc:  # handed to the main thread by status()
            self.error = exc
        finally:
            self._done()

    def status(self) -> str:
        """run.json's status, "interrupted" when the run was stopped; what the run raised
        otherwise (e.g. the folder is in use: exit 2) is raised here."""
        if isinstance(self.error, (asyncio.CancelledError, KeyboardInterrupt)):
            return "interrupted"
        if self.error is not None:
            raise self.error
        return str(self.result.info["status"])


def _serve(model: Any, args: argparse.Namespace, console: Console) -> None:
    """The shop for the person, until the last goal's end has been shown or Ctrl-C."""
    desk = ShopDesk(model)
    servers: list[Any] = []

    def stop_when_complete() -> None:
        if not desk.has_next() and servers:
            servers[0].should_exit = True

    shop = ShopConfig(model.store, model.layout, picker=desk, step=desk.step,
                      after_over=stop_when_complete, note=desk.note, title=TITLE)  # fmt: skip

    def announce(url: str) -> None:
        console.print(
            f"{desk.note()}. Shop at {url} in a browser; each finished episode is saved to "
            f"{model.folder} (Ctrl-C stops; run the same command again to continue)",
            markup=False,
            highlight=False,
        )

    serve.run_server(create_app(shop), args.host, args.port, announce, servers.append)


def _say_where(console: Console, model: Any, thread: _RunThread) -> None:
    """The last line: how many episodes the run folder holds, and where it is (nothing when
    the run stopped before it had a folder)."""
    folder = thread.result.folder if thread.result is not None else model.folder
    if folder is None:
        return
    try:
        progress = read_run_info(folder).get("progress") or {}
    except Exception:  # the line is a courtesy: what went wrong is said elsewhere
        return
    note = f"{model.person}: {progress.get('done')} of {progress.get('planned')} episodes recorded"
    console.print(f"{note}; run folder {folder} (toolbench report {folder})",
                  markup=False, highlight=False)  # fmt: skip
