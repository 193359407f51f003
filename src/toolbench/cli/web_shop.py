"""``toolbench web_shop human``: a person shops the store in a browser; each episode becomes a
record of a run folder that ``toolbench report`` reads like a model's (see
``tasks/web_shop/web/human.py``).

The run folder follows the runner's lifecycle: folder chosen as for ``toolbench run`` (the
newest unfinished run of this person and version, else a new one), run.json written as running
first and finalised on any ending with the metrics of the whole log, the log's chain checked.
"""

from __future__ import annotations

import argparse
import getpass
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench import __version__
from toolbench.config import RunConfig
from toolbench.errors import UserError

MAX_NAME_CHARS = 64


def add_web_shop_parser(sub: argparse._SubParsersAction[Any], parser_class: type) -> None:
    from toolbench.cli import argtypes

    shop = sub.add_parser("web_shop", help="web_shop for people: record a person's episodes")
    shop_sub = shop.add_subparsers(
        dest="web_shop_command", required=True, parser_class=parser_class
    )
    human = shop_sub.add_parser(
        "human", help="serve the store to a person and record their episodes as a run"
    )
    human.add_argument(
        "--n", type=argtypes.positive_int, default=50, help="goals to shop (the first N test ids)"
    )
    human.add_argument("--port", type=argtypes.port, default=8000, help="TCP port (0: any free)")
    human.add_argument("--host", default="127.0.0.1", help="address to listen on")
    human.add_argument("--version", dest="data_version", choices=["v0", "v1"], default="v0",
                       help="data version: its test ids and the page layout recorded")  # fmt: skip
    human.add_argument(
        "--name",
        help="who is shopping; the run's model is human:<name> (default: your user name)",
    )
    human.add_argument(
        "--out",
        type=argtypes.PathArg("new_folder"),
        help="run folder (default: runs/web_shop-human-<name>-<time>)",
    )
    human.add_argument(
        "--runs-dir", type=argtypes.PathArg("new_folder"), default=Path("runs"),
        help=argparse.SUPPRESS,
    )  # fmt: skip


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
    config = RunConfig(tasks=["web_shop"], model=f"human:{name}", version=args.data_version,
                       limit=args.n, concurrency=1, use_cache=False)  # fmt: skip
    return record_human(config, args, console, cache_dir)


def record_human(
    config: RunConfig, args: argparse.Namespace, console: Console, cache_dir: Path
) -> int:
    """Serve until every goal is recorded (exit 0) or Ctrl-C (130, resumable)."""
    from toolbench.cli.serve import bind, run_server
    from toolbench.runner.lifecycle import folder_for, open_run, slug
    from toolbench.runner.run import prepare_tasks
    from toolbench.tasks.web_shop.web.app import ShopConfig, create_app
    from toolbench.tasks.web_shop.web.human import HumanRecording

    bind(args.host, args.port).close()  # a bad --host/--port is exit 2 before any folder
    prepared = prepare_tasks(config, _NoPrograms(), cache_dir)[0]
    fingerprint = config.fingerprint({"web_shop": prepared.data.digest})
    selection = {"limit": config.limit, "epochs": 1}
    person = config.model.split(":", 1)[1]
    prefix = f"web_shop-human-{slug(person)}-"
    folder = folder_for(prefix, fingerprint, selection, args.out, args.runs_dir)
    store, previous, done = open_run(folder, fingerprint, console)
    info = _run_info(config, prepared, previous, fingerprint, selection)
    store.write_info(info)
    recording = HumanRecording(prepared, store, {key[1] for key in done}, person)
    servers: list[Any] = []

    def stop_when_complete() -> None:
        if recording.complete and servers:
            servers[0].should_exit = True

    shop = ShopConfig(
        prepared.data.runtime.store,
        config.version,
        picker=recording,
        on_over=recording.on_over,
        after_over=stop_when_complete,
        note=recording.note,
        title="toolbench web shop · human baseline",
    )
    status, start = "interrupted", time.perf_counter()
    try:
        if not recording.complete:

            def announce(url: str) -> None:
                _announce(console, url, recording, folder)

            run_server(create_app(shop), args.host, args.port, announce, servers.append)
        status = "complete" if recording.complete else "interrupted"
    finally:
        recording.stats.elapsed_s = time.perf_counter() - start
        _finish(info, status, prepared, recording, folder, console)
        console.print(f"{recording.note()}; run folder {folder} (toolbench report {folder})",
                      markup=False, highlight=False)  # fmt: skip
    return 0 if status == "complete" else 130


def _run_info(
    config: RunConfig,
    prepared: Any,
    previous: dict[str, Any],
    fingerprint: str,
    selection: dict[str, Any],
) -> dict[str, Any]:
    """run.json as ``toolbench run`` writes it, for the model ``human:<name>``."""
    from toolbench.runner.invocation import recorded_command
    from toolbench.runner.lifecycle import carried_totals

    data = prepared.data
    return {
        "toolbench_version": __version__,
        "command": recorded_command(),
        "config": config.model_dump(mode="json"),
        "data": {
            "web_shop": {
                "version": data.version,
                "source": data.source,
                "digest": data.digest,
                "n_samples": len(data.samples),
                "n_selected": len(prepared.samples),
            }
        },
        "metric_names": {"web_shop": list(prepared.task.metrics)},
        "human": {"person": config.model.split(":", 1)[1]},
        "status": "running",
        "fingerprint": fingerprint,
        "selection": selection,
        **carried_totals(previous),
    }


def _finish(
    info: dict[str, Any],
    status: str,
    prepared: Any,
    recording: Any,
    folder: Path,
    console: Console,
) -> None:
    """run.json's final form: metrics of the whole log, totals, status, the log check."""
    from toolbench.runner.lifecycle import add_session, progress_of, record_log_check
    from toolbench.runner.run import finish_info
    from toolbench.runner.store import read_records

    store = recording.store
    try:
        store.close()
        final, finished = finish_info(info, [prepared], read_records(folder))
        add_session(final, recording.stats)
        final["status"] = status
        final["progress"] = progress_of(finished, len(prepared.samples))
        record_log_check(final, store, console)
        store.write_info(final)
    finally:
        store.release()  # the folder's lock, taken by open_run


def _announce(console: Console, url: str, recording: Any, folder: Path) -> None:
    console.print(
        f"{recording.note()}. Shop at {url} in a browser; each finished episode is saved to "
        f"{folder} (Ctrl-C stops; run the same command again to continue)",
        markup=False,
        highlight=False,
    )


class _NoPrograms:
    """The sandbox slot of the task's resources: web_shop runs no programs, so any use of it
    is a bug, said loudly."""

    def run(self, factory: Any, program: str) -> Any:
        raise RuntimeError("web_shop runs no programs")

    async def arun(self, factory: Any, program: str, host: Any = None) -> Any:
        raise RuntimeError("web_shop runs no programs")

    def run_many(self, factory: Any, programs: Any) -> Any:
        raise RuntimeError("web_shop runs no programs")
