"""Programs that get past the sandbox's first layer must still change nothing outside their run.

Every case in ``hostile_isolation.py`` runs in one module-wide pool of reused workers and must end
as a per-sample failure with a one-line error (a forgery may instead run to the end, but its state
must not score as the gold's). Around every case the test checks what a real escape would touch:
no file appears under ``%OUT%`` or at the ``%TMP%`` prefix; the canary run log and gold (the run
log held open by this process, as a runner holds its own) and the package's real gold files keep
their bytes and mtimes; the canary's secret never reaches the program's output; and the same
worker then gives exactly what a fresh pool gives for a google_sheets edit, a probe of worker-wide
library state and a home_search program. A case that breaks any of that gets the pool replaced
(by a spare warmed in the background), so one hole does not cascade into the cases after it.

Cases marked ``hole`` are what the sandbox does not contain today: strict xfails, the attack list
for OS-level isolation. The end-to-end test feeds a selection through ``toolbench run``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolbench
from tests.conftest import CliResult, read_run
from tests.sandbox import hostile_pandas, hostile_programs
from tests.sandbox.hostile_isolation import (
    BENIGN,
    BOOKING_BENIGN,
    CASES,
    FAMILIES,
    FORGERY,
    HOME,
    HOME_BENIGN,
    PROBE,
    SHEETS,
    Case,
)
from toolbench.kinds.scoring import best_match
from toolbench.sandbox import ExecResult, Limits, SandboxPool
from toolbench.sandbox.pool import KINDS
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.google_sheets.emulator import Spreadsheet
from toolbench.tasks.google_sheets.world import make_world
from toolbench.tasks.home_search.world import make_world as home_world

# Short timers keep the timeout cases cheap; a worker's one-off imports happen before its first
# program's clock starts.
LIMITS = Limits(wall_s=1.0, cpu_s=1.0)
# Pools warming up in the background, ready to replace one a case poisoned or killed.
SPARES = 2
TABLE: list[list[Any]] = [["Product", "Cost"], ["apple", 1.5], ["rice", 3]]
PACKAGE_DIR = Path(toolbench.__file__).parent
BOOKING = "booking"  # only for the check after each case
SECRET = "toolbench-canary-secret-4b1d9e"
CANARY_GOLD = json.dumps({"prompt": "q", "completion": [f"print('{SECRET}')"]}) + "\n"
CANARY_SAMPLES = json.dumps({"id": "0", "status": "scored", "success": False}) + "\n"


@dataclass(frozen=True)
class Places:
    """Where programs are told to write and what they are told to tamper with."""

    out: Path
    tmp_prefix: str
    canary: Path

    @property
    def samples(self) -> Path:
        return self.canary / "samples.jsonl"

    @property
    def gold(self) -> Path:
        return self.canary / "test.jsonl"

    def render(self, source: str, samples: Path | None = None) -> str:
        return (
            source.replace("%OUT%", str(self.out))
            .replace("%TMP%", self.tmp_prefix)
            .replace("%PKG%", str(PACKAGE_DIR))
            .replace("%SAMPLES%", str(samples or self.samples))
            .replace("%GOLD%", str(self.gold))
            .replace("%CANARY%", str(self.canary))
        )

    def written(self) -> set[Path]:
        tmp = Path(self.tmp_prefix)
        return set(self.out.iterdir()) | set(tmp.parent.glob(tmp.name + "*"))

    def fill_canary(self) -> None:
        self.canary.mkdir(parents=True, exist_ok=True)
        self.samples.write_text(CANARY_SAMPLES)
        self.gold.write_text(CANARY_GOLD)


class Watch:
    """Bytes and mtimes of files no program may change; restores the canary's after a hole."""

    def __init__(self, places: Places) -> None:
        self.places = places
        self.package = sorted(PACKAGE_DIR.glob("tasks/*/data/**/test.jsonl"))
        self.saved = self._take()

    def _take(self) -> dict[Path, tuple[str, int]]:
        files = sorted(self.places.canary.iterdir()) + self.package
        return {path: _fingerprint(path) for path in files}

    def changes(self) -> list[str]:
        now = self._take()
        found = [f"{path} appeared" for path in sorted(set(now) - set(self.saved))]
        found += [f"{path} disappeared" for path in sorted(set(self.saved) - set(now))]
        found += [
            f"{path} changed"
            for path in sorted(set(now) & set(self.saved))
            if now[path] != self.saved[path]
        ]
        if found:
            self.restore()
        return found

    def restore(self) -> None:
        """Put the canary back in place (same inodes where they survive: this process holds
        the run log open) and forget whatever else appeared in its folder."""
        for path in self.places.canary.iterdir():
            if path not in (self.places.samples, self.places.gold):
                _remove(path)
        for path, text in ((self.places.samples, CANARY_SAMPLES), (self.places.gold, CANARY_GOLD)):
            with contextlib.suppress(OSError):
                path.chmod(0o644)
            path.write_text(text)
            mtime = self.saved[path][1]
            os.utime(path, ns=(mtime, mtime))
        self.saved = self._take()


def _fingerprint(path: Path) -> tuple[str, int]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    except OSError:
        return "unreadable", 0


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


class Sandbox:
    """The module's pool, a spare one warming up, and what a fresh worker reports."""

    def __init__(self, places: Places, workbook: Path) -> None:
        self.places = places
        self.factories: dict[str, Callable[..., Any]] = {
            SHEETS: functools.partial(make_world, str(workbook), "any-digest", "Data", False),
            HOME: home_world,
            BOOKING: booking_world,
        }
        self._warmer = ThreadPoolExecutor(SPARES, thread_name_prefix="spare-pool")
        self.pool = self._warm()
        self._spares: list[Future[SandboxPool]] = [
            self._warmer.submit(self._warm) for _ in range(SPARES)
        ]
        self.golds: dict[tuple[str, str], Any] = {}
        self.expected = self.observe()
        assert None not in self.expected, f"a fresh pool failed the baseline: {self.expected}"

    def _warm(self) -> SandboxPool:
        pool = SandboxPool(2, LIMITS)
        for factory in self.factories.values():
            pool.run(factory, "x = 1")
        return pool

    def run(self, world: str, source: str) -> ExecResult:
        return self.pool.run(self.factories[world], self.places.render(source))

    def observe(self) -> tuple[Any, ...]:
        """What the worker now gives for a sheets edit (state), a probe of worker-wide state
        (output), a home_search and a booking program (states); None where one failed."""
        benign, probe, home, booking = (
            self.run(SHEETS, BENIGN),
            self.run(SHEETS, PROBE),
            self.run(HOME, HOME_BENIGN),
            self.run(BOOKING, BOOKING_BENIGN),
        )
        return (
            benign.state if benign.ok else None,
            probe.stdout if probe.ok else None,
            home.state if home.ok else None,
            booking.state if booking.ok else None,
        )

    def gold_state(self, case: Case) -> Any:
        """The state of the case's gold program, computed once on a fresh pool."""
        assert case.gold is not None
        key = (case.world, case.gold)
        if key not in self.golds:
            with SandboxPool(1, LIMITS) as fresh:
                result = fresh.run(self.factories[case.world], case.gold)
            assert result.ok, result
            self.golds[key] = result.state
        return self.golds[key]

    def reset(self) -> None:
        self.pool.close()
        self.pool = self._spares.pop(0).result()
        self._spares.append(self._warmer.submit(self._warm))

    def close(self) -> None:
        self.pool.close()
        for spare in self._spares:
            spare.result().close()
        self._warmer.shutdown()


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Places]:
    root = tmp_path_factory.mktemp("isolation")
    out = root / "out"
    out.mkdir()
    found = Places(out, f"/tmp/toolbench_isolation_{root.name}", root / "canary")
    found.fill_canary()
    try:
        yield found
    finally:
        for path in found.written():
            _remove(path)


@pytest.fixture(scope="module")
def sandbox(places: Places, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    book = Spreadsheet("t", sheet_title="Data")
    book.sheet1.update(TABLE, "A1", raw=False)
    workbook = tmp_path_factory.mktemp("book") / "workbook.json"
    workbook.write_text(json.dumps(book.to_dict()))
    # The canary run log stays open in this process, as a runner keeps its samples.jsonl open:
    # /proc/<parent>/fd/<n> then leads to it.
    with places.samples.open("a"):
        box = Sandbox(places, workbook)
        try:
            yield box
        finally:
            box.close()


@pytest.fixture(scope="module")
def watch(places: Places) -> Watch:
    return Watch(places)


def _interleaved(cases: list[Case]) -> list[Case]:
    """Families taken in turn, so the cases that poison a pool come spread out."""
    queues = [[case for case in cases if case.family == family] for family in FAMILIES]
    order: list[Case] = []
    while any(queues):
        order += [queue.pop(0) for queue in queues if queue]
    return order


def _params(cases: list[Case]) -> list[Any]:
    marks = {
        case.name: [pytest.mark.xfail(strict=True, reason=case.hole)] for case in cases if case.hole
    }
    return [pytest.param(case, id=case.name, marks=marks.get(case.name, [])) for case in cases]


# -- the corpus itself ------------------------------------------------------------------------


def test_corpus_is_large_new_and_consistent() -> None:
    names = [case.name for case in CASES]
    assert len(names) >= 110
    assert len(set(names)) == len(names)
    others = {case.name for case in hostile_pandas.CASES} | {
        name for name, _ in hostile_programs.HOSTILE_PROGRAMS
    }
    assert not set(names) & others, "reuses a name from the other corpora"
    other_sources = {case.source for case in hostile_pandas.CASES} | {
        source for _, source in hostile_programs.HOSTILE_PROGRAMS
    }
    assert not {case.source for case in CASES} & other_sources, "copies a program"
    for family in FAMILIES:
        assert sum(case.family == family for case in CASES) >= 10, family
    for case in CASES:
        assert case.family in FAMILIES and case.world in (SHEETS, HOME), case.name
        assert case.kinds and case.kinds <= KINDS - {"ok"}, case.name
        # A hole's case must pass once the hole is refused in any way, so strict xfail notices.
        assert case.hole is None or case.error is None, case.name
        assert (case.gold is not None) == (case.family == FORGERY), case.name


# -- hostile programs -------------------------------------------------------------------------


def _outcome_problems(case: Case, result: ExecResult, sandbox: Sandbox) -> list[str]:
    if result.ok and case.gold is not None:
        # A forgery that ran to the end: its state must score as a failure.
        gold = sandbox.gold_state(case)
        problems = []
        if result.state == gold:
            problems.append(f"the state passes for the gold's: {result.state!r}")
        if case.world == HOME:
            predicted = result.state if isinstance(result.state, dict) else {}
            if best_match(predicted, [gold])[1][2] == 1.0:
                problems.append(f"home_search scores {result.state!r} as the gold {gold!r}")
        return problems
    problems = []
    if result.ok or result.kind not in case.kinds:
        problems.append(f"ended {result.kind} (expected {sorted(case.kinds)}): {result}")
    if (
        case.error is not None
        and result.kind != "timeout"
        and case.error not in (result.error or "")
    ):
        problems.append(f"error {result.error!r} does not mention {case.error!r}")
    if not result.error or "\n" in result.error or len(result.error) > 300:
        problems.append(f"error is not one short line: {result.error!r}")
    if result.state is not None and not result.ok:
        problems.append(f"a failed program returned a state: {result.state!r}")
    return problems


@pytest.mark.parametrize("case", _params(_interleaved(CASES)))
def test_hostile_program_is_contained(sandbox: Sandbox, watch: Watch, case: Case) -> None:
    before = sandbox.places.written()
    result = sandbox.run(case.world, case.source)
    problems = _outcome_problems(case, result, sandbox)
    if SECRET in result.stdout or SECRET in (result.error or ""):
        problems.append("the canary gold's secret reached the program's output")
    created = sandbox.places.written() - before
    # Whatever the program did, the same worker must still score the next programs as new.
    after = sandbox.observe()
    leaked = after != sandbox.expected or bool(sandbox.places.written() - before - created)
    if leaked:
        problems.append(f"leaked into later programs: {after!r} != {sandbox.expected!r}")
    for path in sorted(sandbox.places.written() - before):
        problems.append(f"created {path}")
        _remove(path)
    problems += watch.changes()
    # A poisoned worker must not skew the cases after it; a killed one is replaced by a warm
    # spare rather than a cold start.
    if leaked or result.kind in ("timeout", "worker_died"):
        sandbox.reset()
    assert not problems, "\n".join(problems)


# -- end to end: hostile predictions among honest ones in a real run ---------------------------

# (gold, an equivalent program that is not the gold verbatim, so it runs in the sandbox)
HONEST = [
    ("worksheet.update_acell('A2', 'pear')", "worksheet.update('A2', 'pear')"),
    ("worksheet.update_acell('B3', 13)", "worksheet.update([[13]], 'B3')"),
    ("worksheet.update_acell('A3', 'plum')", "worksheet.update_cell(3, 1, 'plum')"),
    ("worksheet.update_acell('B2', 9)", BENIGN),
    ("worksheet.update_acell('C1', 'Note')", "worksheet.update('C1', [['Note']])"),
]
CONTAINED_IN_RUN = [
    "agg_style_custom_template_canary_gold",
    "resample_agg_private_name",
    "to_csv_appends_canary_samples",
    "styler_reads_proc_self_environ",
    "option_context_exits_before_formatting",
    "float_format_loops_forever_in_formatting",
    "dunder_del_writes_file",
    "bytes_memory_bomb",
    "unbalanced_brackets_20000",
    "tofile_truncates_canary_gold",
]
HOLES_IN_RUN = [
    "generator_finally_in_cycle_truncates_samples",
    "float_format_during_exception_formatting",
    "held_option_infer_string_changes_later_states",
    "escape_rewrites_parent_samples_through_proc",
    "escape_forges_reply_on_worker_socket",
]
BY_NAME = {case.name: case for case in CASES}


def _write_task(folder: Path, hostile: list[Case], places: Places, run_dir: Path) -> Path:
    """A google_sheets data folder and a replay file: hostile and honest samples alternate."""
    data = folder / "google_sheets" / "v0"
    data.mkdir(parents=True)
    book = Spreadsheet("t", sheet_title="Data")
    book.sheet1.update(TABLE, "A1", raw=False)
    (data / "workbook.json").write_text(json.dumps(book.to_dict()))
    for sub, text in (("functions", "worksheet.update_acell(label, value)"), ("examples", "x")):
        (data / sub).mkdir()
        (data / sub / "0.txt").write_text(text + "\n")
    samples, predictions = [], []
    for index, case in enumerate(hostile):
        gold, honest = HONEST[index % len(HONEST)]
        rendered = places.render(case.source, samples=run_dir / "samples.jsonl")
        samples += [(f"hostile-{index}", gold), (f"honest-{index}", gold)]
        predictions += [(f"hostile-{index}", rendered), (f"honest-{index}", honest)]
    with (data / "test.jsonl").open("w") as handle:
        for sid, gold in samples:
            record = {"id": sid, "prompt": f"request {sid}", "completion": [gold]}
            handle.write(json.dumps({**record, "question_sheet_name": "Data"}) + "\n")
    replay = folder / "replay.jsonl"
    with replay.open("w") as handle:
        for sid, prediction in predictions:
            handle.write(json.dumps({"id": sid, "prediction": prediction}) + "\n")
    return replay


def _run_with_hostile_samples(
    cli: Callable[..., CliResult], tmp_path: Path, names: list[str]
) -> None:
    places = Places(
        tmp_path / "escaped", f"/tmp/toolbench_isolation_run_{tmp_path.name}", tmp_path / "canary"
    )
    places.out.mkdir()
    places.fill_canary()
    watch = Watch(places)
    run_dir = tmp_path / "run"
    hostile = [BY_NAME[name] for name in names]
    replay = _write_task(tmp_path / "data", hostile, places, run_dir)
    try:
        code, _, err = cli(
            "run", "google_sheets", "--data-dir", str(tmp_path / "data"),
            "--model", f"replay:{replay}", "--out", str(run_dir), "--sandbox-timeout", "1",
        )  # fmt: skip
        escaped = sorted(places.written())
    finally:
        for path in places.written():
            _remove(path)
    problems = [f"the run let a program create {path}" for path in escaped]
    problems += watch.changes()
    if code != 0:
        problems.append(f"the run exited {code}: {err.strip()}")
    info, records = read_run(run_dir)
    if info["status"] != "complete":
        problems.append(f"the run is {info['status']}")
    expected = {f"{kind}-{i}" for i in range(len(hostile)) for kind in ("hostile", "honest")}
    ids = [record["id"] for record in records]
    if sorted(ids) != sorted(expected):
        problems.append(f"the run log holds {sorted(ids)}")
    for record in records:
        index = int(record["id"].rpartition("-")[2])
        if record["id"].startswith("hostile"):
            message = record.get("message") or ""
            if record["status"] != "model_error" or record["success"]:
                problems.append(f"{hostile[index].name}: {record['status']} {record['success']}")
            elif not message or "\n" in message:
                problems.append(f"{hostile[index].name}: message {message!r}")
        elif record["status"] != "scored" or not record["success"]:
            problems.append(f"honest sample after {hostile[index].name} failed: {record}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_run_scores_hostile_predictions_as_failures_and_honest_ones_as_usual(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    _run_with_hostile_samples(cli, tmp_path, CONTAINED_IN_RUN)


@pytest.mark.slow
def test_run_with_escaping_predictions_stays_sound(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    _run_with_hostile_samples(cli, tmp_path, HOLES_IN_RUN)
