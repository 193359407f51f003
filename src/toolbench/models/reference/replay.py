"""The replay model: answers from a JSON-lines file of predictions.

Replay scores predictions produced elsewhere (another harness, a hosted batch job) with this
benchmark's checkers, so results stay comparable without re-running the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolbench.errors import UserError, json_problem
from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest

_LINE_FORMAT = "each line must be a JSON object with 'id' and 'prediction'"
DEFAULT_STEP = "answer"  # the one step of a one-call task

ReplayKey = tuple[str | None, str, int | None, str | None]  # (task, id, epoch, step)


def _parse_line(raw: str, where: str) -> tuple[ReplayKey, str]:
    """One replay line -> ((task, id, epoch, step), prediction); a UserError naming file:line
    if bad."""
    try:
        obj: Any = json.loads(raw)
    except json.JSONDecodeError as error:
        raise UserError(f"{where}: invalid JSON ({json_problem(error)}); {_LINE_FORMAT}") from None
    if not isinstance(obj, dict):
        raise UserError(
            f"{where}: expected a JSON object, got {type(obj).__name__}; {_LINE_FORMAT}"
        )
    for field in ("id", "prediction"):
        if field not in obj:
            raise UserError(f"{where}: missing '{field}'; {_LINE_FORMAT}")
    sample_id = obj["id"]
    if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)):
        raise UserError(f"{where}: 'id' must be a string; {_LINE_FORMAT}")
    if not isinstance(obj["prediction"], str):
        raise UserError(f"{where}: 'prediction' must be a string; {_LINE_FORMAT}")
    task = obj.get("task")
    if task is not None and not isinstance(task, str):
        raise UserError(f"{where}: 'task' must be a string; {_LINE_FORMAT}")
    epoch = obj.get("epoch")
    if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, int)):
        raise UserError(f"{where}: 'epoch' must be an integer; {_LINE_FORMAT}")
    step = obj.get("step")
    if step is not None and not isinstance(step, str):
        raise UserError(f"{where}: 'step' must be a string; {_LINE_FORMAT}")
    return (task, str(sample_id), epoch, step), obj["prediction"]


class ReplayModel:
    """Answers from a JSON-lines file of ``{"id", "prediction"[, "task"][, "epoch"][, "step"]}``.

    Lookup is most specific first: (task, id, epoch), (task, id), (id, epoch), (id), each with
    the request's step. A line without ``step`` answers the ``answer`` step (one-call tasks);
    a line whose id is ``<id>#<step>`` answers that step of ``<id>``, so plain
    ``{"id", "prediction"}`` lines can script every step. A file written for one task and one
    epoch thus works everywhere, and a file with per-task, per-epoch or per-step predictions is
    used precisely. Several lines with one key are reported by ``check`` (the last one is
    used).
    """

    cacheable = False

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path.name}"
        self._predictions: dict[ReplayKey, str] = {}
        self.duplicates: list[str] = []  # file:line of each line whose key an earlier one had
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"replay file not found: {self.path}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(f"cannot read replay file {self.path}: {error}") from None
        for lineno, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                key, prediction = _parse_line(raw, f"{self.path}:{lineno}")
                if key in self._predictions:
                    self.duplicates.append(f"{self.path}:{lineno}")
                self._predictions[key] = prediction

    def __len__(self) -> int:
        return len(self._predictions)

    def replay_keys(self) -> list[ReplayKey]:
        return list(self._predictions)

    def lookup(
        self, task: str | None, sample_id: str, epoch: int, step: str = DEFAULT_STEP
    ) -> str | None:
        steps: list[tuple[str, str | None]] = [(sample_id, step)]
        if step == DEFAULT_STEP:
            steps.append((sample_id, None))  # a line without "step"
        else:
            steps.append((f"{sample_id}#{step}", None))  # an "<id>#<step>" line
        for ident, wanted in steps:
            for key in (
                (task, ident, epoch, wanted),
                (task, ident, None, wanted),
                (None, ident, epoch, wanted),
                (None, ident, None, wanted),
            ):
                if key in self._predictions:
                    return self._predictions[key]
        return None

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.sample is None:
            raise ModelOutputError(f"replay needs the sample to look up its id in {self.path}")
        sample = request.sample
        prediction = self.lookup(sample.task, sample.id, request.epoch, request.step)
        if prediction is None:
            where = "" if request.step == DEFAULT_STEP else f" (step {request.step})"
            raise ModelOutputError(f"no prediction for sample {sample.id}{where} in {self.path}")
        return Generation(text=prediction, finish_reason="stop")

    async def aclose(self) -> None:
        return None


def check_replay(
    model: ReplayModel, known: dict[str, set[str]], wanted: dict[str, set[str]]
) -> list[str]:
    """What is wrong with a replay file for this run, one phrase per problem (empty: nothing).

    ``known`` maps each task of the run to every sample id of its data, ``wanted`` to the ids
    this run selects. Problems: lines naming no sample of the data (a typo, another version's
    ids; lines for tasks outside the run are not this run's business), several lines for one
    key, and selected samples without any line."""
    problems: list[str] = []
    covered: set[tuple[str, str]] = set()
    unknown = 0
    for task, ident, _, _ in model.replay_keys():
        if task is not None and task not in known:
            continue
        sample_id = ident.partition("#")[0] if "#" in ident else ident  # "<id>#<step>" ids
        tasks = [task] if task is not None else list(known)
        hits = [t for t in tasks if sample_id in known[t] or ident in known[t]]
        unknown += not hits
        covered.update((t, ident if ident in known[t] else sample_id) for t in hits)
    if unknown:
        problems.append(f"{unknown} line(s) name no sample of the data")
    if model.duplicates:
        first = model.duplicates[0]
        problems.append(f"{len(model.duplicates)} line(s) repeat an earlier line's key ({first})")
    missing = sum(1 for t, ids in wanted.items() for i in ids if (t, i) not in covered)
    if missing:
        problems.append(f"{missing} selected sample(s) have no prediction")
    return problems
