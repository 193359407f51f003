"""tabletop's judge, shared by the task (a program's final table) and its agent world (the
table an agent's calls left): the instruction's checks, the crash outcome, and the harness's
side of a sample's LMPs. A module of its own so that the world (``agent_world.py``) is handed the
task's scorer without importing the task, and the task builds the world without a cycle.
"""

from __future__ import annotations

import functools
from typing import Any

from toolbench.core.solve import Generate
from toolbench.prompts.builder import PromptConfig
from toolbench.tasks.tabletop import checks, docs, experts
from toolbench.tasks.tabletop.session import LmpSession
from toolbench.types import Outcome, Sample, Status


def judge(sample: Sample, initial: Any, final: Any, details: dict[str, Any]) -> Outcome:
    """The instruction's checks on the final table (a program's, or an agent's calls')."""
    check = checks.check(sample.fields["tester_id"], sample.fields["configs"], initial, final)
    details["checks"] = {"success": check.success, "strict_success": check.strict_success}
    if check.notes:
        details["checks"]["notes"] = list(check.notes)
    return Outcome(
        Status.SCORED,
        success=check.success,
        metrics={"success_rate_strict": 1.0 if check.strict_success else 0.0},
        message="" if check.success else "the final table fails the instruction's check",
        details=details,
    )


def crashed(message: str, details: dict[str, Any] | None = None) -> Outcome:
    """A program that crashed (or an agent that failed): the model's error, metrics at 0."""
    return Outcome(Status.MODEL_ERROR, metrics=_zero(), message=message, details=details or {})


def session_of(sample: Sample, epoch: int, generate: Generate, config: PromptConfig) -> LmpSession:
    """The harness's side of a sample's LMPs, with the oracle's programs as ``ideal``."""
    configs = sample.fields["configs"]
    ideal = functools.partial(_ideal, experts.ideal_program, configs)
    return LmpSession(sample, epoch, generate, config, dict(docs.BASE_PROMPTS), ideal=ideal)


def objects_of(configs: dict[str, Any]) -> list[str]:
    """The objects line's names: blocks, then bowls."""
    return [*configs["block_list"], *configs["bowl_list"]]


def _zero() -> dict[str, float]:
    return {"success_rate_strict": 0.0}


def _ideal(expert: Any, configs: dict[str, Any], lmp: str, query: str, context: str) -> Any:
    """The oracle's program for one LMP prompt; None (the oracle then has no answer) if the
    expert does not know the query: real models write queries no template foresaw."""
    try:
        return expert(lmp, query, context, configs)
    except Exception:
        return None
