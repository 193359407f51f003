"""Cell values in and out: what RAW and USER_ENTERED store, and what each render option returns.

Stored values are `str`, `int`, `float`, `bool`, a `Formula` or an `ErrorValue` (a formula's error
result). Reading renders them the way the Sheets API does: FORMATTED_VALUE gives strings (numbers
through the cell's number format), UNFORMATTED_VALUE gives JSON types (whole numbers as `int`),
FORMULA gives formulas' text. Input is checked the way gspread's JSON encoding would check it, so a
numpy scalar fails here as it fails against the real API.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from toolbench.tasks.google_sheets.emulator.errors import InvalidJSONError

RAW = "RAW"
USER_ENTERED = "USER_ENTERED"
FORMATTED = "FORMATTED_VALUE"
UNFORMATTED = "UNFORMATTED_VALUE"
FORMULA = "FORMULA"
RENDER_OPTIONS = (FORMATTED, UNFORMATTED, FORMULA)


@dataclass(frozen=True)
class Formula:
    """A cell's formula, kept as the text the user typed (with its leading '=')."""

    text: str


class ErrorValue(str):
    """A formula's error result ('#DIV/0!', '#REF!', ...): a string to readers, an error to
    formulas that read it."""


Scalar = str | int | float | bool
Stored = Scalar | Formula


def check_json(value: Any, where: str = "values") -> None:
    """Fail like `json.dumps(..., allow_nan=False)` in requests: gspread sends values as JSON."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidJSONError("Out of range float values are not JSON compliant")
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            check_json(item, where)
        return
    if isinstance(value, dict):
        for item in value.values():
            check_json(item, where)
        return
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def lenient(value: Any) -> Any:
    """numpy/pandas values to Python ones (arrays to lists); used only when a Spreadsheet is not
    `strict_types`."""
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple, dict, str)):
        try:
            return value.tolist()
        except (TypeError, ValueError):
            return value
    return value


def normalize_number(x: int | float) -> int | float:
    """Whole floats become ints, as JSON numbers do when the API sends them back."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return int(x)
    return x


_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN_RE = re.compile(rf"[+-]?{_NUM}")
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
_PERCENT_RE = re.compile(rf"([+-]?{_NUM})\s*%")
_CURRENCY_RE = re.compile(r"(-?)\$\s*(\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)")
CURRENCY_PATTERN = '"$"#,##0.00'


def parse_user_entered(value: Scalar) -> tuple[Stored | None, dict[str, Any] | None]:
    """What typing `value` into a cell stores: (value or None for empty, auto number format).

    Numbers, TRUE/FALSE, percentages, $-amounts and 1,000-style numbers are recognised; a leading
    apostrophe forces text. Dates stay text (a known gap: Sheets would store a date serial).
    """
    if not isinstance(value, str):
        return value, None
    if value == "":
        return None, None
    if value.startswith("'"):
        return value[1:], None
    if value.startswith("=") and len(value) > 1:
        return Formula(value), None
    text = value.strip()
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE", None
    if _PLAIN_RE.fullmatch(text):
        return normalize_number(float(text)) if _is_float(text) else int(text), None
    if _THOUSANDS_RE.fullmatch(text):
        decimals = "." in text
        number = float(text.replace(",", ""))
        pattern = "#,##0.00" if decimals else "#,##0"
        return normalize_number(number), {"type": "NUMBER", "pattern": pattern}
    m = _PERCENT_RE.fullmatch(text)
    if m:
        pattern = "0.00%" if "." in m[1] else "0%"
        return normalize_number(float(m[1]) / 100), {"type": "PERCENT", "pattern": pattern}
    m = _CURRENCY_RE.fullmatch(text)
    if m:
        number = float(m[2].replace(",", "")) * (-1 if m[1] else 1)
        return normalize_number(number), {"type": "CURRENCY", "pattern": CURRENCY_PATTERN}
    return value, None


def _is_float(text: str) -> bool:
    return any(ch in text for ch in ".eE")


def stored_from_input(value: Scalar, option: str) -> tuple[Stored | None, dict[str, Any] | None]:
    """RAW keeps strings verbatim ('=1+1' stays text); USER_ENTERED parses them."""
    if option == USER_ENTERED:
        return parse_user_entered(value)
    if value == "":
        return None, None
    if isinstance(value, float):
        return normalize_number(value), None
    return value, None


# ---- rendering -------------------------------------------------------------------------------


def unformatted(value: Any) -> Any:
    """The JSON value UNFORMATTED_VALUE returns ('' for empty)."""
    if value is None:
        return ""
    if isinstance(value, ErrorValue):
        return str(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return normalize_number(value)
    return value


def formatted(value: Any, number_format: dict[str, Any] | None = None) -> str:
    """The string FORMATTED_VALUE returns for `value` under the cell's numberFormat."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return format_number(value, number_format)
    return str(value)


DEFAULT_PATTERNS = {
    "NUMBER": "#,##0.00",
    "CURRENCY": CURRENCY_PATTERN,
    "PERCENT": "0.00%",
    "SCIENTIFIC": "0.00E+00",
}
_PATTERN_RE = re.compile(r"(?P<pre>[^#0,.%]*?)(?P<int>[#0,]+)(?:\.(?P<dec>[0#]+))?(?P<post>.*)")


def format_number(x: int | float, number_format: dict[str, Any] | None = None) -> str:
    """Sheets' 'Automatic' format, or a simple custom pattern ('#,##0.00', '0%', '"$"#,##0')."""
    kind = (number_format or {}).get("type", "")
    pattern = (number_format or {}).get("pattern") or DEFAULT_PATTERNS.get(kind, "")
    if pattern and kind not in ("TEXT", "DATE", "TIME", "DATE_TIME"):
        text = _apply_pattern(float(x), pattern)
        if text is not None:
            return text
    return automatic(x)


def automatic(x: int | float) -> str:
    """Up to 10 significant digits, scientific beyond 1e15 (what Sheets shows by default)."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    if x == 0:
        return "0"
    if abs(x) >= 1e15 or abs(x) < 1e-9:
        mantissa, exp = f"{x:.9E}".split("E")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}E{'+' if int(exp) >= 0 else '-'}{abs(int(exp)):02d}"
    digits = max(0, 9 - math.floor(math.log10(abs(x))))
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")


def _apply_pattern(x: float, pattern: str) -> str | None:
    section = pattern.split(";")[0]
    if "E+" in section.upper():
        decimals = len(section.split(".")[1].upper().split("E")[0]) if "." in section else 0
        mantissa, exp = f"{x:.{decimals}E}".split("E")
        return f"{mantissa}E{'+' if int(exp) >= 0 else '-'}{abs(int(exp)):02d}"
    m = _PATTERN_RE.fullmatch(section)
    if m is None:
        return None
    pre = m["pre"].replace('"', "").replace("\\", "")
    post = m["post"].replace('"', "").replace("\\", "")
    if "%" in post:
        x *= 100
    decimals = len(m["dec"] or "")
    body = f"{abs(x):,.{decimals}f}" if "," in m["int"] else f"{abs(x):.{decimals}f}"
    if m["dec"] and set(m["dec"]) == {"#"}:
        body = body.rstrip("0").rstrip(".")
    sign = "-" if x < 0 and float(body.replace(",", "") or 0) != 0 else ""
    return f"{sign}{pre}{body}{post}"


def render(value: Any, option: str, number_format: dict[str, Any] | None = None) -> Any:
    if option == FORMATTED:
        return formatted(value, number_format)
    return unformatted(value)
