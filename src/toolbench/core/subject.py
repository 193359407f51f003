"""What is under test: a ``Model`` or an ``Agent``, said by its kind rather than guessed.

A model is asked by the harness (the task builds the prompt, runs what the model wrote and
scores it); an agent is a process with its own loop that reaches the task's tools itself and
leaves a world to be judged (``core.agent``). They share nothing but a name and a close, so
the runner holds a ``Subject``, one of the two, and dispatches on which it is
(``runner.engine.solve_sample``): an agent is never passed where a model is expected, and a
model is never asked whether it might be an agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolbench.core.agent import Agent
from toolbench.models.base import Model


@dataclass(frozen=True)
class ModelSubject:
    """A model under test: the task's solve loop calls it through the runner's recorder."""

    model: Model
    kind: Literal["model"] = "model"

    @property
    def name(self) -> str:
        """The model's own name (the run table's and run.json's)."""
        return self.model.name

    async def aclose(self) -> None:
        """Release what the model holds (connections, processes) once the run ends."""
        await self.model.aclose()


@dataclass(frozen=True)
class AgentSubject:
    """An agent under test: it solves each sample on the task's agent world."""

    agent: Agent
    kind: Literal["agent"] = "agent"

    @property
    def name(self) -> str:
        """The agent's own name (the run table's and run.json's)."""
        return self.agent.name

    async def aclose(self) -> None:
        """Release what the agent holds (connections, processes) once the run ends."""
        await self.agent.aclose()


Subject = ModelSubject | AgentSubject


def as_subject(given: Subject | Model) -> Subject:
    """``given`` as a subject: a subject as it is, anything else as the model it must be (the
    runner's callers that hold a bare model, such as a person answering through web_shop)."""
    if isinstance(given, (ModelSubject, AgentSubject)):
        return given
    return ModelSubject(given)
