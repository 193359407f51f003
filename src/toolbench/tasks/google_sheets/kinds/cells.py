"""Requests that change values: single cells, small ranges, and edits that depend on the data
(raise prices in a category, curve scores). Conditional edits get a pandas gold and a gspread
loop gold; both must round identically, which ``rounding_agrees`` checks before a request is
kept."""

from __future__ import annotations

import random

from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.emulator import column_to_letters
from toolbench.tasks.google_sheets.kinds.common import (
    NO_FORMULAS,
    Record,
    col_letter,
    last_row,
    loop_gold,
    make_record,
    money,
    pandas_gold,
    pick_row,
    program,
    rounding_agrees,
    rows_of,
)

PRODUCT_FIELD_TEMPLATES = {
    "Stock": (
        "Set the stock for {product} to {value}.",
        "We just counted {product} and there are {value} left. Update its stock.",
        "{product} stock should read {value} now",
        "Please change the Stock of {product} to {value} units.",
        "Inventory update: {product}, {value} in stock.",
    ),
    "Price": (
        "Change the price of {product} to {value}.",
        "{product} now sells for {value}, update the sheet",
        "The new retail price for {product} is {value}.",
        "Set {product}'s price to {value} please",
    ),
    "Cost": (
        "Our supplier raised the cost of {product} to {value}. Put that in.",
        "Update the cost of {product} to {value}",
        "{product} costs us {value} now, fix the Cost column.",
    ),
}


def product_field(rng: random.Random) -> Record:
    row, (name, _, cost, price, stock) = pick_row(rng, "Products")
    field = rng.choice(("Stock", "Stock", "Price", "Cost"))
    if field == "Stock":
        new: float = rng.choice([v for v in range(0, 150, rng.choice((1, 5))) if v != stock])
        text = str(new)
    else:
        old = price if field == "Price" else cost
        new = round(old + rng.choice((-0.5, -0.3, 0.2, 0.4, 0.5, 1.0, 1.5)), 2)
        text = money(rng, new)
    col = wb.PRODUCT_HEADER.index(field) + 1
    golds = [
        f"worksheet.update_acell('{column_to_letters(col)}{row}', {new!r})",
        program(
            f"cell = worksheet.find({name!r})", f"worksheet.update_cell(cell.row, {col}, {new!r})"
        ),
        pandas_gold(f"df.loc[df['Product'] == {name!r}, {field!r}] = {new!r}"),
    ]
    values = {"product": name, "value": text}
    return make_record(rng, "Products", PRODUCT_FIELD_TEMPLATES[field], values, golds)


# (sheet, first column, last column) of plain numbers a user may overwrite by address
NUMBER_BLOCKS = (
    ("Budget", 3, 3), ("Monthly Sales", 2, 5), ("Grades", 2, 5), ("Employees", 5, 5),
    ("Orders", 5, 5),
)  # fmt: skip


def cell_set(rng: random.Random) -> Record:
    sheet, c1, c2 = rng.choice(NUMBER_BLOCKS)
    col = rng.randint(c1, c2)
    row, data = pick_row(rng, sheet)
    old = data[col - 1]
    new: float = old
    while new == old:
        if sheet == "Budget":
            new = round(old * rng.uniform(0.8, 1.2), 2)
        elif sheet == "Grades":
            new = rng.randrange(45, 101)
        elif sheet == "Orders":
            new = rng.randrange(1, 16)
        else:
            step = 500 if sheet == "Employees" else 10
            new = round(old * rng.uniform(0.8, 1.2) / step) * step
    cell = f"{column_to_letters(col)}{row}"
    templates: tuple[str, ...] = (
        "Put {value} in {cell}.",
        "Change cell {cell} to {value}",
        "{cell} has the wrong number, it should be {value}.",
        "Overwrite {cell} with {value} please",
        "Can you set {cell} to {value}?",
    )
    golds = [
        f"worksheet.update_acell({cell!r}, {new!r})",
        f"worksheet.update([[{new!r}]], {cell!r})",
        f"worksheet.update_cell({row}, {col}, {new!r})",
    ]
    return make_record(rng, sheet, templates, {"cell": cell, "value": f"{new:g}"}, golds)


def grade_fix(rng: random.Random) -> Record:
    row, data = pick_row(rng, "Grades")
    col = rng.randint(2, 5)
    assignment = wb.GRADE_HEADER[col - 1]
    old = data[col - 1]
    score = rng.choice([v for v in range(50, 101) if v != old])
    templates: tuple[str, ...] = (
        "{student} actually got {score} on the {assignment}. Please fix it.",
        "Correct {student}'s {assignment} score to {score}",
        "Regrade: {student}, {assignment}, new score {score}",
        "The {assignment} score for {student} should be {score}, not {old}.",
        "I mis-entered {student}'s {assignment}; it's {score}.",
    )
    letter = column_to_letters(col)
    golds = [
        f"worksheet.update_cell({row}, {col}, {score})",
        program(
            f"cell = worksheet.find({data[0]!r})",
            f"worksheet.update_cell(cell.row, {col}, {score})",
        ),
        f"worksheet.update_acell('{letter}{row}', {score})",
    ]
    values = {"student": data[0], "assignment": assignment.lower(), "score": str(score)}
    return make_record(rng, "Grades", templates, values, golds, extra={"old": str(old)})


RENAMES = (
    ("Products", "Stock", ("Units in Stock", "On Hand", "Qty")),
    ("Products", "Cost", ("Unit Cost", "Wholesale Cost")),
    ("Products", "Price", ("Retail Price", "Sale Price")),
    ("Employees", "Salary", ("Annual Salary", "Base Pay")),
    ("Employees", "Hire Year", ("Year Hired", "Start Year")),
    ("Budget", "Actual", ("Spent", "Actual Spend")),
    ("Budget", "Budgeted", ("Planned", "Budget")),
    ("Grades", "Final Exam", ("Final", "Exam")),
    ("Orders", "Quantity", ("Qty", "Units")),
    ("Orders", "Customer", ("Client", "Account")),
)


def header_rename(rng: random.Random) -> Record:
    sheet, old, news = rng.choice(RENAMES)
    new = rng.choice(news)
    cell = f"{col_letter(sheet, old)}1"
    templates: tuple[str, ...] = (
        "Rename the {old} column to {new}.",
        "Change the header '{old}' to '{new}'",
        'Can you call the {old} column "{new}" instead?',
        "Header fix: {old} should say {new}",
    )
    golds = [
        f"worksheet.update_acell({cell!r}, {new!r})",
        program(
            f"cell = worksheet.find({old!r})", f"worksheet.update_cell(cell.row, cell.col, {new!r})"
        ),
    ]
    if sheet in NO_FORMULAS:
        golds.append(pandas_gold(f"df = df.rename(columns={{{old!r}: {new!r}}})"))
    return make_record(rng, sheet, templates, {"old": old, "new": new}, golds)


def range_update(rng: random.Random) -> Record:
    variant = rng.choice(("sales", "grades", "budget", "orders"))
    if variant == "sales":
        region_col = rng.randint(2, 5)
        start = rng.randint(0, 9)
        old = [row[region_col - 1] for row in rows_of("Monthly Sales")[start + 1 : start + 4]]
        figures = [round(v * rng.uniform(0.9, 1.1) / 10) * 10 for v in old]
        letter = column_to_letters(region_col)
        rng_name = f"{letter}{start + 2}:{letter}{start + 4}"
        matrix = repr([[v] for v in figures])
        templates: tuple[str, ...] = (
            "Enter the revised {region} figures for {m1} to {m3}: {a}, {b} and {c}.",
            "Update {region} sales for {m1}-{m3} to {a}, {b}, {c}",
            "The {region} numbers for {m1} through {m3} were wrong; they should be {a}, {b} "
            "and {c}.",
        )
        values = {
            "region": wb.SALES_HEADER[region_col - 1],
            "m1": wb.MONTHS[start],
            "m3": wb.MONTHS[start + 2],
            **{k: str(v) for k, v in zip("abc", figures, strict=True)},
        }
        golds = [
            f"worksheet.update({matrix}, {rng_name!r})",
            f"worksheet.update({matrix}, '{letter}{start + 2}')",
            f"worksheet.batch_update([{{'range': {rng_name!r}, 'values': {matrix}}}])",
        ]
        return make_record(rng, "Monthly Sales", templates, values, golds)
    if variant == "orders":
        first = rng.randrange(2, last_row("Orders") - 1)
        ids = [rows_of("Orders")[r - 1][0] for r in (first, first + 2)]
        old = [rows_of("Orders")[r - 1][4] for r in range(first, first + 3)]
        qty = old
        while qty == old:
            qty = [rng.choice((1, 2, 3, 4, 5, 6, 8, 10, 12)) for _ in range(3)]
        matrix = repr([[q] for q in qty])
        templates = (
            "Quantities for {first} through {last} should be {a}, {b} and {c}. Fix them.",
            "Update the Quantity of orders {first}-{last} to {a}, {b}, {c}",
        )
        values = {"first": ids[0], "last": ids[1], **dict(zip("abc", map(str, qty), strict=True))}
        golds = [
            f"worksheet.update({matrix}, 'E{first}:E{first + 2}')",
            program(*(f"worksheet.update_cell({first + i}, 5, {q})" for i, q in enumerate(qty))),
        ]
        return make_record(rng, "Orders", templates, values, golds)
    if variant == "grades":
        row, data = pick_row(rng, "Grades")
        scores = [rng.randrange(55, 101) for _ in range(3)]
        while scores == data[1:4]:
            scores = [rng.randrange(55, 101) for _ in range(3)]
        templates = (
            "Enter {student}'s scores: essay {a}, lab report {b}, project {c}.",
            "For {student}, the essay is {a}, the lab report {b} and the project {c}. Update "
            "the row.",
            "{student} — Essay {a}, Lab Report {b}, Project {c}",
        )
        values = {"student": data[0], **{k: str(v) for k, v in zip("abc", scores, strict=True)}}
        golds = [
            f"worksheet.update([{scores!r}], 'B{row}:D{row}')",
            program(
                f"cell = worksheet.find({data[0]!r})",
                f"worksheet.update([{scores!r}], f'B{{cell.row}}:D{{cell.row}}')",
            ),
        ]
        return make_record(rng, "Grades", templates, values, golds)
    rows = sorted(rng.sample(range(2, last_row("Budget") + 1), 3))
    amounts = [round(rows_of("Budget")[r - 1][1] * rng.uniform(0.75, 1.25), 2) for r in rows]
    names = [rows_of("Budget")[r - 1][0] for r in rows]
    templates = (
        "Fill in the actual spending: {n1} {a}, {n2} {b}, {n3} {c}.",
        "Actuals came in: {n1} was {a}, {n2} {b} and {n3} {c}. Update column C.",
        "Update Actual for {n1} ({a}), {n2} ({b}) and {n3} ({c})",
    )
    values = {f"n{i + 1}": n for i, n in enumerate(names)}
    values.update({k: money(rng, v) for k, v in zip("abc", amounts, strict=True)})
    writes = ", ".join(
        f"{{'range': 'C{r}', 'values': [[{v!r}]]}}" for r, v in zip(rows, amounts, strict=True)
    )
    golds = [
        f"worksheet.batch_update([{writes}])",
        program(
            *(f"worksheet.update_acell('C{r}', {v!r})" for r, v in zip(rows, amounts, strict=True))
        ),
    ]
    return make_record(rng, "Budget", templates, values, golds)


# ---- edits that depend on the data ----------------------------------------------------------


def price_change(rng: random.Random) -> Record:
    rows = rows_of("Products")[1:]
    for _ in range(100):
        category = rng.choice(sorted(wb.PRODUCTS))
        pct = rng.choice((5, 8, 10, 12, 15, 20, 25))
        up = rng.random() < 0.6
        factor = 1 + pct / 100 if up else 1 - pct / 100
        prices = [r[3] for r in rows if r[1] == category]
        if rounding_agrees(prices, factor, 2):
            break
    else:
        raise ValueError("no price change rounds the same in Python and numpy")
    templates: tuple[str, ...] = (
        ("Raise the price of every {category} item by {pct}, rounded to the cent.",
         "Increase all {category} prices by {pct} (round to 2 decimals).",
         "Prices for {category} go up {pct} starting Monday; update the sheet, rounding to "
         "cents.")
        if up
        else ("Put all {category} items on sale: cut their prices by {pct}, rounded to the cent.",
              "Lower every {category} price by {pct} and round to two decimals.")
    )  # fmt: skip
    mask = f"df['Category'] == {category!r}"
    golds = [
        pandas_gold(
            f"mask = {mask}",
            f"df.loc[mask, 'Price'] = (df.loc[mask, 'Price'] * {factor!r}).round(2)",
        ),
        loop_gold(
            f"rec['Category'] == {category!r}",
            f"worksheet.update_cell(i, 4, round(rec['Price'] * {factor!r}, 2))",
        ),
    ]
    pct_text = rng.choice((f"{pct}%", f"{pct} percent"))
    return make_record(rng, "Products", templates, {"category": category, "pct": pct_text}, golds)


def restock(rng: random.Random) -> Record:
    n = rng.choice((5, 10, 15, 20, 25))
    level = rng.choice((40, 50, 60, 75, 100))
    templates: tuple[str, ...] = (
        "Any product with fewer than {n} units in stock should be restocked to {level}.",
        "We restocked everything that was under {n}: set those Stock values to {level}.",
        "For all items with stock below {n}, change the stock to {level}.",
    )
    golds = [
        pandas_gold(f"df.loc[df['Stock'] < {n}, 'Stock'] = {level}"),
        loop_gold(f"rec['Stock'] < {n}", f"worksheet.update_cell(i, 5, {level})"),
    ]
    return make_record(rng, "Products", templates, {"n": str(n), "level": str(level)}, golds)


def salary_raise(rng: random.Random) -> Record:
    if rng.random() < 0.5:
        dept = rng.choice(sorted(wb.DEPARTMENTS))
        pct = rng.choice((2, 3, 4, 5, 6))
        factor = 1 + pct / 100
        templates: tuple[str, ...] = (
            "Give everyone in {dept} a {pct} raise, rounded to the nearest dollar.",
            "{dept} salaries go up {pct} this year (whole dollars). Update them.",
        )
        values = {"dept": dept, "pct": rng.choice((f"{pct}%", f"{pct} percent"))}
        test = f"rec['Department'] == {dept!r}"
        golds = [
            pandas_gold(
                f"mask = df['Department'] == {dept!r}",
                f"df.loc[mask, 'Salary'] = (df.loc[mask, 'Salary'] * {factor!r}).round()",
            ),
            loop_gold(test, f"worksheet.update_cell(i, 5, round(rec['Salary'] * {factor!r}))"),
        ]
        return make_record(rng, "Employees", templates, values, golds)
    year = rng.randrange(2014, 2021)
    amount = rng.choice((1000, 1500, 2000, 2500, 3000))
    templates = (
        "Everyone hired in {year} or earlier gets a {amount} raise. Update their salaries.",
        "Add {amount} to the salary of each employee whose hire year is {year} or before.",
    )
    values = {"year": str(year), "amount": money(rng, amount)}
    golds = [
        pandas_gold(f"df.loc[df['Hire Year'] <= {year}, 'Salary'] += {amount}"),
        loop_gold(
            f"rec['Hire Year'] <= {year}",
            f"worksheet.update_cell(i, 5, rec['Salary'] + {amount})",
        ),
    ]
    return make_record(rng, "Employees", templates, values, golds)


def curve(rng: random.Random) -> Record:
    col = rng.randint(2, 5)
    header = wb.GRADE_HEADER[col - 1]
    k = rng.choice((2, 3, 4, 5, 8, 10))
    letter = column_to_letters(col)
    templates: tuple[str, ...] = (
        "Add {k} points to every {column} score, but don't let anything go over 100.",
        "Curve the {column}: +{k} for everyone, capped at 100.",
        "Bump all {column} scores up by {k} points (max 100).",
    )
    last = last_row("Grades")
    golds = [
        program(
            "records = worksheet.get_all_records()",
            "for i, rec in enumerate(records, start=2):",
            f"    worksheet.update_cell(i, {col}, min(100, rec[{header!r}] + {k}))",
        ),
        program(
            f"scores = worksheet.get('{letter}2:{letter}{last}', "
            "value_render_option='UNFORMATTED_VALUE')",
            f"worksheet.update([[min(100, row[0] + {k})] for row in scores], "
            f"'{letter}2:{letter}{last}')",
        ),
    ]
    return make_record(rng, "Grades", templates, {"k": str(k), "column": header.lower()}, golds)


def flag_over(rng: random.Random) -> Record:
    header = rng.choice(("Flag", "Note", "Alert"))
    flag = rng.choice(("Over budget", "OVER", "Check"))
    templates: tuple[str, ...] = (
        "Add a column E titled {header} that says {flag} for every category where we spent "
        "more than budgeted; leave the rest empty.",
        "In E1 write {header}, then mark each line that went over budget with {flag} in "
        "column E (others blank).",
    )
    last = last_row("Budget")
    golds = [
        program(
            f"worksheet.update_acell('E1', {header!r})",
            loop_gold("rec['Actual'] > rec['Budgeted']", f"worksheet.update_cell(i, 5, {flag!r})"),
        ),
        program(
            f"rows = worksheet.get('B2:C{last}', value_render_option='UNFORMATTED_VALUE')",
            f"flags = [[{flag!r} if row[1] > row[0] else ''] for row in rows]",
            f"worksheet.update([[{header!r}]] + flags, 'E1:E{last}')",
        ),
    ]
    return make_record(rng, "Budget", templates, {"header": header, "flag": flag}, golds)
