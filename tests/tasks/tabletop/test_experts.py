"""The experts, proven on every v0 sample: the oracle's programs, run by an in-process stand-in
for the LMP runtime (``driver.py``: nested sub-LMP calls and function generation, recursively),
reach strict success everywhere; the baseline's reach it on some templates and not others;
and no query, however hostile, makes an expert raise or write code that escapes a string."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.tabletop.driver import drive
from toolbench.sandbox.codecache import compile_program
from toolbench.tasks.tabletop import experts, generator
from toolbench.tasks.tabletop.checks import check
from toolbench.tasks.tabletop.docs import BASE_PROMPTS
from toolbench.tasks.tabletop.scenes import read_records
from toolbench.tasks.tabletop.world import Table

DATA = Path(experts.__file__).parent / "data" / "v0" / "test.jsonl"
RECORDS = read_records(DATA)
LMPS = ("tabletop_ui", "parse_obj_name", "parse_position", "parse_question",
        "transform_shape_pts", "fgen")  # fmt: skip


def _oracle(lmp: str, query: str, context: str) -> str:
    return experts.ideal_program(lmp, query, context)


def _score(record: dict[str, Any], write: Any, merged: bool = False) -> tuple[bool, bool, Any]:
    cfg = record["configs"]
    driver = drive(cfg, write, merged_scope=merged)
    result = check(record["tester_id"], cfg, Table(cfg).snapshot(), driver.table.snapshot())
    return result.success, result.strict_success, driver


def test_oracle_reaches_strict_success_on_every_sample() -> None:
    assert len(RECORDS) >= 300
    failures = []
    kinds: Counter[str] = Counter()
    programs: set[str] = set()
    for record in RECORDS:
        success, strict, driver = _score(record, _oracle)
        if not (success and strict):
            failures.append((record["tester_id"], record["configs_id"]))
        kinds.update(lmp for lmp, _ in driver.calls)
        programs.update(driver.programs)
    assert failures == []
    # and the sandbox's restricted compiler accepts every program the oracle wrote
    refused = {p: compile_program(p)[1] for p in programs if compile_program(p)[1] is not None}
    assert refused == {}
    # the plans really go through sub-LMPs and function generation
    assert kinds["parse_obj_name"] > 200 and kinds["parse_position"] >= 60
    assert kinds["fgen"] >= 80


def test_oracle_also_succeeds_with_merged_scopes() -> None:
    """The programs do not depend on the scoping rule the runtime picks."""
    for record in RECORDS[::7]:
        assert _score(record, _oracle, merged=True)[:2] == (True, True)


def test_nested_calls_and_recursive_function_generation() -> None:
    ui_1 = next(r for r in RECORDS if r["tester_id"] == "UI_1")
    calls = _score(ui_1, _oracle)[2].calls
    names = [q.split("(")[0].split("=")[-1].strip() for lmp, q in calls if lmp == "fgen"]
    # same_color is called only inside the generated pair_... function: fgen's recursion
    assert names == ["pair_blocks_with_other_colored_bowls", "same_color"]
    ui_5 = next(r for r in RECORDS if r["tester_id"] == "UI_5")
    calls = _score(ui_5, _oracle)[2].calls
    assert [lmp for lmp, _ in calls] == [
        "tabletop_ui", "parse_obj_name", "parse_position", "fgen", "fgen",
    ]  # fmt: skip


def test_the_oracle_never_reads_the_gold() -> None:
    for record in RECORDS[::5]:
        cfg = record["configs"]
        context = f"objects = {Table(cfg).get_obj_names()}"
        query = cfg["instruction"]
        assert experts.ideal_program("tabletop_ui", query, context, cfg) == experts.ideal_program(
            "tabletop_ui", query, context
        )


def test_baseline_is_a_real_attempt_right_on_some_templates_wrong_on_others() -> None:
    strict_by_template: dict[str, list[bool]] = {}
    crashed = 0
    for record in RECORDS:
        try:
            strict = _score(record, experts.baseline_program)[1]
        except Exception:  # its get_corner_name plans crash on the misspelt corner
            strict, crashed = False, crashed + 1
        strict_by_template.setdefault(record["tester_id"], []).append(strict)
    rates = {tid: sum(v) / len(v) for tid, v in strict_by_template.items()}
    assert rates["SI_0"] == rates["SI_3"] == rates["SI_7"] == 1.0
    assert 0.0 < rates["SI_6"] < 1.0  # "farthest" read as its demonstration's "nearest"
    assert rates["UI_0"] < 0.5 and rates["UI_6"] < 0.5 and rates["UI_4"] < 1.0
    assert 0.0 < rates["UI_1"] < 1.0  # pairs bowls blindly: sometimes the same colour
    assert crashed > 0
    assert 0.5 < sum(rates.values()) / len(rates) < 0.95


def test_every_template_instruction_is_recognised() -> None:
    for record in RECORDS:
        matched = experts.match_instruction(record["configs"]["instruction"])
        assert matched is not None and matched[0] == record["tester_id"]
        slots = record["configs"]["instruction_vars_dict"]
        assert all(slots[k] == v for k, v in matched[1].items())


def test_prompts_are_code_and_hold_no_test_instruction() -> None:
    instructions = {r["configs"]["instruction"].lower() for r in RECORDS}
    for lmp in LMPS:
        text = BASE_PROMPTS[lmp]
        ast.parse(text)
        assert not any(i in text.lower() for i in instructions)


@settings(max_examples=150, deadline=None)
@given(
    lmp=st.sampled_from(LMPS),
    query=st.one_of(
        st.text(max_size=300),
        st.sampled_from(
            ["Put the blocks in the red bowl", "the blocks", "a vertical line with"]
        ).map(lambda s: s + "'); say('x"),
        st.builds(lambda n: "x" * n, st.integers(0, 50_000)),
    ),
    context=st.one_of(st.text(max_size=200), st.just("objects = ['a', [[[" * 300)),
)
def test_hostile_queries_give_valid_programs(lmp: str, query: str, context: str) -> None:
    """Whatever text reaches an expert, the answer is a bounded program that parses, and a
    query never reaches the program outside a string literal."""
    for program in (
        experts.ideal_program(lmp, query, context),
        experts.baseline_program(lmp, query, context),
    ):
        assert len(program) < 20_000
        tree = ast.parse(program)
        called = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert "exec" not in called and "eval" not in called
        if lmp in ("tabletop_ui", "parse_question", "transform_shape_pts"):
            assert called <= {"say", "put_first_on_second", "parse_obj_name", "parse_position",
                              "get_obj_names", "get_corner_name", "get_side_name", "get_obj_pos",
                              "range", "len", "min", "stack_objects_in_order",
                              "pair_blocks_with_other_colored_bowls"}  # fmt: skip


@pytest.mark.parametrize(
    "signature",
    ["pts = interpolate_pts_on_line(line=line, n=3)", "stack_objects_in_order(object_names=x)",
     "unknown_helper(1, 2)", "x = (", "", "1 +* 2"],
)  # fmt: skip
def test_fgen_answers_define_the_asked_function(signature: str) -> None:
    program = experts.ideal_program("fgen", signature, "")
    tree = ast.parse(program)
    assert isinstance(tree.body[0], ast.FunctionDef)
    name = experts.p.called_name(signature)
    if name:
        assert tree.body[0].name == name


def test_oracle_also_solves_data_from_another_seed() -> None:
    """Not tuned to v0: a fresh draw of scenes and slot values is solved as well."""
    for record in generator.generate("test", 60, 7):
        assert _score(record, _oracle)[:2] == (True, True), record["tester_id"]
