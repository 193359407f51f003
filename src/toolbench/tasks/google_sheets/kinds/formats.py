"""Formatting requests (``check_format``): bold, background colours, number formats, merges,
alignment, and formats that depend on the data. Each request names the exact range and colour
values, because formats are compared cell by cell."""

from __future__ import annotations

import random
from typing import Any

from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.kinds.common import (
    Record,
    last_letter,
    last_row,
    loop_gold,
    make_record,
    pick_row,
    program,
)

COLOURS = {
    "light gray": (0.9, 0.9, 0.9),
    "light blue": (0.8, 0.9, 1.0),
    "pale yellow": (1.0, 0.95, 0.8),
    "light green": (0.85, 0.94, 0.83),
}
PLAIN_HEADERS = tuple(s for s in wb.TABLES if s not in wb.BOLD_HEADERS)
TITLES = {
    "Products": ("Product Catalog", "Shop Inventory"),
    "Grades": ("Spring Term Grades", "Biology 101 Scores"),
    "Budget": ("Household Budget", "March Budget"),
    "Orders": ("Q1-Q2 Orders", "Wholesale Orders"),
    "Employees": ("Staff Directory", "Team Roster"),
    "Monthly Sales": ("2024 Regional Sales", "Sales by Region"),
}


def _format_golds(rng_name: str, fmt: dict[str, Any]) -> list[str]:
    return [
        f"worksheet.format({rng_name!r}, {fmt!r})",
        f"worksheet.batch_format([{{'range': {rng_name!r}, 'format': {fmt!r}}}])",
    ]


def _colour(rng: random.Random) -> tuple[str, dict[str, float], str]:
    name = rng.choice(sorted(COLOURS))
    red, green, blue = COLOURS[name]
    text = rng.choice((f"RGB {red:g}, {green:g}, {blue:g}", f"red {red:g}, green {green:g}, "
                       f"blue {blue:g}"))  # fmt: skip
    return name, {"red": red, "green": green, "blue": blue}, text


def bold(rng: random.Random) -> Record:
    sheet = rng.choice(PLAIN_HEADERS)
    if rng.random() < 0.7:
        span = f"A1:{last_letter(sheet)}1"
        templates: tuple[str, ...] = (
            "Make the header row ({range}) bold.",
            "Bold the column headers in {range}.",
            "Please put {range}, the headers, in bold",
        )
    else:
        span = f"A2:A{last_row(sheet)}"
        templates = ("Bold the entries in column A ({range}).", "Make {range} bold, please.")
    fmt = {"textFormat": {"bold": True}}
    return make_record(rng, sheet, templates, {"range": span}, _format_golds(span, fmt), True)


def background(rng: random.Random) -> Record:
    sheet = rng.choice(sorted(wb.TABLES))
    span = f"A1:{last_letter(sheet)}1"
    name, colour, text = _colour(rng)
    templates: tuple[str, ...] = (
        "Give the header row {range} a {colour} background ({rgb}).",
        "Shade {range} {colour}: {rgb}.",
        "Set the background of {range} to {colour} ({rgb})",
    )
    fmt = {"backgroundColor": colour}
    golds = _format_golds(span, fmt)
    return make_record(
        rng, sheet, templates, {"range": span, "rgb": text}, golds, True, {"colour": name}
    )


NUMBER_FORMATS = (
    ("Products", "D", "D", "CURRENCY", "$#,##0.00"),
    ("Products", "C", "D", "CURRENCY", "$#,##0.00"),
    ("Orders", "F", "G", "CURRENCY", "$#,##0.00"),
    ("Employees", "E", "E", "CURRENCY", "$#,##0"),
    ("Budget", "B", "D", "CURRENCY", "$#,##0.00"),
    ("Grades", "F", "F", "NUMBER", "0.0"),
    ("Monthly Sales", "B", "F", "NUMBER", "#,##0"),
)


def number_format(rng: random.Random) -> Record:
    sheet, c1, c2, kind, pattern = rng.choice(NUMBER_FORMATS)
    span = f"{c1}2:{c2}{last_row(sheet)}"
    noun = "currency" if kind == "CURRENCY" else "a number"
    templates: tuple[str, ...] = (
        "Format {range} as " + noun + " with the pattern {pattern}.",
        "Show {range} as " + noun + " using the number format {pattern}",
        "Can you apply the {pattern} "
        + ("currency" if kind == "CURRENCY" else "number")
        + " format to {range}?",
    )
    fmt = {"numberFormat": {"type": kind, "pattern": pattern}}
    values = {"range": span, "pattern": pattern}
    return make_record(rng, sheet, templates, values, _format_golds(span, fmt), True)


def highlight_row(rng: random.Random) -> Record:
    sheet = rng.choice(("Grades", "Employees", "Products"))
    row, data = pick_row(rng, sheet)
    width = last_letter(sheet)
    name, colour, text = _colour(rng)
    fmt = {"backgroundColor": colour}
    templates: tuple[str, ...] = (
        "Highlight {name}'s whole row in {colour} ({rgb}).",
        "Make the row for {name} stand out with a {colour} background, {rgb}.",
        "Shade {name}'s row {colour} ({rgb})",
    )
    golds = [
        f"worksheet.format('A{row}:{width}{row}', {fmt!r})",
        program(
            f"cell = worksheet.find({data[0]!r})",
            f"worksheet.format(f'A{{cell.row}}:{width}{{cell.row}}', {fmt!r})",
        ),
    ]
    values = {"name": data[0], "rgb": text}
    return make_record(rng, sheet, templates, values, golds, True, {"colour": name})


def red_text(rng: random.Random) -> Record:
    """Red text on the cells that meet a condition: the program must read values first."""
    variant = rng.choice(("budget", "stock", "grades", "orders"))
    fmt = {"textFormat": {"foregroundColor": {"red": 1, "green": 0, "blue": 0}}}
    if variant == "budget":
        sheet, letter, test = "Budget", "D", "rec['Difference'] < 0"
        values: dict[str, str] = {}
        templates: tuple[str, ...] = (
            "Turn the Difference cell red ({rgb}) for every category that went over budget.",
            "Any negative Difference should show in red text, {rgb}.",
        )
    elif variant == "stock":
        n = rng.choice((10, 15, 20, 30))
        sheet, letter, test, values = "Products", "E", f"rec['Stock'] < {n}", {"n": str(n)}
        templates = (
            "Color the Stock cell red ({rgb}) for products with fewer than {n} units.",
            "Make low stock numbers (under {n}) red text, {rgb}.",
        )
    elif variant == "orders":
        n = rng.choice((50, 75, 100))
        sheet, letter, test, values = "Orders", "G", f"rec['Total'] > {n}", {"n": f"${n}"}
        templates = (
            "Make the Total red ({rgb}) for every order over {n}.",
            "Orders above {n} should have their Total in red text, {rgb}.",
        )
    else:
        n = rng.choice((60, 65, 70))
        sheet, letter, test, values = "Grades", "E", f"rec['Final Exam'] < {n}", {"n": str(n)}
        templates = (
            "Show final exam scores below {n} in red text ({rgb}).",
            "Flag failing finals (under {n}) by making those cells' text red, {rgb}.",
        )
    values["rgb"] = rng.choice(("RGB 1, 0, 0", "red 1, green 0, blue 0"))
    golds = [
        loop_gold(test, f"worksheet.format(f'{letter}{{i}}', {fmt!r})"),
        program(
            "records = worksheet.get_all_records()",
            f"cells = [f'{letter}{{i}}' for i, rec in enumerate(records, start=2) if {test}]",
            f"worksheet.format(cells, {fmt!r})",
        ),
    ]
    return make_record(rng, sheet, templates, values, golds, True)


def merged_title(rng: random.Random) -> Record:
    sheet = rng.choice(sorted(wb.TABLES))
    title = rng.choice(TITLES[sheet])
    span = f"A1:{last_letter(sheet)}1"
    templates: tuple[str, ...] = (
        "Insert a title row at the very top that says {title} and merge it across {range}.",
        "Add '{title}' as a new first row, merged over {range}.",
        "Put a row above the headers with the title {title}, then merge {range}.",
    )
    golds = [
        program(f"worksheet.insert_row([{title!r}], 1)", f"worksheet.merge_cells({span!r})"),
        program(f"worksheet.insert_rows([[{title!r}]], 1)", f"worksheet.merge_cells({span!r})"),
    ]
    return make_record(rng, sheet, templates, {"title": title, "range": span}, golds, True)


def text_style(rng: random.Random) -> Record:
    sheet = rng.choice(PLAIN_HEADERS)
    header_span = f"A1:{last_letter(sheet)}1"
    style = rng.choice(("center", "italic", "size"))
    fmt: dict[str, Any]
    if style == "center":
        span, fmt = header_span, {"horizontalAlignment": "CENTER"}
        templates: tuple[str, ...] = (
            "Center the headers in {range}.",
            "Center-align {range}, the header row.",
        )
        values = {"range": span}
    elif style == "italic":
        span, fmt = f"A2:A{last_row(sheet)}", {"textFormat": {"italic": True}}
        templates = ("Italicize column A's entries ({range}).", "Make {range} italic.")
        values = {"range": span}
    else:
        size = rng.choice((11, 12, 14))
        span, fmt = header_span, {"textFormat": {"fontSize": size}}
        templates = (
            "Set the font size of the header row {range} to {size}.",
            "Make {range} font size {size}",
        )
        values = {"range": span, "size": str(size)}
    return make_record(rng, sheet, templates, values, _format_golds(span, fmt), True)
