"""Requests that write formulas: one result cell (SUM, AVERAGE, MAX/MIN, COUNTIF, SUMIF,
VLOOKUP) or a whole new column with one formula per row (IF, ROUND, CONCATENATE, arithmetic).
Where a pandas column gives bit-identical values on a formula-free sheet it is a gold too."""

from __future__ import annotations

import random

from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.emulator import column_to_letters
from toolbench.tasks.google_sheets.kinds.common import (
    Record,
    col_letter,
    column_golds,
    formula_golds,
    last_row,
    make_record,
    pandas_gold,
    pick_row,
    rows_of,
)


def _below(rng: random.Random, sheet: str, col: str) -> str:
    return f"{col}{last_row(sheet) + rng.choice((1, 2, 2, 3))}"


def sum_cell(rng: random.Random) -> Record:
    sheet = rng.choice(("Budget", "Monthly Sales", "Orders", "Products"))
    header = {
        "Budget": rng.choice(("Budgeted", "Actual")),
        "Monthly Sales": rng.choice(wb.SALES_HEADER[1:]),
        "Orders": rng.choice(("Quantity", "Total")),
        "Products": "Stock",
    }[sheet]
    col = col_letter(sheet, header)
    cell = _below(rng, sheet, col)
    templates: tuple[str, ...] = (
        "In {cell}, add a formula that totals the {column} column.",
        "Put the sum of {column} in {cell} as a formula",
        "I need a SUM of the {column} column in {cell}.",
        "Add up everything under {column} and show it in {cell}, using a formula.",
    )
    golds = formula_golds(cell, f"=SUM({col}2:{col}{last_row(sheet)})")
    return make_record(rng, sheet, templates, {"cell": cell, "column": header}, golds)


def average_cell(rng: random.Random) -> Record:
    sheet = rng.choice(("Grades", "Products", "Employees"))
    header = {
        "Grades": rng.choice(wb.GRADE_HEADER[1:5]),
        "Products": rng.choice(("Price", "Cost")),
        "Employees": "Salary",
    }[sheet]
    col = col_letter(sheet, header)
    cell = _below(rng, sheet, col)
    templates: tuple[str, ...] = (
        "In {cell}, calculate the average {column} with a formula.",
        "Add an AVERAGE formula for the {column} column in cell {cell}",
        "What's the mean {column}? Put a formula for it in {cell}.",
    )
    golds = formula_golds(cell, f"=AVERAGE({col}2:{col}{last_row(sheet)})")
    return make_record(rng, sheet, templates, {"cell": cell, "column": header}, golds)


def max_cell(rng: random.Random) -> Record:
    return _extreme(rng, "MAX")


def min_cell(rng: random.Random) -> Record:
    return _extreme(rng, "MIN")


def _extreme(rng: random.Random, func: str) -> Record:
    sheet = rng.choice(("Monthly Sales", "Products", "Employees"))
    header = {
        "Monthly Sales": rng.choice(wb.SALES_HEADER[1:]),
        "Products": rng.choice(("Price", "Stock")),
        "Employees": "Salary",
    }[sheet]
    col = col_letter(sheet, header)
    cell = _below(rng, sheet, col)
    word = rng.choice({"MAX": ("highest", "largest", "top"), "MIN": ("lowest", "smallest")}[func])
    templates: tuple[str, ...] = (
        "In {cell}, show the {which} {column} using a formula.",
        "Put a formula in {cell} that finds the {which} value in {column}",
        "I want the {which} {column} in {cell} (formula, please).",
    )
    golds = formula_golds(cell, f"={func}({col}2:{col}{last_row(sheet)})")
    values = {"cell": cell, "which": word, "column": header}
    return make_record(rng, sheet, templates, values, golds)


def countif_cell(rng: random.Random) -> Record:
    variant = rng.choice(("category", "grades", "department"))
    if variant == "grades":
        sheet, header = "Grades", rng.choice(wb.GRADE_HEADER[1:5])
        n = rng.choice((60, 70, 75, 80, 85, 90))
        col = col_letter(sheet, header)
        cell = _below(rng, sheet, col)
        templates: tuple[str, ...] = (
            "In {cell}, count how many students scored {n} or more on the {column}.",
            "Use COUNTIF in {cell} to count {column} scores of at least {n}",
            "How many {column} scores are {n} or higher? Formula in {cell}.",
        )
        formula = f'=COUNTIF({col}2:{col}{last_row(sheet)},">={n}")'
        values = {"cell": cell, "n": str(n), "column": header.lower()}
        return make_record(rng, sheet, templates, values, formula_golds(cell, formula))
    sheet, header = (
        ("Products", "Category") if variant == "category" else ("Employees", "Department")
    )
    value = rng.choice(sorted({row[1] for row in rows_of(sheet)[1:]}))
    col = col_letter(sheet, header)
    cell = f"{rng.choice(('G', 'H'))}{rng.randint(2, 5)}"
    noun = "products" if sheet == "Products" else "people"
    templates = (
        "In {cell}, count how many " + noun + " are in {value} with a formula.",
        "Put a COUNTIF in {cell} that counts the {value} rows",
        "How many " + noun + " do we have in {value}? Show it in {cell} using COUNTIF.",
    )
    formula = f'=COUNTIF({col}2:{col}{last_row(sheet)},"{value}")'
    return make_record(
        rng, sheet, templates, {"cell": cell, "value": value}, formula_golds(cell, formula)
    )


def sumif_cell(rng: random.Random) -> Record:
    variant = rng.choice(("customer", "product", "category", "department"))
    if variant in ("customer", "product"):
        sheet = "Orders"
        key_header = "Customer" if variant == "customer" else "Product"
        sum_header = rng.choice(("Quantity", "Total"))
        options = sorted({row[wb.ORDER_HEADER.index(key_header)] for row in rows_of(sheet)[1:]})
    elif variant == "category":
        sheet, key_header, sum_header = "Products", "Category", "Stock"
        options = sorted(wb.PRODUCTS)
    else:
        sheet, key_header, sum_header = "Employees", "Department", "Salary"
        options = sorted(wb.DEPARTMENTS)
    value = rng.choice(options)
    key, col = col_letter(sheet, key_header), col_letter(sheet, sum_header)
    cell = f"{column_to_letters(len(rows_of(sheet)[0]) + 2)}{rng.randint(2, 4)}"
    last = last_row(sheet)
    formula = f'=SUMIF({key}2:{key}{last},"{value}",{col}2:{col}{last})'
    templates: tuple[str, ...] = (
        "In {cell}, total the {column} for {value} with a SUMIF formula.",
        "Use SUMIF in {cell} to add up {column} where {key} is {value}",
        "What's the total {column} for {value}? Put a formula in {cell}.",
    )
    noun = {"Total": "order amount", "Quantity": "quantity"}.get(sum_header, sum_header.lower())
    values = {"cell": cell, "column": noun, "value": value}
    golds = formula_golds(cell, formula)
    return make_record(rng, sheet, templates, values, golds, extra={"key": key_header.lower()})


def vlookup(rng: random.Random) -> Record:
    variant = rng.choice(("salary", "price", "column"))
    if variant == "column":
        header = rng.choice(("Category", "In Stock"))
        index = 2 if header == "Category" else 5
        templates: tuple[str, ...] = (
            "Add a column titled '{header}' in H that looks up each order's product on the "
            "Products sheet with VLOOKUP.",
            "Use VLOOKUP to pull every product's {header} from the Products sheet into column "
            "H, with the header {header}.",
        )
        golds = column_golds("Orders", "H", header, f"=VLOOKUP(D{{r}},Products!A:E,{index},FALSE)")
        return make_record(rng, "Orders", templates, {"header": header}, golds)
    if variant == "salary":
        sheet, (_, data) = "Employees", pick_row(rng, "Employees")
        formula = f'=VLOOKUP("{data[0]}",A2:E{last_row(sheet)},5,FALSE)'
        what = "salary"
    else:
        sheet, (_, data) = "Orders", pick_row(rng, "Products")
        formula = f'=VLOOKUP("{data[0]}",Products!A2:D{last_row("Products")},4,FALSE)'
        what = "price"
    cell = f"{rng.choice(('H', 'I', 'J'))}{rng.randint(2, 6)}"
    if sheet == "Employees":
        cell = "G" + cell[1:]
    templates = (
        "In {cell}, use VLOOKUP to pull up the " + what + " of {name}.",
        "Look up {name}'s " + what + " with a VLOOKUP formula in {cell}",
        "Put a formula in {cell} that finds the " + what + " for {name} (VLOOKUP).",
    )
    if sheet == "Orders":
        templates = tuple(
            t.replace("(VLOOKUP)", "on the Products sheet (VLOOKUP)") for t in templates
        )
    values = {"cell": cell, "name": data[0]}
    return make_record(rng, sheet, templates, values, formula_golds(cell, formula))


# ---- formula columns ------------------------------------------------------------------------


def if_column(rng: random.Random) -> Record:
    variant = rng.choice(("grades", "budget", "products"))
    if variant == "grades":
        sheet, col, header = "Grades", "G", rng.choice(("Result", "Pass/Fail", "Status"))
        n, pos, neg = rng.choice((60, 65, 70)), "Pass", "Fail"
        source = rng.choice(("Final Exam", "Average"))
        test = f"{col_letter(sheet, source)}{{r}}>={n}"
        templates: tuple[str, ...] = (
            "Add a {header} column in G: {pos} if the " + source.lower() + " is {n} or more, "
            "otherwise {neg}. Use an IF formula.",
            "In column G, put '{header}' as the header and an IF formula per student that shows "
            "{pos} when the " + source + " is at least {n} and {neg} otherwise.",
        )
    elif variant == "budget":
        sheet, col, header = "Budget", "E", rng.choice(("Status", "Check", "Over?"))
        n, pos, neg = None, rng.choice(("Over", "Over budget")), rng.choice(("OK", "Within"))
        test = "C{r}>B{r}"
        templates = (
            "Add a {header} column in E with an IF formula: {pos} when Actual is more than "
            "Budgeted, {neg} otherwise.",
            "Column E should be titled {header} and say {pos} if we spent more than budgeted, "
            "else {neg} (use IF).",
        )
    else:
        sheet, col, header = "Products", "F", rng.choice(("Reorder", "Reorder?", "Low Stock"))
        n, pos, neg = rng.choice((10, 15, 20, 25)), "Yes", "No"
        test = f"E{{r}}<{n}"
        templates = (
            "Add a {header} column in F that says {pos} when stock is below {n} and {neg} "
            "otherwise, using IF.",
            "In F, title it {header} and use an IF formula: {pos} if Stock < {n}, else {neg}.",
        )
    golds = column_golds(sheet, col, header, f'=IF({test},"{pos}","{neg}")')
    if variant == "products":
        golds.append(pandas_gold(f"df[{header!r}] = np.where(df['Stock'] < {n}, {pos!r}, {neg!r})"))
    values = {"header": header, "pos": pos, "neg": neg}
    if n is not None:
        values["n"] = str(n)
    return make_record(rng, sheet, templates, values, golds)


def round_column(rng: random.Random) -> Record:
    digits = rng.choice((0, 1, 2))
    places = {0: "the nearest whole number", 1: "1 decimal place", 2: "2 decimals"}[digits]
    if rng.random() < 0.5:
        sheet, col, header = "Products", "F", rng.choice(("Markup %", "Markup"))
        formula = f"=ROUND((D{{r}}-C{{r}})/C{{r}}*100,{digits})"
        templates: tuple[str, ...] = (
            "Add a {header} column in F: (Price - Cost) / Cost * 100, rounded to {places} with "
            "ROUND.",
            "In column F put a '{header}' header and a formula for each product giving the "
            "markup percentage over cost, rounded to {places}.",
        )
    else:
        sheet, col, header = "Employees", "F", rng.choice(("Monthly Pay", "Monthly Salary"))
        formula = f"=ROUND(E{{r}}/12,{digits})"
        templates = (
            "Add a {header} column in F that divides the salary by 12 and rounds to {places}.",
            "Column F: header '{header}', formula = Salary / 12 rounded to {places} (ROUND).",
        )
    golds = column_golds(sheet, col, header, formula)
    return make_record(rng, sheet, templates, {"header": header, "places": places}, golds)


def concatenate_column(rng: random.Random) -> Record:
    if rng.random() < 0.6:
        sheet, col, header = "Employees", "F", rng.choice(("Label", "Badge"))
        first = rows_of(sheet)[1]
        example = f"{first[0]} ({first[2]})"
        golds = column_golds(sheet, col, header, '=CONCATENATE(A{r}," (",C{r},")")')
        golds.append(pandas_gold(f"df[{header!r}] = df['Name'] + ' (' + df['Title'] + ')'"))
    else:
        sheet, col, header = "Orders", "H", rng.choice(("Summary", "Label"))
        first = rows_of(sheet)[1]
        example = f"{first[0]} - {first[2]}"
        golds = column_golds(sheet, col, header, '=CONCATENATE(A{r}," - ",C{r})')
    templates: tuple[str, ...] = (
        "Add a {header} column in " + col + " that joins the fields with CONCATENATE so it "
        "reads like {example}.",
        "Use CONCATENATE to build a '{header}' column (" + col + ") in the form {example}",
    )
    return make_record(rng, sheet, templates, {"header": header, "example": example}, golds)


ARITH = (
    ("Products", "F", ("Profit", "Margin"), "=D{r}-C{r}", "df['Price'] - df['Cost']",
     "the price minus the cost"),
    ("Products", "F", ("Stock Value", "Inventory Value"), "=C{r}*E{r}", "df['Cost'] * df['Stock']",
     "cost times stock"),
    ("Employees", "F", ("Monthly", "Per Month"), "=E{r}/12", "df['Salary'] / 12",
     "the salary divided by 12"),
    ("Orders", "H", ("With Tax", "Total incl. Tax"), "=G{r}*1.08", None,
     "the total plus 8% tax"),
    ("Grades", "G", ("Exam Boost", "Curved Final"), "=E{r}+5", None,
     "the final exam plus 5 points"),
)  # fmt: skip


def arithmetic_column(rng: random.Random) -> Record:
    sheet, col, headers, formula, pandas_expr, meaning = rng.choice(ARITH)
    header = rng.choice(headers)
    templates: tuple[str, ...] = (
        "Add a {header} column in " + col + " with a formula for {meaning} on every row.",
        "In column " + col + ", put the header '{header}' and a formula for each row: {meaning}.",
        "New column " + col + " called {header} = {meaning}, as formulas please.",
    )
    golds = column_golds(sheet, col, header, formula)
    if pandas_expr is not None:
        golds.append(pandas_gold(f"df[{header!r}] = {pandas_expr}"))
    return make_record(rng, sheet, templates, {"header": header, "meaning": meaning}, golds)
