"""Requests that change the shape of a sheet: deleting, inserting and appending rows, sorting,
summary rows under the data, and deleting or inserting columns. Formulas in other rows must
follow such changes, which only gspread golds keep; pandas golds are offered on formula-free
sheets."""

from __future__ import annotations

import random
from typing import Any

from toolbench.kinds.pools import article
from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.emulator import column_to_letters
from toolbench.tasks.google_sheets.kinds.common import (
    NO_FORMULAS,
    READ,
    WRITE,
    Record,
    last_letter,
    last_row,
    make_record,
    money,
    pandas_gold,
    pick_row,
    program,
    rows_of,
)

NEW_PRODUCTS = {
    "Snacks": ("Pretzel Twists", "Dried Mango", "Kettle Popcorn"),
    "Beverages": ("Coconut Water", "Peach Iced Tea", "Sparkling Lemonade"),
    "Household": ("Aluminum Foil", "Dryer Sheets", "Bleach Wipes"),
    "Personal Care": ("Mineral Sunscreen", "Dental Floss", "Body Wash"),
    "Stationery": ("Index Cards", "Mini Stapler", "Masking Tape"),
}
NEW_BUDGET_LINES = ("Pet Care", "Childcare", "Car Insurance", "Streaming", "Clothing", "Charity")
KEY_COLUMN = {
    "Products": "Product",
    "Employees": "Name",
    "Orders": "Order ID",
    "Budget": "Category",
}


def _new_product(rng: random.Random) -> tuple[list[Any], dict[str, str]]:
    category = rng.choice(sorted(NEW_PRODUCTS))
    name = rng.choice(NEW_PRODUCTS[category])
    cost = round(rng.uniform(0.8, 9.0), 2)
    price = round(int(cost * rng.uniform(1.6, 2.3)) + rng.choice((0.49, 0.99)), 2)
    stock = rng.randrange(5, 120, 5)
    row = [name, category, cost, price, stock]
    texts = {
        "product": name,
        "category": category,
        "cost": money(rng, cost),
        "price": money(rng, price),
        "stock": str(stock),
    }
    return row, texts


def _new_employee(rng: random.Random) -> tuple[list[Any], dict[str, str]]:
    taken = {row[0] for row in rows_of("Employees")[1:]}
    while (name := f"{rng.choice(wb.FIRST_NAMES)} {rng.choice(wb.LAST_NAMES)}") in taken:
        pass
    dept = rng.choice(sorted(wb.DEPARTMENTS))
    title = rng.choice(sorted(wb.DEPARTMENTS[dept]))
    low, high = wb.DEPARTMENTS[dept][title]
    salary = rng.randrange(low, high) * 1000
    row = [name, dept, title, 2025, salary]
    texts = {"name": name, "dept": dept, "title": title, "salary": money(rng, salary)}
    return row, texts


def _article(sheet: str, row: list[Any]) -> dict[str, str] | None:
    """'a'/'an' before a new employee's job title ("an Accountant")."""
    return {"a": article(row[2])} if sheet == "Employees" else None


def delete_named(rng: random.Random) -> Record:
    sheet = rng.choice(("Products", "Employees", "Orders", "Budget"))
    row, data = pick_row(rng, sheet)
    key = KEY_COLUMN[sheet]
    templates: tuple[str, ...] = {
        "Products": (
            "Remove {name} from the sheet, we stopped carrying it.",
            "Delete the row for {name}.",
            "{name} is discontinued, take its row out",
        ),
        "Employees": (
            "{name} left the company; delete their row.",
            "Remove {name} from the employee list.",
        ),
        "Orders": ("Order {name} was cancelled, delete it.", "Delete the {name} order row"),
        "Budget": (
            "We don't track {name} anymore, delete that line.",
            "Remove the {name} row from the budget",
        ),
    }[sheet]
    golds = [
        f"worksheet.delete_rows({row})",
        program(f"cell = worksheet.find({data[0]!r})", "worksheet.delete_rows(cell.row)"),
    ]
    if sheet in NO_FORMULAS:
        golds.append(
            program(
                READ,
                f"df = df[df[{key!r}] != {data[0]!r}]",
                "worksheet.clear()",
                WRITE,
            )
        )
    return make_record(rng, sheet, templates, {"name": data[0]}, golds)


def delete_rows(rng: random.Random) -> Record:
    sheet = rng.choice(sorted(wb.TABLES))
    first = rng.randrange(2, last_row(sheet))
    count = rng.choice((1, 1, 2, 3))
    last = min(first + count - 1, last_row(sheet))
    if first == last:
        templates: tuple[str, ...] = (
            "Delete row {row}.",
            "Please get rid of row {row}, it's a duplicate.",
            "Row {row} shouldn't be there. Remove it.",
        )
        values = {"row": str(first)}
        golds = [f"worksheet.delete_rows({first})", f"worksheet.delete_rows({first}, {first})"]
    else:
        templates = (
            "Delete rows {first} to {last}.",
            "Remove rows {first} through {last}, they're test entries.",
            "Get rid of rows {first}-{last}",
        )
        values = {"first": str(first), "last": str(last)}
        golds = [
            f"worksheet.delete_rows({first}, {last})",
            program(f"for n in range({last - first + 1}):", f"    worksheet.delete_rows({first})"),
        ]
    return make_record(rng, sheet, templates, values, golds)


def insert_row(rng: random.Random) -> Record:
    sheet = rng.choice(("Products", "Employees", "Budget"))
    at = rng.randrange(2, last_row(sheet) + 1)
    if sheet == "Products":
        row, values = _new_product(rng)
        templates: tuple[str, ...] = (
            "Insert {product} as a new row {at}: {category}, cost {cost}, price {price}, "
            "{stock} in stock.",
            "Add a row above row {at} for {product} ({category}, cost {cost}, sells for "
            "{price}, stock {stock}).",
        )
    elif sheet == "Employees":
        row, values = _new_employee(rng)
        templates = (
            "Insert a new row at row {at} for {name}, {a} {title} in {dept} hired this year "
            "(2025) at {salary}.",
            "Put {name} ({dept}, {title}, hired 2025, salary {salary}) in a new row {at}.",
        )
    else:
        name = rng.choice(NEW_BUDGET_LINES)
        planned = rng.randrange(40, 300, 5)
        spent = round(planned * rng.uniform(0.7, 1.3), 2)
        row = [name, planned, spent, f"=B{at}-C{at}"]
        values = {"name": name, "planned": money(rng, planned), "spent": money(rng, spent)}
        templates = (
            "Insert a {name} line at row {at} with {planned} budgeted and {spent} actual, and "
            "the same Difference formula as the other rows.",
            "New budget row {at}: {name}, budgeted {planned}, actual {spent}, difference as a "
            "formula.",
        )
        golds = [
            f"worksheet.insert_row({row!r}, {at}, value_input_option='USER_ENTERED')",
            program(
                f"worksheet.insert_row({row[:3]!r}, {at})",
                f"worksheet.update_acell('D{at}', '=B{at}-C{at}')",
            ),
        ]
        return make_record(rng, sheet, templates, {**values, "at": str(at)}, golds)
    golds = [f"worksheet.insert_row({row!r}, {at})", f"worksheet.insert_rows([{row!r}], {at})"]
    values["at"] = str(at)
    return make_record(rng, sheet, templates, values, golds, extra=_article(sheet, row))


def append_row(rng: random.Random) -> Record:
    sheet = rng.choice(("Products", "Employees", "Budget", "Orders"))
    nxt = last_row(sheet) + 1
    if sheet in NO_FORMULAS:
        row, values = _new_product(rng) if sheet == "Products" else _new_employee(rng)
        if sheet == "Products":
            templates: tuple[str, ...] = (
                "Add a new product at the bottom: {product}, {category}, cost {cost}, price "
                "{price}, {stock} in stock.",
                "We're now selling {product} ({category}). It costs us {cost}, sells for "
                "{price}, and we have {stock}. Add it to the list.",
                "Append {product} / {category} / {cost} / {price} / {stock}",
            )
        else:
            templates = (
                "We hired {name} as {a} {title} in {dept} at {salary}. Add them at the bottom "
                "with hire year 2025.",
                "Append a row for {name}: {dept}, {title}, 2025, {salary}.",
            )
        golds = [
            f"worksheet.append_row({row!r})",
            f"worksheet.insert_row({row!r}, {nxt})",
            pandas_gold(
                f"df = pd.concat([df, pd.DataFrame([{row!r}], columns=df.columns)], "
                "ignore_index=True)"
            ),
        ]
        return make_record(rng, sheet, templates, values, golds, extra=_article(sheet, row))
    if sheet == "Budget":
        name = rng.choice(NEW_BUDGET_LINES)
        planned = rng.randrange(40, 300, 5)
        spent = round(planned * rng.uniform(0.7, 1.3), 2)
        row = [name, planned, spent, f"=B{nxt}-C{nxt}"]
        values = {"name": name, "planned": money(rng, planned), "spent": money(rng, spent)}
        templates = (
            "Add a line for {name} at the end: budgeted {planned}, actual {spent}, with the "
            "difference formula like the others.",
            "Append {name} to the budget ({planned} planned, {spent} spent) and fill in "
            "Difference with a formula.",
        )
    else:
        product = rng.choice([r[0] for r in rows_of("Products")[1:]])
        customer = rng.choice(wb.CUSTOMERS)
        qty = rng.choice((1, 2, 3, 4, 5, 6, 8, 10, 12))
        order_id = f"SO-{1041 + wb.N_ORDERS}"
        date = f"2024-04-{rng.randint(19, 30)}"
        row = [
            order_id,
            date,
            customer,
            product,
            qty,
            f"=VLOOKUP(D{nxt},Products!A:D,4,FALSE)",
            f"=E{nxt}*F{nxt}",
        ]
        values = {"customer": customer, "qty": str(qty), "product": product, "date": date}
        templates = (
            "Log a new order " + order_id + ": {customer} bought {qty} x {product} on {date}. "
            "Unit price and total should be formulas like the rows above.",
            "Add order " + order_id + " at the bottom — {date}, {customer}, {product}, "
            "quantity {qty}; copy the Unit Price and Total formulas.",
        )
    width = last_letter(sheet)
    golds = [
        f"worksheet.append_row({row!r}, value_input_option='USER_ENTERED')",
        f"worksheet.update([{row!r}], 'A{nxt}:{width}{nxt}', raw=False)",
    ]
    return make_record(rng, sheet, templates, values, golds)


# ---- sorting, totals, columns ---------------------------------------------------------------


SORTS = (
    ("Products", ("Price", "Cost", "Product")),
    ("Orders", ("Total", "Customer")),
    ("Employees", ("Salary", "Name", "Department+Salary")),
    ("Monthly Sales", ("Total", "North", "South")),
    ("Grades", ("Final Exam", "Student")),
)
DIRECTIONS = {
    (True, True): ("A to Z", "alphabetically"),
    (True, False): ("Z to A", "in reverse alphabetical order"),
    (False, True): ("lowest first", "smallest to largest", "ascending"),
    (False, False): ("highest first", "largest to smallest", "descending"),
}


def sort_rows(rng: random.Random) -> Record:
    sheet, keys = rng.choice(SORTS)
    key = rng.choice(keys)
    span = f"A2:{last_letter(sheet)}{last_row(sheet)}"
    if key == "Department+Salary":
        templates: tuple[str, ...] = (
            "Sort the staff by {first} A to Z, and within each department by {second}, highest "
            "first.",
            "Order rows by {first} (alphabetical), then {second} from highest to lowest.",
        )
        golds = [
            f"worksheet.sort((2, 'asc'), (5, 'des'), range={span!r})",
            pandas_gold(
                "df = df.sort_values(['Department', 'Salary'], ascending=[True, False], "
                "kind='stable')"
            ),
        ]
        values = {"first": "department", "second": "salary"}
        return make_record(rng, sheet, templates, values, golds)
    sample = rows_of(sheet)[1][rows_of(sheet)[0].index(key)]
    text = isinstance(sample, str) and not sample.startswith("=")
    ascending = rng.random() < (0.7 if text else 0.4)
    col = rows_of(sheet)[0].index(key) + 1
    order = "asc" if ascending else "des"
    templates = (
        "Sort the rows by {column}, {direction}.",
        "Can you order the sheet by {column} ({direction})? Keep the header on top.",
        "Rearrange everything under the header by {column} {direction}",
    )
    golds = [f"worksheet.sort(({col}, {order!r}), range={span!r})"]
    # without a range, sort() leaves the frozen rows alone (Monthly Sales freezes its header)
    if sheet in wb.BOLD_HEADERS:
        golds.append(f"worksheet.sort(({col}, {order!r}))")
    else:
        golds.append(program("worksheet.freeze(rows=1)", f"worksheet.sort(({col}, {order!r}))"))
    if sheet in NO_FORMULAS:
        golds.append(
            pandas_gold(f"df = df.sort_values({key!r}, ascending={ascending}, kind='stable')")
        )
    direction = rng.choice(DIRECTIONS[(text, ascending)])
    return make_record(rng, sheet, templates, {"column": key, "direction": direction}, golds)


def aggregate_row(rng: random.Random) -> Record:
    sheet = rng.choice(("Budget", "Monthly Sales", "Grades"))
    func = "AVERAGE" if sheet == "Grades" else "SUM"
    label = rng.choice(
        ("Class Average", "Average") if sheet == "Grades" else ("Total", "Totals", "Grand Total")
    )
    last, width = last_row(sheet), len(rows_of(sheet)[0])
    letters = [column_to_letters(c) for c in range(2, width + 1)]
    row = [label, *(f"={func}({c}2:{c}{last})" for c in letters)]
    what = "the average of each column" if func == "AVERAGE" else "the sum of each column"
    templates: tuple[str, ...] = (
        "Add a row labelled {label} right under the data with " + what + " as formulas.",
        "Below the last row, put '{label}' in column A and " + what + " (formulas) next to it.",
        "I need a '{label}' row at the bottom: " + what + ", using formulas.",
    )
    nxt = last + 1
    golds = [
        f"worksheet.update([{row!r}], 'A{nxt}:{letters[-1]}{nxt}', raw=False)",
        f"worksheet.append_row({row!r}, value_input_option='USER_ENTERED')",
    ]
    return make_record(rng, sheet, templates, {"label": label}, golds)


def column_delete(rng: random.Random) -> Record:
    sheet, header = rng.choice(
        (("Products", "Cost"), ("Products", "Category"), ("Employees", "Hire Year"),
         ("Employees", "Title"), ("Orders", "Date"), ("Orders", "Customer"))
    )  # fmt: skip
    col = rows_of(sheet)[0].index(header) + 1
    templates: tuple[str, ...] = (
        "Delete the {column} column.",
        "We don't need {column} anymore, remove that whole column.",
        "Drop the {column} column from the sheet, please.",
    )
    golds = [
        f"worksheet.delete_columns({col})",
        program(f"cell = worksheet.find({header!r})", "worksheet.delete_columns(cell.col)"),
    ]
    if sheet in NO_FORMULAS:
        golds.append(
            program(READ, f"df = df.drop(columns=[{header!r}])", "worksheet.clear()", WRITE)
        )
    return make_record(rng, sheet, templates, {"column": header}, golds)


def column_insert(rng: random.Random) -> Record:
    if rng.random() < 0.5:
        sheet, after, header = "Products", "Category", rng.choice(("Supplier", "Vendor"))
        value = rng.choice(("Northwind Wholesale", "Crestline Supply", "Bayside Distributors"))
        own = "Everything here comes from {value}; add a {header} column after {after} with that."
    else:
        sheet, after, header = "Employees", "Department", rng.choice(("Office", "Location"))
        value = rng.choice(("Denver", "Austin", "Raleigh", "Columbus"))
        own = "Everybody on this list works in {value}. Add a {header} column after {after}."
    col = rows_of(sheet)[0].index(after) + 2
    n = last_row(sheet) - 1
    templates: tuple[str, ...] = (
        "Insert a new column called {header} right after {after}, with {value} on every row.",
        "Add a {header} column between {after} and {next}; fill it with {value} for all rows.",
        own,
    )
    golds = [
        f"worksheet.insert_cols([[{header!r}] + [{value!r}] * {n}], {col})",
        pandas_gold(f"df.insert({col - 1}, {header!r}, {value!r})"),
    ]
    values = {"header": header, "after": after, "value": value}
    following = rows_of(sheet)[0][col - 1]
    return make_record(rng, sheet, templates, values, golds, extra={"next": following})
