"""The workbook our google_sheets questions are about: six small sheets a real user might keep.

Every question names one of these sheets; its program runs on a fresh copy of the whole workbook
(so the cross-sheet price lookup in Orders works). The values come from a ``random.Random`` with
a fixed seed, never from the clock, so ``build_workbook()`` gives the same workbook every time and
the committed ``workbook.json`` is byte-stable. ``TABLES`` holds the same cells as plain lists
(formulas as '=...' text): the generator reads them to phrase questions about rows that exist
without building the emulator. Names, costs, prices, final exam scores, salaries and regional
sales figures are kept distinct within their column, so sorting on them has exactly one right
order.
"""

from __future__ import annotations

import random
from typing import Any

from toolbench.tasks.google_sheets.emulator import Spreadsheet, column_to_letters

WORKBOOK_TITLE = "toolbench sheets v0"
SEED = "toolbench-sheets-v0"
# Grid size of every sheet: roomy like a sheet made by hand, small enough that reading a sheet
# into a dataframe (which pads to the grid) stays a few milliseconds.
GRID_ROWS = 100
GRID_COLS = 12

PRODUCTS = {
    "Snacks": ("Trail Mix", "Sea Salt Crackers", "Dark Chocolate Bar", "Oat Granola",
               "Rice Cakes", "Roasted Almonds"),
    "Beverages": ("Cold Brew Coffee", "Green Tea", "Sparkling Water", "Orange Juice", "Oat Milk",
                  "Ginger Kombucha"),
    "Household": ("Dish Soap", "Paper Towels", "Laundry Pods", "Trash Bags", "Kitchen Sponges",
                  "Glass Cleaner"),
    "Personal Care": ("Mint Toothpaste", "Argan Shampoo", "Hand Lotion", "Lip Balm",
                      "Bar Soap", "Cotton Swabs"),
    "Stationery": ("Ballpoint Pens", "Sticky Notes", "Spiral Notebook", "Highlighters",
                   "Printer Paper", "Binder Clips"),
}  # fmt: skip
PRODUCT_HEADER = ["Product", "Category", "Cost", "Price", "Stock"]

FIRST_NAMES = (
    "Aisha", "Ben", "Carmen", "Darius", "Elena", "Felix", "Grace", "Hiro", "Imani", "Jonah",
    "Keira", "Luis", "Maya", "Nikolai", "Olivia", "Priya", "Quentin", "Rosa", "Samir", "Tessa",
    "Umar", "Vera", "Wesley", "Ximena", "Yusuf", "Zoe", "Marcus", "Leah", "Owen", "Nadia",
)  # fmt: skip
LAST_NAMES = (
    "Abbott", "Brennan", "Castillo", "Dubois", "Eriksen", "Fontaine", "Gallagher", "Haddad",
    "Iverson", "Jablonski", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
    "Quinlan", "Ramirez", "Sato", "Thornton", "Ueda", "Vasquez", "Whitaker", "Yilmaz", "Zhou",
)  # fmt: skip
GRADE_HEADER = ["Student", "Essay", "Lab Report", "Project", "Final Exam", "Average"]
N_STUDENTS = 20

BUDGET_HEADER = ["Category", "Budgeted", "Actual", "Difference"]
BUDGET_LINES = (
    ("Rent", 1450), ("Groceries", 520), ("Utilities", 180), ("Internet", 65), ("Phone", 55),
    ("Transportation", 210), ("Dining Out", 160), ("Entertainment", 90),
    ("Health Insurance", 310), ("Gym", 45), ("Savings", 400), ("Gifts", 75),
)  # fmt: skip

ORDER_HEADER = ["Order ID", "Date", "Customer", "Product", "Quantity", "Unit Price", "Total"]
CUSTOMERS = (
    "Harbor Cafe", "Maple Street Deli", "Blue Fern Studio", "Northside Gym", "Corner Books",
    "Lakeview Dental", "Pine & Co", "Riverbend Clinic",
)  # fmt: skip
N_ORDERS = 36

EMPLOYEE_HEADER = ["Name", "Department", "Title", "Hire Year", "Salary"]
# Department -> its job titles, each with a salary band in thousands of dollars.
DEPARTMENTS = {
    "Engineering": {"Software Engineer": (95, 125), "Senior Engineer": (120, 150),
                    "QA Analyst": (72, 95)},
    "Sales": {"Account Executive": (58, 85), "Sales Manager": (90, 115)},
    "Marketing": {"Content Writer": (52, 70), "Marketing Analyst": (62, 88)},
    "Support": {"Support Specialist": (44, 58), "Support Lead": (60, 72)},
    "Finance": {"Accountant": (60, 80), "Financial Analyst": (70, 98)},
}  # fmt: skip
N_EMPLOYEES = 24

SALES_HEADER = ["Month", "North", "South", "East", "West", "Total"]
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _distinct(rng: random.Random, draw: Any, n: int) -> list[Any]:
    """``n`` values from ``draw(rng)``, no two equal, so sorting on them has one answer."""
    seen: list[Any] = []
    while len(seen) < n:
        value = draw(rng)
        if value not in seen:
            seen.append(value)
    return seen


def _products(rng: random.Random) -> list[list[Any]]:
    names = [(cat, name) for cat, items in PRODUCTS.items() for name in items]
    costs = _distinct(rng, lambda r: round(r.uniform(0.6, 9.5), 2), len(names))
    rows: list[list[Any]] = [PRODUCT_HEADER]
    prices: set[float] = set()
    for (category, name), cost in zip(names, costs, strict=True):
        # shelf prices end in .29/.49/.79/.99 like a real shop's, well above cost
        price = int(cost * rng.uniform(1.6, 2.4)) + rng.choice((0.29, 0.49, 0.79, 0.99))
        while round(price, 2) in prices:
            price += 1
        price = round(price, 2)
        prices.add(price)
        stock = 0 if rng.random() < 0.12 else rng.randrange(3, 140)
        rows.append([name, category, cost, price, stock])
    head, body = rows[0], rows[1:]
    rng.shuffle(body)
    return [head, *body]


def _people(rng: random.Random, n: int) -> list[str]:
    firsts = rng.sample(FIRST_NAMES, n)
    lasts = rng.sample(LAST_NAMES * 2, n)
    return [f"{first} {last}" for first, last in zip(firsts, lasts, strict=True)]


def _grades(rng: random.Random) -> list[list[Any]]:
    rows: list[list[Any]] = [GRADE_HEADER]
    finals = _distinct(rng, lambda r: r.randrange(52, 100), N_STUDENTS)
    for i, (name, final) in enumerate(zip(_people(rng, N_STUDENTS), finals, strict=True)):
        scores = [min(100, max(40, int(rng.gauss(82, 10)))) for _ in range(3)]
        r = i + 2
        rows.append([name, *scores, final, f"=ROUND(AVERAGE(B{r}:E{r}),1)"])
    return rows


def _budget(rng: random.Random) -> list[list[Any]]:
    rows: list[list[Any]] = [BUDGET_HEADER]
    for i, (category, budgeted) in enumerate(BUDGET_LINES):
        if category in ("Rent", "Savings", "Internet", "Gym", "Health Insurance"):
            actual: float = budgeted  # fixed amounts are paid exactly
        else:
            actual = round(budgeted * rng.uniform(0.7, 1.3), 2)
        rows.append([category, budgeted, actual, f"=B{i + 2}-C{i + 2}"])
    return rows


def _orders(rng: random.Random, products: list[list[Any]]) -> list[list[Any]]:
    rows: list[list[Any]] = [ORDER_HEADER]
    names = [row[0] for row in products[1:]]
    day = 0
    for i in range(N_ORDERS):
        day += rng.choice((0, 1, 1, 2, 3))
        month, dom = (3, day + 1) if day < 31 else (4, day - 30)
        r = i + 2
        rows.append(
            [
                f"SO-{1041 + i}",
                f"2024-{month:02d}-{dom:02d}",
                rng.choice(CUSTOMERS),
                rng.choice(names),
                rng.choice((1, 2, 2, 3, 4, 5, 6, 8, 10, 12)),
                f"=VLOOKUP(D{r},Products!A:D,4,FALSE)",
                f"=E{r}*F{r}",
            ]
        )
    return rows


def _employees(rng: random.Random) -> list[list[Any]]:
    rows: list[list[Any]] = [EMPLOYEE_HEADER]
    departments = list(DEPARTMENTS)
    salaries: set[int] = set()
    for name in _people(rng, N_EMPLOYEES):
        dept = rng.choices(departments, weights=(7, 5, 4, 5, 3))[0]
        title = rng.choice(list(DEPARTMENTS[dept]))
        low, high = DEPARTMENTS[dept][title]
        while (salary := rng.randrange(low, high) * 1000 + rng.choice((0, 500))) in salaries:
            pass
        salaries.add(salary)
        rows.append([name, dept, title, rng.randrange(2012, 2025), salary])
    return rows


def _sales(rng: random.Random) -> list[list[Any]]:
    rows: list[list[Any]] = [SALES_HEADER]
    base = (18000, 22000, 15500, 20500)  # North, South, East, West
    season = [1 + 0.25 * (i in (10, 11)) - 0.1 * (i in (0, 1)) for i in range(12)]
    columns: list[list[int]] = []
    for b in base:  # each region's figures distinct, so sorting on any column has one answer
        column: list[int] = []
        for factor in season:
            while (value := int(b * factor * rng.uniform(0.85, 1.15)) // 10 * 10) in column:
                pass
            column.append(value)
        columns.append(column)
    for i, month in enumerate(MONTHS):
        rows.append([month, *(col[i] for col in columns), f"=SUM(B{i + 2}:E{i + 2})"])
    return rows


def _tables() -> dict[str, list[list[Any]]]:
    rng = random.Random(SEED)
    products = _products(rng)
    return {
        "Products": products,
        "Grades": _grades(rng),
        "Budget": _budget(rng),
        "Orders": _orders(rng, products),
        "Employees": _employees(rng),
        "Monthly Sales": _sales(rng),
    }


TABLES: dict[str, list[list[Any]]] = _tables()
# Sheets whose header row is already bold and frozen; the others start with no formats at all.
BOLD_HEADERS = ("Orders", "Monthly Sales")


def build_workbook() -> Spreadsheet:
    """The workbook, built through the same gspread calls a user's script would make."""
    book = Spreadsheet(WORKBOOK_TITLE, sheet_title=None)
    for title, rows in TABLES.items():
        ws = book.add_worksheet(title, GRID_ROWS, GRID_COLS)
        ws.update(rows, "A1", raw=False)
        if title in BOLD_HEADERS:
            ws.format(f"A1:{column_to_letters(len(rows[0]))}1", {"textFormat": {"bold": True}})
            ws.freeze(rows=1)
    return book
