"""google_sheets: the model writes gspread/pandas code that edits a worksheet.

Each sample names its question sheet (``question_sheet_name``) in a workbook stored beside its
test.jsonl (``workbook.json``; ours when a data folder has none). The prediction and every gold
program run in the sandbox, each on a fresh copy of the workbook; the question sheet is then read
back as the original evaluator read it (a dataframe of evaluated values, all-empty rows and
columns dropped) plus, for ``check_format`` samples, its cell formats. The prediction succeeds
when that state equals a gold's. As in the original, a prediction equal to a gold program
verbatim succeeds without running, and a program that raises or is refused is a crash.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.agent import AgentWorld
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import (
    LiveOptions,
    Resources,
    TaskBase,
    TaskData,
    TaskDefaults,
    TaskGenerator,
)
from toolbench.errors import UserError
from toolbench.kinds.folder import load_folder, package_versions
from toolbench.kinds.program_task import crash_outcome, sandbox_failure
from toolbench.kinds.single_turn import QueryPrompt, solve_single_turn
from toolbench.prompts.extract import extract_program
from toolbench.sandbox import SandboxError
from toolbench.sandbox.memo import ProgramRunner
from toolbench.sandbox.world import WorldFactory
from toolbench.tasks.google_sheets.agent_world import sheets_agent_world
from toolbench.types import Outcome, Sample, Status

WORKBOOK_FILE = "workbook.json"
SHEETS_METRICS = ("success_rate", "crash_rate")


@dataclass(frozen=True)
class Workbook:
    """The workbook a data folder's questions are about."""

    path: Path
    digest: str
    sheet_titles: tuple[str, ...]

    @classmethod
    def read(cls, path: Path) -> Workbook:
        try:
            raw = path.read_bytes()
            data = json.loads(raw)
            titles = tuple(str(sheet["title"]) for sheet in data["sheets"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(
                f"{path}: not a workbook ({type(exc).__name__}: {exc}); it must be the JSON "
                "of Spreadsheet.to_dict(), as `toolbench data generate google_sheets` writes"
            ) from None
        return cls(path.resolve(), hashlib.sha256(raw).hexdigest()[:16], titles)


@dataclass(frozen=True)
class SheetsRuntime:
    """Per load: the workbook and each sample's world factory (its sheet, its format check)."""

    workbook: Workbook
    worlds: dict[str, WorldFactory]
    live: bool = False
    cleanup: Callable[[], None] | None = None

    def close(self) -> None:
        """Called when the run ends: a live run deletes its scratch spreadsheet."""
        if self.cleanup is not None:
            self.cleanup()


@dataclass
class SheetsTask(QueryPrompt, TaskBase):
    name: str
    summary: str
    package_dir: Path = field()
    world: Callable[..., Any]  # make_world(workbook_path, digest, sheet_title, check_format)
    generator: TaskGenerator = field()  # ``toolbench data generate`` (``cli.data.Generates``)
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = SHEETS_METRICS
    # --live: builds the per-sample factories against real Google Sheets instead
    live_worlds: (
        Callable[
            [Workbook, Sequence[Sample]],
            tuple[dict[str, WorldFactory], Callable[[], None]],
        ]
        | None
    ) = None

    def versions(self) -> list[str]:
        return package_versions(self.package_dir)

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[SheetsRuntime]:
        data = load_folder(self.name, self.package_dir, version, data_dir)
        folder = Path(data.source)
        path = folder / WORKBOOK_FILE
        if not path.is_file():
            path = self.package_dir / "data" / version / WORKBOOK_FILE
        workbook = Workbook.read(path)
        for sample in data.samples:
            _check_fields(sample, workbook)
        data.digest = hashlib.sha256(f"{data.digest}|{workbook.digest}".encode()).hexdigest()[:16]
        if live is not None:
            if self.live_worlds is None:
                raise UserError(f"task {self.name} has no live mode")
            # Live, golds run next to their prediction, so an outage is that sample's infra
            # error rather than a failed load.
            worlds, cleanup = self.live_worlds(workbook, data.samples)
            live_data = data.with_runtime(
                SheetsRuntime(workbook, worlds, live=True, cleanup=cleanup)
            )
            live_data.on_close.append(live_data.runtime.close)
            return live_data
        worlds = {s.id: self._world(workbook, s) for s in data.samples}
        return data.with_runtime(SheetsRuntime(workbook, worlds))

    async def prepare(self, data: TaskData[SheetsRuntime], sandbox: ProgramRunner) -> None:
        """Offline, every gold runs now; live, next to its prediction (see ``score``)."""
        runtime = data.runtime
        if not runtime.live:
            data.gold = await asyncio.to_thread(
                self._run_golds, data.samples, runtime.worlds, sandbox
            )

    def _world(self, workbook: Workbook, sample: Sample) -> WorldFactory:
        return functools.partial(
            self.world,
            str(workbook.path),
            workbook.digest,
            sample.fields["question_sheet_name"],
            bool(sample.fields.get("check_format", False)),
        )

    def _run_golds(
        self, samples: Sequence[Sample], worlds: dict[str, WorldFactory], sandbox: ProgramRunner
    ) -> dict[str, list[Any]]:
        """Every gold program's final sheet; one that fails is a data error naming file:line."""
        gold: dict[str, list[Any]] = {}
        for sample in samples:
            results = sandbox.run_many(worlds[sample.id], list(sample.labels))
            for index, result in enumerate(results):
                if not result.ok:
                    raise UserError(
                        f"{sample.source}: gold program {index + 1} fails on sheet "
                        f"{sample.fields['question_sheet_name']!r} ({result.error}); "
                        "fix or remove this line"
                    )
            gold[sample.id] = [result.state for result in results]
        return gold

    # -- solving and scoring -------------------------------------------------------------------

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        return await solve_single_turn(self, state, generate, resources)

    def extract_action(self, text: str) -> str:
        return extract_program(text)

    async def score(
        self, data: TaskData[SheetsRuntime], sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome:
        program = action.strip("\n")
        if not program.strip():
            return crash_outcome("empty program: the model wrote no action", ())
        for index, label in enumerate(sample.labels):
            if program == label:  # the original's shortcut: a verbatim gold needs no run
                return Outcome(
                    status=Status.SCORED,
                    success=True,
                    details={"closest_label": index, "verbatim": True},
                )
        runtime = data.runtime
        try:
            result = await sandbox.arun(runtime.worlds[sample.id], program)
        except SandboxError as exc:
            return sandbox_failure(exc)
        if not result.ok:
            if runtime.live and _service_failed(result.error):
                return Outcome(status=Status.INFRA_ERROR, message=f"live: {result.error}")
            return crash_outcome(f"{result.kind}: {result.error}", ())
        if sample.id not in data.gold:  # live: golds run now, on fresh copies
            states = []
            for index, label in enumerate(sample.labels):
                gold = await sandbox.arun(runtime.worlds[sample.id], label)
                if not gold.ok:
                    message = f"live: gold program {index + 1} failed: {gold.error}"
                    return Outcome(status=Status.INFRA_ERROR, message=message)
                states.append(gold.state)
            data.gold[sample.id] = states
        golds = data.gold[sample.id]
        matched = next((i for i, gold in enumerate(golds) if gold == result.state), None)
        details: dict[str, Any] = {"closest_label": matched or 0, "state": result.state}
        if matched is None:
            details["differences"] = differences(result.state, golds[0])
        return Outcome(status=Status.SCORED, success=matched is not None, details=details)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)

    def agent_world(
        self, data: TaskData[SheetsRuntime], sample: Sample, resources: Resources[SheetsRuntime]
    ) -> AgentWorld:
        """The sample's sheet with its worksheet methods as tools (``agent_world.py``), judged by
        this task's ``score``."""
        workbook = data.runtime.workbook
        where = (str(workbook.path), workbook.digest)
        return sheets_agent_world(self, data, sample, resources.sandbox, where)


_SERVICE_FAILURE = re.compile(r"APIError: .*\b(429|5\d\d)\b|Connection|Timeout")


def _service_failed(error: str | None) -> bool:
    """A live program failed because Google did (rate limit left after back-off, 5xx, network),
    which is the harness's problem, not the model's."""
    return bool(error and _SERVICE_FAILURE.search(error))


def _check_fields(sample: Sample, workbook: Workbook) -> None:
    title = sample.fields.get("question_sheet_name")
    if not isinstance(title, str) or title not in workbook.sheet_titles:
        raise UserError(
            f"{sample.source}: question_sheet_name {title!r} is not a worksheet of "
            f"{workbook.path} (it has: {', '.join(workbook.sheet_titles)}); fix the line or "
            f"put the questions' workbook beside test.jsonl as {WORKBOOK_FILE}"
        )
    check = sample.fields.get("check_format", False)
    if not isinstance(check, bool):
        raise UserError(f"{sample.source}: check_format must be true or false, not {check!r}")


def differences(state: Any, gold: Any, limit: int = 5) -> list[str]:
    """A few human-readable differences between two sheet states, for the run log."""
    if not isinstance(state, dict) or not isinstance(gold, dict):
        return ["state is not a sheet"]
    found: list[str] = []
    for key in ("columns", "index", "dtypes"):
        if state.get(key) != gold.get(key):
            found.append(f"{key}: {state.get(key)} != expected {gold.get(key)}")
    rows, expected = state.get("rows", []), gold.get("rows", [])
    for number, (row, want) in enumerate(zip(rows, expected, strict=False)):
        if row != want:
            found.append(f"row {number}: {row} != expected {want}")
    if len(rows) != len(expected):
        found.append(f"{len(rows)} data rows != expected {len(expected)}")
    for key in ("formats", "merges"):
        if state.get(key) != gold.get(key):
            found.append(f"{key} differ")
    return found[:limit]
