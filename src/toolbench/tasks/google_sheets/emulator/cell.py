"""`Cell` and `ValueRange`, the two result shapes gspread's reads hand back."""

from __future__ import annotations

from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import a1_to_rowcol, rowcol_to_a1


def numericise(
    value: Any,
    empty2zero: bool = False,
    default_blank: Any = "",
    allow_underscores_in_numeric_literals: bool = False,
) -> Any:
    """gspread.utils.numericise: '3' -> 3, '2,000.1' -> 2000.1, '' -> default_blank."""
    if not isinstance(value, str):
        return value
    if "_" in value:
        if not allow_underscores_in_numeric_literals:
            return value
        value = value.replace("_", "")
    cleaned = value.replace(",", "")
    try:
        return int(cleaned)
    except ValueError:
        try:
            return float(cleaned)
        except ValueError:
            if value == "":
                return 0 if empty2zero else default_blank
            return value


class Cell:
    """One cell as gspread returns it: `row`, `col`, `value` (a string when read formatted)."""

    def __init__(self, row: int, col: int, value: Any = "") -> None:
        self._row, self._col = row, col
        self.value = value

    @classmethod
    def from_address(cls, label: str, value: Any = "") -> Cell:
        row, col = a1_to_rowcol(label)
        return cls(row, col, value)

    @property
    def row(self) -> int:
        return self._row

    @property
    def col(self) -> int:
        return self._col

    @property
    def address(self) -> str:
        return rowcol_to_a1(self._row, self._col)

    @property
    def numeric_value(self) -> int | float | None:
        number = numericise(self.value, default_blank=None)
        return number if isinstance(number, (int, float)) and not isinstance(number, bool) else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cell):
            return False
        return (self.row, self.col, self.value) == (other.row, other.col, other.value)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Cell R{self.row}C{self.col} {self.value!r}>"


class ValueRange(list[Any]):
    """A list of rows that also knows the range it was read from (gspread.worksheet.ValueRange)."""

    _json: dict[str, str]

    @classmethod
    def from_json(cls, json: dict[str, Any]) -> ValueRange:
        new = cls(json.get("values", []))
        new._json = {"range": json["range"], "majorDimension": json["majorDimension"]}
        return new

    @property
    def range(self) -> str:
        return self._json["range"]

    @property
    def major_dimension(self) -> str:
        return self._json["majorDimension"]

    def first(self, default: Any = None) -> Any:
        try:
            return self[0][0]
        except IndexError:
            return default


def fill_gaps(
    rows: list[list[Any]],
    nrows: int | None = None,
    ncols: int | None = None,
    padding_value: Any = "",
) -> list[list[Any]]:
    """gspread.utils.fill_gaps: pad a ragged list of rows into a rectangle."""
    try:
        width = max(len(row) for row in rows) if ncols is None else ncols
    except ValueError:
        return [[]]
    height = len(rows) if nrows is None else nrows
    rows = [list(r) for r in rows] + [[] for _ in range(height - len(rows))]
    return [row + [padding_value] * (width - len(row)) for row in rows]
