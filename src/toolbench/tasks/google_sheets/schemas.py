"""JSON Schemas of the worksheet methods' dict arguments, for the agent tools (``agent_world.py``).

The docs' signatures say ``dict`` (``format(ranges, format: dict)``, ``batch_update(data:
list[dict])``): enough for a model that reads the prose, but an agent's tool schema built from
it would be an open ``{"type": "object"}``, which strict function calling refuses and which
tells a model nothing about the keys. So the keys are written here, as gspread and the Sheets
API define them:

* ``batch_update``'s items are ``{'range': ..., 'values': [[...]]}`` (a ValueRange, with its
  optional ``majorDimension``), as gspread's ``Worksheet.batch_update`` documents;
* ``format``'s ``format`` is a CellFormat of the Sheets API (``spreadsheets/cells#cellformat``)
  and ``batch_format``'s items are ``{'range': ..., 'format': <CellFormat>}``, as gspread's
  ``Worksheet.format``/``batch_format`` document. Every CellFormat field a cell's look needs is
  described; the theme-colour variants (``backgroundColorStyle``, ``foregroundColorStyle``)
  and the read-only fields are left out (the RGB colours say the same).

Every object lists its properties and refuses others (``additionalProperties: false``); a
property left out is "not given" (the cells keep that part of their format), and so is a
null, which a strict client sends for each property it does not mean (``agent.unset_nulls``).
The docs themselves (what the model reads, and the fingerprint) do not change.
"""

from __future__ import annotations

from typing import Any

_SCALAR = {"type": ["string", "number", "boolean", "null"]}


def _object(
    description: str, properties: dict[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _choice(description: str, *values: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": list(values)}
    return {**schema, "description": description} if description else schema


def _color(description: str) -> dict[str, Any]:
    part = {"type": "number", "minimum": 0, "maximum": 1}
    return _object(
        f"{description}: each of red, green, blue from 0 to 1 (a part left out is 0), e.g. "
        "{'red': 1, 'green': 1, 'blue': 0} is yellow",
        {name: dict(part) for name in ("red", "green", "blue", "alpha")},
    )


def _sides(description: str, side: dict[str, Any]) -> dict[str, Any]:
    return _object(description, {name: dict(side) for name in ("top", "bottom", "left", "right")})


def _border() -> dict[str, Any]:
    style = _choice(
        "the line", "DOTTED", "DASHED", "SOLID", "SOLID_MEDIUM", "SOLID_THICK", "DOUBLE", "NONE"
    )
    return _object("one edge's line", {"style": style, "color": _color("its colour")})


def _text_format() -> dict[str, Any]:
    flag = {"type": "boolean"}
    return _object(
        "the text's look",
        {
            "foregroundColor": _color("the text colour"),
            "fontFamily": {"type": "string", "description": "e.g. 'Arial'"},
            "fontSize": {"type": "integer", "minimum": 1, "description": "in points"},
            "bold": dict(flag),
            "italic": dict(flag),
            "strikethrough": dict(flag),
            "underline": dict(flag),
            "link": _object("a hyperlink", {"uri": {"type": "string"}}, ("uri",)),
        },
    )


def cell_format() -> dict[str, Any]:
    """The Sheets API's CellFormat: each top-level key given replaces that part of the cells'
    format (gspread sends ``fields=userEnteredFormat(<those keys>)``)."""
    number_format = _object(
        "how numbers and dates are shown",
        {
            "type": _choice(
                "the kind of value",
                "TEXT",
                "NUMBER",
                "PERCENT",
                "CURRENCY",
                "DATE",
                "TIME",
                "DATE_TIME",
                "SCIENTIFIC",
            ),
            "pattern": {
                "type": "string",
                "description": "e.g. '$#,##0.00', '0.0%', '#,##0' or 'yyyy-mm-dd'",
            },
        },
        ("type",),
    )
    padding = {"type": "integer", "minimum": 0, "description": "pixels"}
    rotation = _object(
        "the text's angle",
        {
            "angle": {"type": "integer", "minimum": -90, "maximum": 90, "description": "degrees"},
            "vertical": {"type": "boolean", "description": "letters stacked top to bottom"},
        },
    )
    return _object(
        "a cell format (the Sheets API's CellFormat), e.g. {'textFormat': {'bold': true}}",
        {
            "numberFormat": number_format,
            "backgroundColor": _color("the fill colour"),
            "borders": _sides("the cell's borders", _border()),
            "padding": _sides("space inside the cell", padding),
            "horizontalAlignment": _choice("", "LEFT", "CENTER", "RIGHT"),
            "verticalAlignment": _choice("", "TOP", "MIDDLE", "BOTTOM"),
            "wrapStrategy": _choice("", "OVERFLOW_CELL", "LEGACY_WRAP", "CLIP", "WRAP"),
            "textDirection": _choice("", "LEFT_TO_RIGHT", "RIGHT_TO_LEFT"),
            "textFormat": _text_format(),
            "hyperlinkDisplayType": _choice("", "LINKED", "PLAIN_TEXT"),
            "textRotation": rotation,
        },
    )


def _range(what: str) -> dict[str, Any]:
    return {"type": "string", "description": f"{what} in A1 notation, e.g. 'A1:E1' or 'C3'"}


def value_range() -> dict[str, Any]:
    """One write of ``batch_update``: gspread's ``{'range': ..., 'values': [[...]]}``."""
    return _object(
        "one block of values to write",
        {
            "range": _range("where to write (the block's range or its top-left cell)"),
            "values": {
                "type": "array",
                "items": {"type": "array", "items": dict(_SCALAR)},
                "description": "the rows to write, each a list of cell values",
            },
            "majorDimension": _choice(
                "whether each inner list is a row (the default) or a column", "ROWS", "COLUMNS"
            ),
        },
        ("range", "values"),
    )


def format_range() -> dict[str, Any]:
    """One item of ``batch_format``: gspread's ``{'range': ..., 'format': <CellFormat>}``."""
    return _object(
        "one range and the format to apply to it",
        {"range": _range("the cells to format"), "format": cell_format()},
        ("range", "format"),
    )


def sort_keys() -> dict[str, Any]:
    """``sort``'s ``*specs``: (column number, 'asc' or 'des') pairs, most important first.
    A pair is a two-item array (strict mode has no ``prefixItems`` to type each item; the
    sheet refuses a pair in the wrong order in gspread's words)."""
    pair = {
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["asc", "des"]}]},
        "minItems": 2,
        "maxItems": 2,
        "description": "[column number (1 is A), 'asc' or 'des'], e.g. [4, 'asc']",
    }
    return {
        "type": "array",
        "items": pair,
        "minItems": 1,
        "description": "the sort keys, the most important first",
    }


#: (tool, parameter) -> the schema of a parameter the docs' annotation cannot describe.
PARAMETERS: dict[tuple[str, str], dict[str, Any]] = {
    ("batch_update", "data"): {"type": "array", "items": value_range()},
    ("format", "format"): cell_format(),
    ("batch_format", "formats"): {"type": "array", "items": format_range()},
    ("sort", "specs"): sort_keys(),
}
