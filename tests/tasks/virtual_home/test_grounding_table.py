"""The original virtual_home grounding and LCS rules, pinned by hand-computed cases.

Every expected value below was worked out by hand from the rules (clean quotes/semicolons,
drop a leading "N." list number, strip, API name = text before the first "(", arity against
the allow-list entry, stop at a line starting with "Task:", keep non-executable lines for
LCS, LCS over the longer side, best over labels with the first label winning ties).
"""

from __future__ import annotations

import pytest

from toolbench.errors import UserError
from toolbench.tasks.virtual_home.grounding import check_labels, ground, lcs_length, score_plan
from toolbench.tasks.virtual_home.metrics import aggregate
from toolbench.types import Outcome, Status

ALLOW = {
    "Agent.WalkTo": {"object": ["kitchen", "living_room", "table", "sink"]},
    "Agent.Find": {"object": ["cup", "plate", "table", "sink"]},
    "Agent.Grab": {"object": ["cup", "plate"]},
    "Agent.Put": {"object1": ["cup", "plate"], "object2": ["table", "sink"]},
    "Agent.StandUp": {},
    "Agent.Open": {"object": ["fridge"]},
}
W, F, G, P = (
    "Agent.WalkTo(kitchen)",
    "Agent.Find(cup)",
    "Agent.Grab(cup)",
    "Agent.Put(cup, table)",
)
GOLD = "\n".join((W, F, G, P))
GOLD2 = "Agent.WalkTo(kitchen)\nAgent.Find(plate)\nAgent.Grab(plate)\nAgent.Put(plate, sink)"

# (case id, prediction, executable, lcs against [GOLD])
TABLE = [
    ("exact", GOLD, True, 1.0),
    ("empty output counts executable", "", True, 0.0),
    ("only blank lines", "\n \n\t\n", True, 0.0),
    ("numbered lines", f"1. {W}\n2. {F}\n3. {G}\n4. {P}", True, 1.0),
    ("number without space", f"1.{W}\n2.{F}\n3.{G}\n4.{P}", True, 1.0),
    ("two-digit number", f"10. {W}\n11. {F}\n12. {G}\n13. {P}", True, 1.0),
    ("number with paren is not a list number", f"1) {W}\n{F}\n{G}\n{P}", False, 0.75),
    ("double quotes removed", f'Agent.WalkTo("kitchen")\n{F}\n{G}\n{P}', True, 1.0),
    ("single quotes and semicolon removed", "Agent.WalkTo('kitchen');", True, 0.25),
    ("space before parenthesis", f"Agent.WalkTo (kitchen)\n{F}\n{G}\n{P}", False, 0.75),
    ("two arguments to a one-object action", "Agent.Grab(cup, table)", False, 0.0),
    ("one argument to a two-object action", f"{W}\n{F}\n{G}\nAgent.Put(cup)", False, 0.75),
    ("empty argument to a one-object action", "Agent.Grab()", False, 0.0),
    ("empty argument to a no-argument action", "Agent.StandUp()", True, 0.0),
    ("blank argument to a no-argument action", "Agent.StandUp( )", True, 0.0),
    ("argument to a no-argument action", "Agent.StandUp(cup)", False, 0.0),
    ("three arguments", "Agent.Put(cup, table, sink)", False, 0.0),
    ("prose line first", f"Sure, here is the plan:\n{GOLD}", False, 0.8),
    ("echoed Actions header", f"Actions:\n{GOLD}", False, 0.8),
    ("echoed Action header", f"Action:\n{GOLD}", False, 0.8),
    ("code fence", f"```\n{GOLD}\n```", False, 4 / 6),
    ("python code fence", f"```python\n{GOLD}\n```", False, 4 / 6),
    ("Task: truncation", f"{GOLD}\nTask: Wash the cup\nAgent.Grab(plate)", True, 1.0),
    ("indented Task: truncates", f"{GOLD}\n   Task: next\nnot an action", True, 1.0),
    ("Task: first line leaves nothing", f"Task: Wash the cup\n{GOLD}", True, 0.0),
    ("quoted Task: does not truncate", f'{GOLD}\n"Task: next"', False, 0.8),
    ("blank lines between actions", f"{W}\n\n\n{F}", True, 0.5),
    ("windows line endings", f"{W}\r\n{F}\r\n", True, 0.5),
    ("indented lines", f"    {W}\n\t{F}\n  {G}\n {P}", True, 1.0),
    ("spaces inside parentheses", f"{W}\n{F}\n{G}\nAgent.Put( cup ,  table )", True, 0.75),
    ("no space after comma", f"{W}\n{F}\n{G}\nAgent.Put(cup,table)", True, 0.75),
    ("text after the closing parenthesis", f"{W}\n{F}\nAgent.Grab(cup) # take it\n{P}", True, 0.75),
    ("doubled closing parenthesis", f"{W}\n{F}\nAgent.Grab(cup))\n{P}", True, 0.75),
    ("unknown action", "Agent.Fly(cup)", False, 0.0),
    ("lower-case action", f"agent.walkto(kitchen)\n{F}\n{G}\n{P}", False, 0.75),
    ("object case matters", f"{W}\n{F}\nAgent.Grab(Cup)\n{P}", False, 0.75),
    ("object outside the allow-list", f"{W}\n{F}\nAgent.Grab(table)\n{P}", False, 0.75),
    ("swapped two-object arguments", f"{W}\n{F}\n{G}\nAgent.Put(table, cup)", False, 0.75),
    ("no parentheses", f"Agent.WalkTo kitchen\n{F}\n{G}\n{P}", False, 0.75),
    ("missing closing parenthesis", f"Agent.WalkTo(kitchen\n{F}\n{G}\n{P}", False, 0.75),
    ("Step prefix", f"Step 1: {W}\n{F}\n{G}\n{P}", False, 0.75),
    ("bullet prefix", f"- {W}\n- {F}\n- {G}\n- {P}", False, 0.0),
    ("a quotes-only line is non-executable but dropped", f'""\n{GOLD}', False, 1.0),
    ("a semicolon-only line likewise", f";\n{GOLD}", False, 1.0),
    ("reordered steps", f"{F}\n{W}\n{G}\n{P}", True, 0.75),
    ("one extra step", f"{GOLD}\nAgent.Find(table)", True, 0.8),
    ("the plan twice", f"{GOLD}\n{GOLD}", True, 0.5),
    ("prefix of the gold", f"{W}\n{F}", True, 0.5),
    ("the other gold's plan", GOLD2, True, 0.25),
]


@pytest.mark.parametrize(
    ("case", "prediction", "executable", "lcs"), TABLE, ids=[t[0] for t in TABLE]
)
def test_grounding_and_lcs_table(case: str, prediction: str, executable: bool, lcs: float) -> None:
    result = score_plan(prediction, [GOLD], ALLOW)
    assert result.grounded.executable is executable, case
    assert result.score == pytest.approx(lcs), case


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 40


def test_non_executable_lines_are_reported_cleaned() -> None:
    grounded = ground(f"1. Actions:\n'Agent.Fly(cup)';\n{W}\n\"\"", ALLOW)
    assert grounded.non_executable == ("Actions:", "Agent.Fly(cup)", "")
    assert grounded.lines == ("Actions:", "Agent.Fly(cup)", W)


@pytest.mark.parametrize(
    ("prediction", "labels", "score", "closest"),
    [
        (GOLD2, [GOLD, GOLD2], 1.0, 1),
        (GOLD, [GOLD, GOLD], 1.0, 0),  # ties keep the first label
        (W, [GOLD, f"{W}\n{F}"], 0.5, 1),
        (W, ['Agent.WalkTo("kitchen")'], 1.0, 0),  # labels are cleaned too
        ("Agent.Fly(x)", [GOLD, GOLD2], 0.0, 0),  # all zero: the first label
    ],
)
def test_best_over_labels(prediction: str, labels: list[str], score: float, closest: int) -> None:
    result = score_plan(prediction, labels, ALLOW)
    assert result.score == pytest.approx(score)
    assert result.closest_label == closest


def test_lcs_length() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    assert lcs_length([], ["a"]) == 0


def test_bad_gold_names_the_record() -> None:
    check_labels([GOLD, GOLD2], ALLOW, "t.jsonl:3")
    with pytest.raises(UserError, match=r"t\.jsonl:3: gold plan 2 line 'Agent.Grab\(table\)'"):
        check_labels([GOLD, "Agent.Grab(table)"], ALLOW, "t.jsonl:3")
    with pytest.raises(UserError, match=r"t\.jsonl:4: gold plan 1 has no action line"):
        check_labels(["Task: x"], ALLOW, "t.jsonl:4")


def _scored(metrics: dict[str, float]) -> Outcome:
    return Outcome(status=Status.SCORED, metrics=metrics)


def test_aggregate_denominators() -> None:
    outcomes = [
        _scored({"executability_rate": 1.0, "lcs_score": 1.0, "lcs_score_if_executable": 1.0}),
        _scored({"executability_rate": 1.0, "lcs_score": 0.5, "lcs_score_if_executable": 0.5}),
        _scored({"executability_rate": 0.0, "lcs_score": 0.8}),
        Outcome(status=Status.MODEL_ERROR),
        Outcome(status=Status.INFRA_ERROR),
    ]
    result = aggregate(outcomes)
    assert result["executability_rate"] == pytest.approx(2 / 4)
    assert result["lcs_score"] == pytest.approx((1.0 + 0.5 + 0.8 + 0.0) / 4)
    assert result["lcs_score_if_executable"] == pytest.approx(0.75)
    assert result["goal_success"] == 0.0  # only the model error defines it


def test_lcs_if_executable_is_undefined_when_nothing_is_executable() -> None:
    result = aggregate([_scored({"executability_rate": 0.0, "lcs_score": 0.4})])
    assert result["executability_rate"] == 0.0 and result["lcs_score"] == pytest.approx(0.4)
    assert "lcs_score_if_executable" not in result
    assert aggregate([]) == {}
