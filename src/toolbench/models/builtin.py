"""Models that need no service: the oracle (upper bound, harness check) and replay.

Replay scores predictions produced elsewhere (another harness, a hosted batch job) with this
benchmark's checkers, so results stay comparable without re-running the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest

_LINE_FORMAT = "each line must be a JSON object with 'id' and 'prediction'"

ReplayKey = tuple[str | None, str, int | None]


class OracleModel:
    """Answers with the first gold label: every checker must give it full marks."""

    name = "oracle"
    cacheable = False

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.sample is None or not request.sample.labels:
            raise ModelOutputError("oracle: the sample has no gold label")
        return Generation(text=request.sample.labels[0], finish_reason="stop")

    async def aclose(self) -> None:
        return None


def _parse_line(raw: str, where: str) -> tuple[ReplayKey, str]:
    """One replay line -> ((task, id, epoch), prediction); a UserError naming file:line if bad."""
    try:
        obj: Any = json.loads(raw)
    except json.JSONDecodeError as error:
        raise UserError(f"{where}: invalid JSON ({error.msg}); {_LINE_FORMAT}") from None
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
    return (task, str(sample_id), epoch), obj["prediction"]


class ReplayModel:
    """Answers from a JSON-lines file of ``{"id", "prediction"[, "task"][, "epoch"]}``.

    Lookup is most specific first: (task, id, epoch), (task, id), (id, epoch), (id). That way
    a file written for one task and one epoch works everywhere, and a file with per-task or
    per-epoch predictions is used precisely. A later line with the same key replaces an earlier
    one, so appending corrections works.
    """

    cacheable = False

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path.name}"
        self._predictions: dict[ReplayKey, str] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"replay file not found: {self.path}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(f"cannot read replay file {self.path}: {error}") from None
        for lineno, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                key, prediction = _parse_line(raw, f"{self.path}:{lineno}")
                self._predictions[key] = prediction

    def __len__(self) -> int:
        return len(self._predictions)

    def lookup(self, task: str | None, sample_id: str, epoch: int) -> str | None:
        for key in ((task, sample_id, epoch), (task, sample_id, None)):
            if key[0] is not None and key in self._predictions:
                return self._predictions[key]
        for key in ((None, sample_id, epoch), (None, sample_id, None)):
            if key in self._predictions:
                return self._predictions[key]
        return None

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.sample is None:
            raise ModelOutputError(f"replay needs the sample to look up its id in {self.path}")
        sample = request.sample
        prediction = self.lookup(sample.task, sample.id, request.epoch)
        if prediction is None:
            raise ModelOutputError(f"no prediction for sample {sample.id} in {self.path}")
        return Generation(text=prediction, finish_reason="stop")

    async def aclose(self) -> None:
        return None
