"""Seeded template generator for google_sheets test and training data.

Each record is ``{"prompt", "completion": [gold programs], "question_sheet_name", "check_format",
"slots"}``: a request a spreadsheet user would type about one sheet of our workbook
(``workbook.py``), and programs that carry it out. Every gold of a record must leave the sheet in
the same state (the scorer compares the sheet read back as a dataframe, plus formats when
``check_format``), so a gold is only offered where it provably agrees: pandas round trips are
given for sheets without formulas (writing a frame back replaces formulas with the values read
before the edit, which would leave stale totals), and rounding is only asked for where Python's
and numpy's rounding give the same cents. ``slots`` maps each piece of information the request
must supply (cell, value, column, threshold ...) to the exact query substring that supplies it.

The request kinds live in ``kinds/``; the test set is a fixed mix of them (``SCHEDULE``, 70 in
all) in seeded order, so every kind is covered at every seed. Output is a pure function of
(split, n, seed): the only randomness is a ``random.Random`` seeded from them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.kinds import cells, formats, formulas, structure
from toolbench.tasks.google_sheets.kinds.common import Record

TASK = "google_sheets"
DEFAULT_TEST_SIZE = 70
DEFAULT_SEED = 0

Kind = Callable[[random.Random], Record]
# (kind, how many of the 70 default test records)
SCHEDULE: tuple[tuple[Kind, int], ...] = (
    # values
    (cells.product_field, 3), (cells.cell_set, 3), (cells.grade_fix, 2),
    (cells.header_rename, 2), (cells.range_update, 3),
    (cells.price_change, 2), (cells.restock, 1), (cells.salary_raise, 2), (cells.curve, 1),
    (cells.flag_over, 1),
    # formulas
    (formulas.sum_cell, 2), (formulas.average_cell, 2), (formulas.max_cell, 1),
    (formulas.min_cell, 1),
    (formulas.countif_cell, 2), (formulas.sumif_cell, 2), (formulas.vlookup, 2),
    (formulas.if_column, 2), (formulas.round_column, 1), (formulas.concatenate_column, 1),
    (formulas.arithmetic_column, 3),
    # rows, columns, order
    (structure.delete_named, 3), (structure.delete_rows, 2), (structure.insert_row, 3),
    (structure.append_row, 3), (structure.sort_rows, 4), (structure.aggregate_row, 3),
    (structure.column_delete, 2), (structure.column_insert, 2),
    # formats (check_format)
    (formats.bold, 2), (formats.background, 1), (formats.number_format, 2),
    (formats.highlight_row, 1), (formats.red_text, 1), (formats.merged_title, 1),
    (formats.text_style, 1),
)  # fmt: skip
MAX_TRIES = 30  # fresh draws of one kind before moving on (its phrasings may be used up)


def _round_of_kinds(rng: random.Random) -> list[Kind]:
    kinds = [kind for kind, count in SCHEDULE for _ in range(count)]
    rng.shuffle(kinds)
    return kinds


def generate(split: str, n: int, seed: int) -> list[Record]:
    """``n`` records for ``split`` ('test' or 'train'); the same arguments give the same list.

    Kinds come in seeded rounds of the whole schedule, so the default test set holds exactly
    the mix above. No two records of a split share a query or a first gold program (the same
    edit asked twice in other words would only weigh that edit double); train uses its own
    random stream and never repeats a query of the default test set for the same seed."""
    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', not {split!r}")
    rng = random.Random(f"{TASK}-{split}-{seed}")
    seen: set[str] = set()  # queries, and first golds: a rephrased request is no new request
    if split == "train":
        seen = {r["prompt"].lower() for r in generate("test", DEFAULT_TEST_SIZE, seed)}
    records: list[Record] = []
    stale_rounds = 0
    while len(records) < n:
        before = len(records)
        for kind in _round_of_kinds(rng):
            for _ in range(MAX_TRIES):
                record = kind(rng)
                keys = {record["prompt"].lower(), _gold_key(record)}
                if not keys & seen:
                    seen |= keys
                    records.append(record)
                    break
            if len(records) == n:
                break
        stale_rounds = stale_rounds + 1 if len(records) == before else 0
        if stale_rounds > 2:
            raise ValueError(f"only {len(records)} distinct {split} records can be generated")
    return records


def _gold_key(record: Record) -> str:
    return f"{record['question_sheet_name']}\0{record['completion'][0]}"


def data_files() -> dict[str, str]:
    """The workbook every question is about, stored beside test.jsonl (byte-stable JSON)."""
    book = wb.build_workbook().to_dict()
    return {"workbook.json": json.dumps(book, indent=1, ensure_ascii=False) + "\n"}
