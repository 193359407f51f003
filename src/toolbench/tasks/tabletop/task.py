"""The tabletop task: a robot arm's table, programs that call the model again while they run.

``load`` reads the original record shape (``tester_id``, ``configs_id``, ``configs``) and
validates it (``scenes.read_records``: exit 2 naming file:line). ``prepare`` builds each
sample's initial table in the harness (trusted code, no model text) for the checks. ``solve``
runs the sample's one-line program, ``tabletop_ui(<instruction>, <objects line>)``, in the
sandbox; every LMP call and every generated function inside it comes back to this process as
a host call (``session.LmpSession``), becomes a recorded model call, and its code runs in the
same worker. The final table is checked as the original did (``success_rate``) and by the
corrected checker (``success_rate_strict``); images of the initial and final table go to the
run folder. Any failure of the program (an exception anywhere, a refused call, a limit) is a
crash, as in the original.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolbench.core.agent import AgentWorld
from toolbench.core.capabilities import DataclassOptions
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskData, TaskDefaults, TaskGenerator
from toolbench.errors import UserError
from toolbench.kinds.folder import OfflineFolderTask, resolve_folder
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.tabletop import lmp as runtime
from toolbench.tasks.tabletop.agent_world import TabletopWorld
from toolbench.tasks.tabletop.judging import crashed, judge, objects_of, session_of
from toolbench.tasks.tabletop.session import baseline_reply
from toolbench.types import GenerationRequest, Outcome, Sample, TaskContext

METRICS = ("success_rate", "success_rate_strict", "crash_rate")
IMAGES_DIR = "images"


@dataclass
class TabletopTask(DataclassOptions, OfflineFolderTask):
    name: str
    summary: str
    package_dir: Path = field()
    generator: TaskGenerator = field()  # ``toolbench data generate`` (``cli.data.Generates``)
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = METRICS
    fix_corner_name: bool = False  # the original's misspelt "botom right corner" by default
    option_defaults = MappingProxyType({"fix_corner_name": False})

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData:
        # deferred: shapely and numpy, only when samples are loaded (not to list tasks)
        from toolbench.tasks.tabletop import scenes

        self.refuse_live(live)
        folder = resolve_folder(self.name, self.package_dir, version, data_dir)
        path = folder / "test.jsonl"
        records = scenes.read_records(path)
        samples = _samples(self.name, records, path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return TaskData(self.name, version, samples, TaskContext((), ()), str(folder), digest)

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        """Each sample's initial table, built once (the checks compare against it)."""
        # deferred: shapely and numpy, only when samples are loaded (not to list tasks)
        from toolbench.tasks.tabletop.world import Table

        for sample in data.samples:
            configs = sample.fields["configs"]
            try:
                initial = Table(configs, fix_corner_name=self.fix_corner_name).snapshot()
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{sample.source}: the scene cannot be built ({exc})") from None
            data.gold[sample.id] = [initial]

    def baseline_reply(self, request: GenerationRequest) -> str | None:
        """LMP prompts are not docs plus demonstrations: the baseline answers each with the
        template policy of ``experts.baseline_program`` (``session.baseline_reply``)."""
        return baseline_reply(request)

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        sample = state.sample
        configs = sample.fields["configs"]
        session = session_of(sample, state.epoch, generate, resources.prompter.config)
        factory = functools.partial(
            runtime.tabletop_world, configs, fix_corner_name=self.fix_corner_name
        )
        program = runtime.program_for(sample.query, objects_of(configs))
        try:
            result = await resources.sandbox.arun(factory, program, session)
        finally:
            state.prediction = session.top_code
            state.trace.extend(
                {"step": c.step, "query": c.query, **({"context": c.context} if c.context else {})}
                for c in session.trace
            )
        initial = resources.data.gold[sample.id][0]
        details: dict[str, Any] = {"output": result.stdout} if result.stdout else {}
        final = result.state if result.ok else None
        if resources.run_dir is not None:
            drawn = asyncio.get_running_loop().run_in_executor(
                _drawer(), _images, resources.run_dir, state, initial, final
            )
            details.update(await drawn)
        if final is None:
            return crashed(result.error or result.kind, details)
        return judge(sample, initial, final, details)

    def agent_world(self, data: TaskData, sample: Sample, resources: Resources) -> AgentWorld:
        return TabletopWorld(data, sample, resources, fix_corner_name=self.fix_corner_name)

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """The program's ``tabletop_ui`` call, the sample's first model call: the session and
        the call's arguments are built as ``solve`` builds them."""
        session = session_of(sample, epoch, _no_model, prompter.config)
        query, context = runtime.top_call(sample.query, objects_of(sample.fields["configs"]))
        return session.lmp_request(runtime.TOP_LMP, query, context)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)


async def _no_model(request: GenerationRequest) -> Any:
    raise RuntimeError("no model is asked while a prompt is only shown")


def _samples(task: str, records: list[dict[str, Any]], path: Path) -> list[Sample]:
    samples: list[Sample] = []
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        ident = f"{record['tester_id']}-{record['configs_id']}"
        if ident in seen:  # the original's ids are per tester and of unknown type
            ident = f"{ident}-{number}"
        seen.add(ident)
        configs = record["configs"]
        samples.append(
            Sample(
                id=ident,
                task=task,
                query=str(configs["instruction"]),
                labels=(),
                fields={
                    "tester_id": record["tester_id"],
                    "configs_id": record["configs_id"],
                    "configs": configs,
                },
                source=f"{path}:{number}",
            )
        )
    return samples


def _images(run_dir: Path | None, state: SampleState, initial: Any, final: Any) -> dict[str, Any]:
    """PNGs of the initial and final table under the run folder; the record names them
    (paths relative to the run folder). Plain strings, not ``Path``: pathlib's parsing was a
    fifth of this function's time."""
    if run_dir is None:
        return {}
    # deferred: matplotlib, only when a run writes images
    from toolbench.tasks.tabletop import images

    relative_folder = os.path.join(IMAGES_DIR, state.sample.task)
    os.makedirs(os.path.join(run_dir, relative_folder), exist_ok=True)
    stem = f"{_safe(state.sample.id)}-e{state.epoch}"
    named: dict[str, str] = {}
    for which, snapshot in (("initial", initial), ("final", final)):
        if snapshot is None:
            continue
        png = _png(images.render_png, snapshot, f"{state.sample.id} {which}")
        relative = os.path.join(relative_folder, f"{stem}-{which}.png")
        with open(os.path.join(run_dir, relative), "wb") as handle:
            handle.write(png)
        named[which] = relative
    return {"images": named}


_PNGS: OrderedDict[bytes, bytes] = OrderedDict()
_PNG_BYTES = [0]  # the size of what _PNGS holds
_PNGS_LOCK = threading.Lock()
_DRAWER: list[ThreadPoolExecutor] = []


def _drawer() -> ThreadPoolExecutor:
    """One thread draws every picture, off the event loop (which goes on answering other
    samples' host calls meanwhile: PNG encoding releases the GIL); one, because matplotlib's
    font objects are not safe to share between threads."""
    if not _DRAWER:
        _DRAWER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="tabletop-images"))
    return _DRAWER[0]


MAX_PNG_BYTES = 64 << 20  # drawings remembered (~5.5 KB each: ~12,000 pictures)


def _png(render: Any, snapshot: Any, title: str) -> bytes:
    """The drawing of a snapshot, made once: the same table and title always give the same
    bytes, so every epoch of a sample (and an unchanged final table) reuses them. Bounded by
    bytes rather than count, so a whole epoch's pictures (two a sample) stay until the next
    epoch needs them, for test sets of thousands of samples."""
    key = hashlib.sha256(json.dumps([snapshot, title]).encode()).digest()  # same dict, same order
    with _PNGS_LOCK:
        png = _PNGS.get(key)
    if png is None:
        png = render(snapshot, title)
        with _PNGS_LOCK:
            _PNGS[key] = png
            _PNG_BYTES[0] += len(png)
            while _PNG_BYTES[0] > MAX_PNG_BYTES and _PNGS:
                _PNG_BYTES[0] -= len(_PNGS.popitem(last=False)[1])
    return png


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:100]
