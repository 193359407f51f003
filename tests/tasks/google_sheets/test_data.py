"""Our google_sheets v0 data: the generator's contract, and every gold program and demonstration
run in the real sandbox on the committed workbook.

Scoring compares the question sheet's state after a prediction with the state after a gold, so
the data is only sound if each gold runs, all golds of a request agree, the request changes the
sheet at all, and near-miss programs (a row off, the wrong column, a formula over the wrong
range) do not reach the gold's state.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from toolbench.sandbox import ExecResult, SandboxPool
from toolbench.sandbox.world import WorldFactory
from toolbench.tasks.google_sheets import docs, generator
from toolbench.tasks.google_sheets.world import make_world

DATA = Path(generator.__file__).parent / "data" / "v0"
WORKBOOK = DATA / "workbook.json"
Record = dict[str, Any]


def world(sheet: str, check_format: bool) -> WorldFactory:
    return functools.partial(make_world, str(WORKBOOK), "test-data", sheet, check_format)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(2) as pool:
        yield pool


@pytest.fixture(scope="module")
def records() -> list[Record]:
    lines = (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def run_all(pool: SandboxPool, jobs: list[tuple[WorldFactory, str]]) -> list[ExecResult]:
    """Run (world, program) pairs across the pool's workers at once; results in order."""
    with ThreadPoolExecutor(max_workers=pool.workers * 2) as executor:
        return list(executor.map(lambda job: pool.run(*job), jobs))


def state_key(result: ExecResult) -> str:
    return json.dumps(result.state, sort_keys=True)


@pytest.fixture(scope="module")
def gold_runs(
    pool: SandboxPool, records: list[Record]
) -> list[tuple[ExecResult, list[ExecResult]]]:
    """Per record: (the empty program's result, each gold's result)."""
    jobs = []
    for r in records:
        factory = world(r["question_sheet_name"], r["check_format"])
        jobs += [(factory, program) for program in ["", *r["completion"]]]
    results = iter(run_all(pool, jobs))
    return [(next(results), [next(results) for _ in r["completion"]]) for r in records]


# ---- (a) the generator ----------------------------------------------------------------------


def test_generate_is_deterministic_and_train_is_disjoint() -> None:
    test = generator.generate("test", generator.DEFAULT_TEST_SIZE, generator.DEFAULT_SEED)
    assert json.dumps(test) == json.dumps(generator.generate("test", 70, 0))
    assert json.dumps(test) != json.dumps(generator.generate("test", 70, 1))
    assert len({r["prompt"].lower() for r in test}) == 70
    train = generator.generate("train", 300, 0)
    assert len(train) == 300
    assert not {r["prompt"].lower() for r in train} & {r["prompt"].lower() for r in test}
    assert generator.generate("train", 5, 0) == train[:5]
    with pytest.raises(ValueError):
        generator.generate("dev", 1, 0)


def test_committed_files_are_what_the_generator_writes(records: list[Record]) -> None:
    """data/v0 is regenerated, never edited by hand: test.jsonl and workbook.json match."""
    assert records == generator.generate("test", 70, 0)
    for name, text in generator.data_files().items():
        assert (DATA / name).read_text(encoding="utf-8") == text
    assert sorted(p.name for p in (DATA / "functions").iterdir()) == sorted(docs.FUNCTIONS)
    assert len(list((DATA / "examples").iterdir())) == len(docs.EXAMPLES)


# ---- (b) slots ------------------------------------------------------------------------------


def test_records_are_well_formed_and_slots_are_substrings() -> None:
    titles = {s["title"] for s in json.loads(WORKBOOK.read_text(encoding="utf-8"))["sheets"]}
    for r in generator.generate("test", 70, 0) + generator.generate("train", 300, 0):
        assert set(r) == {"prompt", "completion", "question_sheet_name", "check_format", "slots"}
        assert r["question_sheet_name"] in titles
        assert r["slots"], r["prompt"]
        for key, text in r["slots"].items():
            assert text and text in r["prompt"], (key, text, r["prompt"])


# ---- (c) golds and demonstrations in the sandbox --------------------------------------------


def test_every_gold_runs_agrees_and_changes_the_sheet(
    records: list[Record], gold_runs: list[tuple[ExecResult, list[ExecResult]]]
) -> None:
    for r, (empty, golds) in zip(records, gold_runs, strict=True):
        assert empty.ok, empty.error
        for program, result in zip(r["completion"], golds, strict=True):
            assert result.ok, f"{r['prompt']}\n{program}\n{result.error}"
        states = {state_key(result) for result in golds}
        assert len(states) == 1, f"golds disagree: {r['prompt']}"
        assert states != {state_key(empty)}, f"gold changes nothing: {r['prompt']}"


def test_every_demonstration_runs(pool: SandboxPool, records: list[Record]) -> None:
    assert len(docs.EXAMPLES) >= 12
    prompts = {r["prompt"] for r in records}
    jobs = [(world(sheet, True), program) for sheet, _, program in docs.DEMOS]
    for (_, query, program), result in zip(docs.DEMOS, run_all(pool, jobs), strict=True):
        assert query not in prompts
        assert result.ok, f"{query}\n{program}\n{result.error}"


# ---- (d) near misses ------------------------------------------------------------------------


def _next_letter(match: re.Match[str]) -> str:
    return f"'{chr(ord(match.group(1)) + 1)}{match.group(2)}'"


# (what goes wrong, pattern in a gold program, how to spoil it)
NEAR_MISSES: list[tuple[str, str, Callable[[re.Match[str]], str]]] = [
    ("deletes the row below", r"delete_rows\((\d+)\)", lambda m: f"delete_rows({int(m[1]) + 1})"),
    ("writes one column to the right", r"'([A-J])(\d+)'", _next_letter),
    (
        "sums one row short",
        r"SUM\(([A-Z])2:([A-Z])(\d+)\)",
        lambda m: f"SUM({m[1]}2:{m[2]}{int(m[3]) - 1})",
    ),
    (
        "counts over the wrong column",
        r"COUNTIF\(([A-Z])2:([A-Z])",
        lambda m: f"COUNTIF({chr(ord(m[1]) + 1)}2:{chr(ord(m[2]) + 1)}",
    ),
    ("sorts the wrong way", r"'des'\)", lambda m: "'asc')"),
    ("stores the formula as text", r", raw=False\)", lambda m: ")"),
    (
        "formats one column too few",
        r"format\('A1:([B-Z])1'",
        lambda m: f"format('A1:{chr(ord(m[1]) - 1)}1'",
    ),
    (
        "inserts the row one lower",
        r"insert_row\((\[.*\]), (\d+)\)",
        lambda m: f"insert_row({m[1]}, {int(m[2]) + 1})",
    ),
]


def test_near_misses_do_not_match_the_gold(
    pool: SandboxPool,
    records: list[Record],
    gold_runs: list[tuple[ExecResult, list[ExecResult]]],
) -> None:
    jobs, expected, names = [], [], []
    for name, pattern, spoil in NEAR_MISSES:
        found = 0
        for r, (_, golds) in zip(records, gold_runs, strict=True):
            gold = r["completion"][0]
            spoiled = re.sub(pattern, spoil, gold, count=1)
            if spoiled == gold:
                continue
            jobs.append((world(r["question_sheet_name"], r["check_format"]), spoiled))
            expected.append(state_key(golds[0]))
            names.append(f"{name}: {spoiled}")
            found += 1
            if found == 2:
                break
        assert found, f"no gold to spoil for {name!r}"
    for name, result, gold_state in zip(names, run_all(pool, jobs), expected, strict=True):
        # a near miss runs; it just does the wrong thing
        assert result.ok, f"{name}: {result.error}"
        assert state_key(result) != gold_state, name


def test_a_pandas_round_trip_on_a_formula_sheet_leaves_stale_totals(pool: SandboxPool) -> None:
    """Why the generator gives no pandas gold on sheets with formulas: the frame holds the
    Average values read before the edit, and writing it back replaces the formulas with them."""
    gspread = "worksheet.update_acell('B2', 40)"
    pandas = (
        "df = get_as_dataframe(worksheet, evaluate_formulas=True)\n"
        "df.loc[0, 'Essay'] = 40\n"
        "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)"
    )
    first, second = pool.run_many(world("Grades", False), [gspread, pandas])
    assert first.ok and second.ok
    assert state_key(first) != state_key(second)


# ---- (e) the committed test set -------------------------------------------------------------


def test_committed_test_set_mix(records: list[Record]) -> None:
    assert len(records) == 70
    assert sum(r["check_format"] for r in records) >= 8
    assert sum(len(r["completion"]) >= 2 for r in records) >= 20
    assert len({r["question_sheet_name"] for r in records}) == 6
    programs = "\n".join(p for r in records for p in r["completion"])
    for call in ("update_acell", "update(", "batch_update", "insert_row", "append_row",
                 "delete_rows", "delete_columns", "insert_cols", "sort(", "format(",
                 "merge_cells", "get_as_dataframe", "set_with_dataframe", "raw=False"):  # fmt: skip
        assert call in programs, call
    for func in ("SUM", "AVERAGE", "MAX", "MIN", "COUNTIF", "SUMIF", "IF", "ROUND", "VLOOKUP",
                 "CONCATENATE"):  # fmt: skip
        assert f"={func}(" in programs or f",{func}(" in programs, func
