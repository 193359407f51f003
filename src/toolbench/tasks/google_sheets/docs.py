"""API docs and demonstrations for google_sheets, written for this project.

A program runs with ``worksheet`` (the sheet the request is about), ``sheet`` (its spreadsheet),
``get_as_dataframe``/``set_with_dataframe`` (gspread-dataframe), ``pd`` and ``np`` in scope, so
``FUNCTIONS`` documents exactly the calls such a program makes: one doc per gspread method or
dataframe helper (file name = method name), a '# ...' comment saying what it does and when to
reach for it, then its signature. The details a model gets wrong most often are spelled out
where they bite: ``raw=False`` to have formulas evaluated, gspread 6's (values, range) argument
order, 1-based rows and columns, and that numpy numbers must be turned into Python ones before
they are written.

``EXAMPLES`` are (query, program) demonstrations on the sheets of our workbook, in both gspread
and pandas style; none repeats a test request. ``DEMOS`` keeps the sheet each one runs on, so a
test can run every demonstration in the sandbox.
"""

from __future__ import annotations

FUNCTIONS: dict[str, str] = {
    "update": (
        "# Write a block of values into the sheet. `values` is a list of rows (a list of lists), "
        "written starting at `range_name` (a range like 'B2:D4' or just its top-left cell). "
        "With raw=False the values are read as if a user typed them, so '=SUM(B2:B9)' becomes a "
        "formula and '12.5' a number; the default raw=True stores them exactly as given. "
        "Values must be plain Python (int, float, str, bool): convert numpy numbers with int(), "
        "float() or .tolist() first.\n"
        "worksheet.update(values: list[list], range_name: str | None = None, raw: bool = True) "
        "-> dict"
    ),
    "update_cell": (
        "# Set one cell by its row and column numbers (both start at 1; column 3 is C). The value "
        "is read as if typed, so text starting with '=' becomes a formula.\n"
        "worksheet.update_cell(row: int, col: int, value) -> dict"
    ),
    "update_acell": (
        "# Set one cell by its A1 label, e.g. 'D7'. The value is read as if typed, so a formula "
        "string like '=B7-C7' is evaluated.\n"
        "worksheet.update_acell(label: str, value) -> dict"
    ),
    "batch_update": (
        "# Write several ranges in one call: each item is {'range': 'C3', 'values': [[...]]}. "
        "Use raw=False to have formulas evaluated.\n"
        "worksheet.batch_update(data: list[dict], raw: bool = True) -> dict"
    ),
    "append_row": (
        "# Add one row after the last non-empty row of the table. Pass "
        "value_input_option='USER_ENTERED' when the row holds formulas.\n"
        "worksheet.append_row(values: list, value_input_option: str = 'RAW') -> dict"
    ),
    "append_rows": (
        "# Add several rows after the last non-empty row of the table, in order.\n"
        "worksheet.append_rows(values: list[list], value_input_option: str = 'RAW') -> dict"
    ),
    "insert_row": (
        "# Insert a new row at row number `index` (1 is the header row), pushing that row and "
        "everything below it down one; formulas that refer to moved rows follow them.\n"
        "worksheet.insert_row(values: list, index: int = 1, value_input_option: str = 'RAW') "
        "-> dict"
    ),
    "insert_rows": (
        "# Insert several new rows starting at row number `row`, pushing existing rows down.\n"
        "worksheet.insert_rows(values: list[list], row: int = 1, value_input_option: str = "
        "'RAW') -> dict"
    ),
    "insert_cols": (
        "# Insert new columns starting at column number `col` (1 is column A), pushing existing "
        "columns right. Each inner list is one column, read top to bottom, header first.\n"
        "worksheet.insert_cols(values: list[list], col: int = 1, value_input_option: str = "
        "'RAW') -> dict"
    ),
    "delete_rows": (
        "# Delete row `start_index`, or rows start_index..end_index inclusive (1-based; row 1 is "
        "the header). Rows below move up.\n"
        "worksheet.delete_rows(start_index: int, end_index: int | None = None) -> dict"
    ),
    "delete_columns": (
        "# Delete column `start_index`, or columns start_index..end_index inclusive (1 is A). "
        "Columns to the right move left.\n"
        "worksheet.delete_columns(start_index: int, end_index: int | None = None) -> dict"
    ),
    "clear": (
        "# Empty every cell of the worksheet (formats stay). Useful before writing back a "
        "dataframe that has fewer rows or columns than the sheet.\n"
        "worksheet.clear() -> dict"
    ),
    "batch_clear": (
        "# Empty the cells of each listed range, e.g. ['E11:E13', 'G2'].\n"
        "worksheet.batch_clear(ranges: list[str]) -> dict"
    ),
    "get_all_values": (
        "# Read the whole sheet as a list of rows of strings (what the cells display), header "
        "row first.\n"
        "worksheet.get_all_values() -> list[list[str]]"
    ),
    "get_all_records": (
        "# Read the rows under the header as dicts keyed by header, with numbers turned into int "
        "or float. The first record is sheet row 2.\n"
        "worksheet.get_all_records() -> list[dict]"
    ),
    "get": (
        "# Read a range as a list of rows. Pass value_render_option='UNFORMATTED_VALUE' to get "
        "numbers as numbers (and formulas as their results) instead of display strings.\n"
        "worksheet.get(range_name: str | None = None, value_render_option: str | None = None) "
        "-> list[list]"
    ),
    "acell": (
        "# Read one cell by its A1 label; the result's .value is the displayed text, .row and "
        ".col its position.\n"
        "worksheet.acell(label: str, value_render_option: str = 'FORMATTED_VALUE') -> Cell"
    ),
    "cell": (
        "# Read one cell by row and column number (1-based); .value is the displayed text.\n"
        "worksheet.cell(row: int, col: int, value_render_option: str = 'FORMATTED_VALUE') -> Cell"
    ),
    "row_values": (
        "# The displayed values of one row (1-based), up to its last filled cell.\n"
        "worksheet.row_values(row: int, value_render_option: str = 'FORMATTED_VALUE') -> list"
    ),
    "col_values": (
        "# The displayed values of one column (1 is A), header included, up to its last filled "
        "cell.\n"
        "worksheet.col_values(col: int, value_render_option: str = 'FORMATTED_VALUE') -> list"
    ),
    "find": (
        "# The first cell whose whole value equals `query` (searching row by row), or None. Use "
        "its .row and .col to edit the row of a named item.\n"
        "worksheet.find(query: str, in_row: int | None = None, in_column: int | None = None, "
        "case_sensitive: bool = True) -> Cell | None"
    ),
    "findall": (
        "# Every cell whose whole value equals `query`, row by row.\n"
        "worksheet.findall(query: str, in_row: int | None = None, in_column: int | None = None, "
        "case_sensitive: bool = True) -> list[Cell]"
    ),
    "sort": (
        "# Sort the rows of `range` by one or more (column number, 'asc' or 'des') keys, the "
        "first key most important. Give a range that starts below the header, e.g. 'A2:E31', "
        "so the header stays on top; formulas move with their rows.\n"
        "worksheet.sort(*specs: tuple[int, str], range: str | None = None) -> dict"
    ),
    "format": (
        "# Apply a cell format to a range (or a list of ranges), e.g. {'textFormat': {'bold': "
        "True}}, {'backgroundColor': {'red': 1, 'green': 1, 'blue': 0}}, "
        "{'numberFormat': {'type': 'CURRENCY', 'pattern': '$#,##0.00'}} or "
        "{'horizontalAlignment': 'CENTER'}. Each top-level key given replaces that part of the "
        "cells' format.\n"
        "worksheet.format(ranges: str | list[str], format: dict) -> dict"
    ),
    "batch_format": (
        "# Apply several formats at once: each item is {'range': 'A1:E1', 'format': {...}}.\n"
        "worksheet.batch_format(formats: list[dict]) -> dict"
    ),
    "merge_cells": (
        "# Merge a range into one cell; only the top-left value is kept. Typical for a title "
        "row spanning the table.\n"
        "worksheet.merge_cells(name: str, merge_type: str = 'MERGE_ALL') -> dict"
    ),
    "add_worksheet": (
        "# Create a new, empty worksheet (tab) in the spreadsheet with the given size and return "
        "it.\n"
        "sheet.add_worksheet(title: str, rows: int, cols: int, index: int | None = None) -> "
        "Worksheet"
    ),
    "worksheet": (
        "# Open another worksheet (tab) of the spreadsheet by its title, e.g. to read the "
        "Products tab while editing Orders.\n"
        "sheet.worksheet(title: str) -> Worksheet"
    ),
    "get_as_dataframe": (
        "# Read a worksheet into a pandas DataFrame, the first row becoming the column names and "
        "empty rows dropped. Pass evaluate_formulas=True to get formula results rather than "
        "formula text. Numeric columns come back as floats; DataFrame row 0 is sheet row 2.\n"
        "get_as_dataframe(worksheet, evaluate_formulas: bool = False) -> pandas.DataFrame"
    ),
    "set_with_dataframe": (
        "# Write a DataFrame into the worksheet with its top-left corner at (row, col), header "
        "row included; cells outside the frame are left as they were, so call "
        "worksheet.clear() first when the frame has fewer rows or columns than the sheet. "
        "Formulas that were read as values are written back as values.\n"
        "set_with_dataframe(worksheet, dataframe, row: int = 1, col: int = 1, include_index: "
        "bool = False, include_column_header: bool = True) -> None"
    ),
}

READ = "df = get_as_dataframe(worksheet, evaluate_formulas=True)"
WRITE = "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)"

# (question sheet, request, program): the sheet is where the program runs in tests
DEMOS: list[tuple[str, str, str]] = [
    (
        "Products",
        "Oat Milk is $5.29 a carton now; update its price.",
        "cell = worksheet.find('Oat Milk')\nworksheet.update_cell(cell.row, 4, 5.29)",
    ),
    (
        "Budget",
        "Type 74.50 into C6.",
        "worksheet.update_acell('C6', 74.5)",
    ),
    (
        "Grades",
        "Put the median Final Exam score in E23 with a formula.",
        "worksheet.update_acell('E23', '=MEDIAN(E2:E21)')",
    ),
    (
        "Monthly Sales",
        "Add a column G called 'North Share' with North divided by Total for every month, as "
        "formulas.",
        "worksheet.update([['North Share']] + [[f'=B{r}/F{r}'] for r in range(2, 14)], "
        "'G1:G13', raw=False)",
    ),
    (
        "Employees",
        "Every 'Support Specialist' is now called 'Support Associate'; change their titles.",
        f"{READ}\n"
        "df.loc[df['Title'] == 'Support Specialist', 'Title'] = 'Support Associate'\n"
        f"{WRITE}",
    ),
    (
        "Products",
        "Delete every product that is out of stock.",
        f"{READ}\ndf = df[df['Stock'] > 0]\nworksheet.clear()\n{WRITE}",
    ),
    (
        "Orders",
        "Delete the last order in the list.",
        "last = len(worksheet.col_values(1))\nworksheet.delete_rows(last)",
    ),
    (
        "Employees",
        "Sort the employees by hire year, earliest first, then by name.",
        "worksheet.sort((4, 'asc'), (1, 'asc'), range='A2:E25')",
    ),
    (
        "Budget",
        "Show D2:D13 with exactly two decimals (number pattern 0.00).",
        "worksheet.format('D2:D13', {'numberFormat': {'type': 'NUMBER', 'pattern': '0.00'}})",
    ),
    (
        "Grades",
        "Write 'Updated after regrades' in A23 and merge A23:C23.",
        "worksheet.update_acell('A23', 'Updated after regrades')\nworksheet.merge_cells('A23:C23')",
    ),
    (
        "Monthly Sales",
        "Clear the West figures for October through December; they aren't final yet.",
        "worksheet.batch_clear(['E11:E13'])",
    ),
    (
        "Orders",
        "How many orders did Corner Books place? Count them in J2 with a formula.",
        "worksheet.update([['=COUNTIF(C2:C37,\"Corner Books\")']], 'J2', raw=False)",
    ),
    (
        "Products",
        "Add a 'Price with Tax' column: price plus 7% sales tax, rounded to the cent.",
        f"{READ}\ndf['Price with Tax'] = (df['Price'] * 1.07).round(2)\n{WRITE}",
    ),
    (
        "Employees",
        "Two new hires: Nina Alvarez, Finance, Accountant, 2025, $66,000, and Theo Brandt, "
        "Support, Support Specialist, 2025, $47,500. Add them at the end.",
        "worksheet.append_rows([\n"
        "    ['Nina Alvarez', 'Finance', 'Accountant', 2025, 66000],\n"
        "    ['Theo Brandt', 'Support', 'Support Specialist', 2025, 47500],\n"
        "])",
    ),
    (
        "Orders",
        "Insert a 'Status' column right after Order ID and mark every order Shipped.",
        "n = len(worksheet.col_values(1)) - 1\n"
        "worksheet.insert_cols([['Status'] + ['Shipped'] * n], 2)",
    ),
    (
        "Products",
        "Write the name of the product we have the most of in G2.",
        f"{READ}\nname = df.loc[df['Stock'].idxmax(), 'Product']\n"
        "worksheet.update_acell('G2', name)",
    ),
    (
        "Orders",
        "Northside Gym renamed itself Northside Fitness. Update every order of theirs.",
        "for cell in worksheet.findall('Northside Gym'):\n"
        "    worksheet.update_cell(cell.row, cell.col, 'Northside Fitness')",
    ),
    (
        "Grades",
        "Give a 100 on the Project to everyone who scored 95 or more on the Final Exam.",
        "records = worksheet.get_all_records()\n"
        "for i, rec in enumerate(records, start=2):\n"
        "    if rec['Final Exam'] >= 95:\n"
        "        worksheet.update_cell(i, 4, 100)",
    ),
    (
        "Budget",
        "Copy the Budgeted amounts into a new tab called 'Plan' (categories in A, amounts in B).",
        "rows = worksheet.get('A1:B13', value_render_option='UNFORMATTED_VALUE')\n"
        "plan = sheet.add_worksheet('Plan', 20, 2)\n"
        "plan.update(rows, 'A1')",
    ),
    (
        "Orders",
        "In I1 write 'Stock Left' and in I2 look up how many units of SO-1041's product are "
        "left, using the Products tab.",
        "products = sheet.worksheet('Products')\n"
        "product = worksheet.acell('D2').value\n"
        "stock = products.cell(products.find(product).row, 5).value\n"
        "worksheet.update([['Stock Left'], [int(stock)]], 'I1')",
    ),
    (
        "Employees",
        "Make Nadia Zhou's salary cell bold.",
        "cell = worksheet.find('Nadia Zhou')\n"
        "worksheet.format(f'E{cell.row}', {'textFormat': {'bold': True}})",
    ),
    (
        "Monthly Sales",
        "Double-check row 7: copy its values into row 16 so I can compare.",
        "values = worksheet.row_values(7, value_render_option='UNFORMATTED_VALUE')\n"
        "worksheet.update([values], 'A16')",
    ),
]

EXAMPLES: list[tuple[str, str]] = [(query, program) for _, query, program in DEMOS]
