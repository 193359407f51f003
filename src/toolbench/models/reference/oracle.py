"""The oracle model: answers every step with its gold.

It is the ceiling a real model is read against and the harness's own check: a task whose
checker does not give the oracle full marks has a bug in its gold, its parsing or its scoring.
"""

from __future__ import annotations

from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest


class OracleModel:
    """Answers each step with its gold: the step's ``ideal`` where the task gives one (an
    episode's next action, a tool call), else the sample's first gold label. Every checker
    must give it full marks."""

    name = "oracle"
    cacheable = False

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.ideal is not None or request.ideal_tool_calls:
            calls = [dict(call) for call in request.ideal_tool_calls]
            return Generation(text=request.ideal or "", tool_calls=calls, finish_reason="stop")
        if request.sample is None or not request.sample.labels:
            raise ModelOutputError("oracle: the sample has no gold label")
        return Generation(text=request.sample.labels[0], finish_reason="stop")

    async def aclose(self) -> None:
        return None
