"""The feedback scenarios (paper §6.3): an API call and its result are shown before the question.

From each complete/incomplete pair whose complete instance has a gold call:

1. ``incomplete_failed``: the incomplete instance, and the call failed. After a removal the
   arguments whose values the dialogue no longer gives are sent empty and the API reports them
   missing; after an API was replaced or removed the call names an API that is not offered and
   the service says so. Expected answer: No.
2. ``incomplete_hallucinated``: the incomplete instance, and the call succeeded with values the
   user never gave (the complete twin's gold call). Removals only: a call to an API that is
   not offered cannot succeed. Expected answer: No.
3. ``complete_failed``: the complete instance, and a correct call failed for a reason that has
   nothing to do with the request (the service was unavailable). Expected answer: Yes.

The call results are our own fixed JSON texts, so the scenarios are deterministic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from toolbench.aware.schema import Instance
from toolbench.aware.sources._calls import CallSyntaxError, parse_call

SCENARIOS = ("incomplete_failed", "incomplete_hallucinated", "complete_failed")
REMOVALS = ("utterance_removal", "slot_removal")

SUCCESS = json.dumps({"status": "success", "result": "The request was completed."})
UNAVAILABLE = json.dumps({"error": "HTTP 503: the service is temporarily unavailable"})


@dataclass(frozen=True)
class Scenario:
    name: str
    instance: Instance
    call: str
    result: str

    @property
    def expected(self) -> str:
        return "yes" if self.name == "complete_failed" else "no"


def gold_call(complete: Instance) -> str | None:
    if complete.gold_calls:
        return complete.gold_calls[0].strip()
    if complete.relevant_apis:
        return f"{complete.relevant_apis[0]}()"
    return None


def _render(name: str, arguments: dict[str, object]) -> str:
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def failed_removal_call(call: str, incomplete: Instance) -> tuple[str, str]:
    """The gold call with the values the dialogue no longer gives sent empty, and the error."""
    said = " ".join(turn.content for turn in incomplete.dialogue).lower()
    try:
        parsed = parse_call(call)
    except CallSyntaxError:
        return call, json.dumps({"error": "a required argument is missing or empty"})
    arguments = parsed.arguments()
    missing = [k for k, v in arguments.items() if str(v).lower() not in said]
    if not missing:
        return call, json.dumps({"error": "a required argument is missing or empty"})
    blanked = {k: ("" if k in missing else v) for k, v in arguments.items()}
    error = f"missing required argument(s): {', '.join(missing)}"
    return _render(parsed.name, blanked), json.dumps({"error": error})


def scenarios_for(incomplete: Instance, complete: Instance) -> list[Scenario]:
    """The incomplete-side scenarios of one pair (``complete_failed`` is made once per
    complete instance by ``complete_scenario``)."""
    call = gold_call(complete)
    if call is None:
        return []
    if incomplete.manipulation in REMOVALS:
        failed_call, error = failed_removal_call(call, incomplete)
        return [
            Scenario("incomplete_failed", incomplete, failed_call, error),
            Scenario("incomplete_hallucinated", incomplete, call, SUCCESS),
        ]
    offered = {api.name for api in incomplete.apis}
    try:
        name = parse_call(call).name
    except CallSyntaxError:
        name = next((a for a in complete.relevant_apis if a not in offered), "")
    error = json.dumps({"error": f"unknown API '{name}': it is not one of the available APIs"})
    return [Scenario("incomplete_failed", incomplete, call, error)]


def complete_scenario(complete: Instance) -> Scenario | None:
    call = gold_call(complete)
    return None if call is None else Scenario("complete_failed", complete, call, UNAVAILABLE)
