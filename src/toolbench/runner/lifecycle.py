"""One run lifecycle for every kind of run (tool tasks, awareness datasets).

open the folder (resume the run with the same fingerprint *and* selection, or start a new one)
-> write ``run.json`` as running -> run the work not yet done, with progress -> on any ending
(complete, Ctrl-C, crash) add this session's calls, tokens and time to the totals, compute the
metrics from the whole log, check the log's chain, and write ``run.json`` again.

What differs between kinds of run is data: a ``RunPlan`` says what the folder is called, what
identifies the configuration, which work there is and how its records become metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import time
from collections.abc import Awaitable, Callable, Collection, Container, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Task as ProgressTask
from rich.text import Text

from toolbench.errors import UserError
from toolbench.models.balance import merge_stats
from toolbench.runner.chain import LogCheck
from toolbench.runner.engine import (
    Executor,
    LocalExecutor,
    SampleWork,
    SessionStats,
    record_writer,
)
from toolbench.runner.environment import session_environment
from toolbench.runner.lock import LOCK_FILE
from toolbench.runner.progress import PlainProgress, WaveRemainingColumn, eta_needs, interval
from toolbench.runner.store import Key, RunStore, read_run_info
from toolbench.runner.validate import check_selection

# (info so far, every record of the log, read once as it streams from the file) -> info with
# "metrics", "counts", ...; and the number of work items that ended scored or as model errors.
# A finisher keeps per-sample or per-epoch state, never the records (a run may have millions).
Finisher = Callable[[dict[str, Any], Iterable[dict[str, Any]]], tuple[dict[str, Any], int]]


# Without a terminal (CI logs, ``| tee``) a plain progress line at most this often.
PLAIN_PROGRESS_EVERY_S = 15.0
# run.json's progress is brought up to date at most this often during a run.
PROGRESS_WRITE_EVERY_S = 10.0


class RateColumn(ProgressColumn):
    """Sample x epochs finished per second over the last few (solving only: loading data and
    executing golds happen before the bar starts), the number users watch when tuning
    --concurrency."""

    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        text = f"{speed:7.1f} samples/s" if speed else "      - samples/s"
        return Text(text, style="progress.data.speed")


@dataclass
class RunResult:
    folder: Path
    info: dict[str, Any]
    stats: SessionStats


@dataclass
class RunPlan:
    """Everything that makes one kind of run what it is."""

    prefix: str  # default folder name: <runs dir>/<prefix><timestamp>
    fingerprint: str  # what can change a result
    selection: dict[str, Any]  # which part of the data (--limit, --epochs): resumed only if equal
    info: dict[str, Any]  # run.json's fields besides status, totals and metrics
    work: SampleWork
    finish: Finisher
    concurrency: int
    # Where the samples are solved (this process, or a Ray cluster): never how they are kept.
    executor: Executor = field(default_factory=LocalExecutor)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Checks that must pass before any folder is made (e.g. the model's endpoint answers).
    preflight: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    extra_final: dict[str, Any] = field(default_factory=dict)  # e.g. the sandbox's isolation
    # Called as the session ends, with run.json so far; each returns fields to add or update
    # (e.g. calls, errors and latency per endpoint of the model's pool).
    final_info: list[Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=list)
    # Told the run folder once it is chosen, before any work runs (tasks that save files).
    on_folder: list[Callable[[Path], None]] = field(default_factory=list)
    # What the fingerprint hashes, kept in run.json so a refused resume names what changed.
    fingerprint_parts: dict[str, Any] = field(default_factory=dict)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80]


def folder_for(
    prefix: str, fingerprint: str, selection: dict[str, Any], out: Path | None, runs_dir: Path
) -> Path:
    """--out if given; else the newest unfinished run with this prefix, fingerprint and
    selection; else a new ``<prefix><timestamp>`` folder. A run of another ``--limit`` or
    ``--epochs`` is another run: resuming it would mix two selections in one folder."""
    if out is not None:
        if out.exists() and not out.is_dir():
            raise UserError(f"--out {out}: is a file; give a folder (new or a run to resume)")
        return out
    if runs_dir.is_dir():
        for folder in sorted(runs_dir.glob(prefix + "*"), reverse=True):
            try:
                info = read_run_info(folder)
            except Exception:
                continue
            if (
                info.get("fingerprint") == fingerprint
                and info.get("selection", selection) == selection
                and info.get("status") != "complete"
            ):
                return folder
    return new_folder(runs_dir, prefix)


def new_folder(runs_dir: Path, prefix: str) -> Path:
    """A new ``<prefix><timestamp>`` folder, made here: made atomically, so two runs started
    within one second (of different configurations, say) never share one."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--runs-dir {runs_dir}: cannot be created ({exc.strerror})") from None
    for n in range(1, 10_000):
        folder = runs_dir / (f"{prefix}{stamp}" if n == 1 else f"{prefix}{stamp}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
        except OSError as exc:
            raise UserError(f"{folder}: cannot be created ({exc.strerror})") from None
    raise UserError(f"{runs_dir}: too many runs started in one second")


def execute_plan(plan: RunPlan, out: Path | None, runs_dir: Path, console: Console) -> RunResult:
    """Run the plan's work into its folder; see the module docstring."""

    async def checks() -> None:
        for check in plan.preflight:
            await check()

    if plan.preflight:
        asyncio.run(checks())
    folder = folder_for(plan.prefix, plan.fingerprint, plan.selection, out, runs_dir)
    store, previous, done = open_run(
        folder, plan.fingerprint, console, plan.fingerprint_parts, plan.selection
    )
    try:
        result = _run_claimed(plan, folder, store, previous, done, console)
    finally:
        store.release()
    if result.stats.stopped_kind == "not_served":  # a setting to fix: exit 2, as a bad flag
        if not previous and not _has_records(store):
            _discard(store, remove_folder=out is None)  # it holds nothing: the fixed rerun's
        raise UserError(f"{result.stats.stopped}; nothing more was sent")
    return result


def _has_records(store: RunStore) -> bool:
    path = store.samples_file
    return path.is_file() and path.stat().st_size > 0


def _discard(store: RunStore, remove_folder: bool) -> None:
    """Remove what a new run that recorded nothing wrote (run.json, an empty log, the lock
    file), and the folder itself when the run chose it, so the fixed command starts afresh."""
    for path in (store.run_file, store.samples_file, store.folder / LOCK_FILE):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if remove_folder:
        with contextlib.suppress(OSError):
            store.folder.rmdir()


def _run_claimed(
    plan: RunPlan,
    folder: Path,
    store: RunStore,
    previous: dict[str, Any],
    done: Collection[Key],
    console: Console,
) -> RunResult:
    """The run itself, in a folder this process holds the lock of."""
    for tell in plan.on_folder:
        tell(folder)
    planned = plan.work.planned
    tally = tally_work(plan.work, done)
    done_before = planned - sum(tally.left.values())
    environment, changes = session_environment(previous)
    for change in changes:  # the folder now mixes records made two ways: say so once
        console.print(
            f"warning: {folder}: resumed with another environment ({change})",
            style="bold yellow", markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    info = {
        **plan.info,
        "status": "running",
        "progress": progress_of(done_before, planned),
        "fingerprint": plan.fingerprint,
        "selection": plan.selection,
        **environment,
        **carried_totals(previous),
    }
    store.write_info(info)
    stats, status = SessionStats(), "failed"
    checkpoint = ProgressCheckpoint(store, info, stats, done_before)
    try:
        asyncio.run(
            _run_with_progress(plan, tally, done, store, stats, console, checkpoint.advance)
        )
        status = "complete"
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
        raise
    finally:
        store.close()
        log = store.finished_log()
        info, finished = plan.finish(info, log)
        check = log.check  # after the finisher's pass (reads what it left unread)
        add_session(info, stats)
        if status == "complete" and finished < planned:
            status = "incomplete"  # infra errors remain; rerun the command to retry them
        info["status"] = status
        info["progress"] = progress_of(finished, planned)
        info.pop("stopped", None)
        info.pop("stopped_kind", None)
        if stats.stopped is not None:  # the model's service went away: the rest is undone
            info["stopped"], info["stopped_kind"] = stats.stopped, stats.stopped_kind
        info.update(plan.extra_final)
        for more in plan.final_info:
            info.update(more(info))
        info.update(summed_pools(previous, info))
        record_log_check(info, store, console, check)
        store.write_info(info)
    if stats.stopped is not None and stats.stopped_kind != "not_served":
        left = planned - finished
        console.print(
            f"{stats.stopped}; {left} samples left undone: rerun the same command to "
            "finish",
            style="bold red", markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    return RunResult(folder=folder, info=info, stats=stats)


def progress_of(done: int, planned: int) -> dict[str, int]:
    """run.json's ``progress``: of the planned sample x epochs, how many ended scored or as
    model errors (infra errors are not done: a rerun tries them again)."""
    return {"done": done, "planned": planned}


class ProgressCheckpoint:
    """run.json's ``progress`` kept current while the run goes on (rewritten at most every
    ``PROGRESS_WRITE_EVERY_S``), so whoever reads run.json alone sees how far a run got."""

    def __init__(
        self, store: RunStore, info: dict[str, Any], stats: SessionStats, done_before: int
    ) -> None:
        self.store, self.info, self.stats, self.done_before = store, info, stats, done_before
        self.last = time.monotonic()

    def advance(self) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_WRITE_EVERY_S:
            return
        self.last = now
        done = self.done_before + self.stats.counts["scored"] + self.stats.counts["model_error"]
        planned = self.info["progress"]["planned"]
        self.store.write_info({**self.info, "progress": progress_of(done, planned)})


@dataclass
class WorkTally:
    """Per progress bar: how many records the run plans, and how many are left to do."""

    totals: dict[str, int]
    left: dict[str, int]


def tally_work(work: SampleWork, done: Container[Key]) -> WorkTally:
    """One pass over the run's keys (no list of them is kept)."""
    totals: dict[str, int] = {}
    left: dict[str, int] = {}
    for key, bar in work.planned_keys():
        totals[bar] = totals.get(bar, 0) + 1
        if key not in done:
            left[bar] = left.get(bar, 0) + 1
    return WorkTally(totals, left)


async def _run_with_progress(
    plan: RunPlan,
    tally: WorkTally,
    done: Container[Key],
    store: RunStore,
    stats: SessionStats,
    console: Console,
    on_record: Callable[[], None],
) -> None:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        WaveRemainingColumn(),
    )
    planned, left = plan.work.planned, sum(tally.left.values())
    plain = None
    if not console.is_terminal:
        every_s = interval(PLAIN_PROGRESS_EVERY_S)
        plain = PlainProgress(console, planned, planned - left, every_s, stats, plan.concurrency)
    with Progress(*columns, console=console, disable=plain is not None) as bar:
        bars = {
            name: bar.add_task(
                name,
                total=total,
                completed=total - tally.left.get(name, 0),
                done_before=total - tally.left.get(name, 0),
                needs=eta_needs(plan.concurrency, tally.left.get(name, 0)),
            )
            for name, total in tally.totals.items()
        }

        def advance(name: str) -> None:
            bar.advance(bars[name])
            on_record()
            if plain is not None:
                plain.advance()

        todo = ((key, name) for key, name in plan.work.planned_keys() if key not in done)
        try:
            async with plain.ticking() if plain else contextlib.nullcontext():
                await plan.executor.run(
                    todo,
                    plan.work,
                    record_writer(store, stats, advance),
                    stats,
                    min(plan.concurrency, left) or 1,
                )
        finally:
            for close in plan.closers:
                await close()


def open_run(
    folder: Path,
    fingerprint: str,
    console: Console,
    parts: dict[str, Any] | None = None,
    selection: dict[str, Any] | None = None,
) -> tuple[RunStore, dict[str, Any], Collection[Key]]:
    """The run folder's store, holding the folder's lock (``FolderInUse`` if another process
    runs it), its previous run.json (empty if new) and the finished records; a folder holding
    another configuration, or more of the data than ``selection`` asks for, is refused
    (``UserError``). The caller calls ``store.release()`` after its last write."""
    store = RunStore(folder)
    store.claim()
    try:
        previous: dict[str, Any] = {}
        if store.exists():
            store.check_fingerprint(fingerprint, parts)
            previous = read_run_info(folder)
            if selection is not None:
                check_selection(folder, previous.get("selection"), selection)
        done = store.prepare_resume()
    except BaseException:
        store.release()
        raise
    if done:
        console.print(f"[dim]resuming {folder}: {len(done)} records already done[/dim]")
    return store, previous, done


def record_log_check(
    info: dict[str, Any], store: RunStore, console: Console, check: LogCheck | None = None
) -> None:
    """Check the log against the chain this process wrote, before run.json is finalised
    (``check``: that check, already made by ``RunStore.finished_log``): ``"log_verified"`` in
    run.json, and one warning line if the log changed under the run (e.g. a program that
    escaped the sandbox rewrote it). In place; never raises."""
    if check is None:
        check = store.verify()
    info["log_verified"] = check.ok
    info.pop("log_problem", None)
    if not check.ok:
        info["log_problem"] = check.describe(store.samples_file)
        console.print(
            f"warning: {info['log_problem']}", style="bold red", markup=False, soft_wrap=True
        )


def summed_pools(previous: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """Per-endpoint (or replica) stats of a resumed run: this session's added to the earlier
    sessions' (run.json ``endpoints``), like its tokens and model calls."""
    before, now = previous.get("endpoints"), info.get("endpoints")
    if not isinstance(before, dict) or not isinstance(now, dict):
        return {}
    return {"endpoints": merge_stats([before, now])}


def _tokens(value: Any) -> dict[str, int]:
    """A ``{"prompt", "completion"}`` pair from run.json (zeros for what is not there)."""
    value = value if isinstance(value, dict) else {}
    return {name: int(value.get(name) or 0) for name in ("prompt", "completion")}


def carried_totals(previous: dict[str, Any]) -> dict[str, Any]:
    """The run.json totals a resumed run continues from (fresh ones for a new run). A run.json
    written before generated and cached tokens were apart has no ``cached``: zeros."""
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    timing = previous.get("timing", {})
    tokens = previous.get("tokens", {})
    return {
        "timing": {
            "started": timing.get("started", now),
            "sessions": timing.get("sessions", 0) + 1,
            "elapsed_s": timing.get("elapsed_s", 0.0),
        },
        "tokens": {**_tokens(tokens), "cached": _tokens(tokens.get("cached"))},
        "model_calls": previous.get("model_calls", {"live": 0, "cached": 0}),
    }


def add_session(info: dict[str, Any], stats: SessionStats) -> None:
    """Add this session's time, tokens and model calls to the run's totals (in place).

    ``tokens`` are those the model generated (calls not answered from the cache), with the
    cached calls' apart under ``cached``; ``timing.generated_tokens_per_s`` is this session's
    generated completion tokens per second of its solving (None when it solved nothing)."""
    timing = dict(info["timing"])
    timing["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    timing["elapsed_s"] = round(float(timing.get("elapsed_s", 0.0)) + stats.elapsed_s, 3)
    timing["last_session_samples_per_s"] = (
        round(stats.done / stats.elapsed_s, 2) if stats.elapsed_s > 0 else None
    )
    timing["generated_tokens_per_s"] = (
        round(stats.completion_tokens / stats.elapsed_s, 2) if stats.elapsed_s > 0 else None
    )
    info["timing"] = timing
    tokens = info["tokens"]
    cached = _tokens(tokens.get("cached"))
    info["tokens"] = {
        "prompt": int(tokens["prompt"]) + stats.prompt_tokens,
        "completion": int(tokens["completion"]) + stats.completion_tokens,
        "cached": {
            "prompt": cached["prompt"] + stats.cached_prompt_tokens,
            "completion": cached["completion"] + stats.cached_completion_tokens,
        },
    }
    info["model_calls"] = {
        "live": info["model_calls"]["live"] + stats.model_calls - stats.cached_calls,
        "cached": info["model_calls"]["cached"] + stats.cached_calls,
    }
