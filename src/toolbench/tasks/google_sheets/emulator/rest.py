"""The Spreadsheet's REST-shaped calls (values_get, values_update, batch_update, ...), which
gspread-dataframe and lower-level model code use. Ranges here carry their sheet ("'Sheet1'!A1:B2");
a range without one means the first sheet, as in the API. batch_update understands the requests
gspread itself sends (and a few common hand-written ones); others are refused like the API does."""

from __future__ import annotations

from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import GridRange, format_range, parse_range
from toolbench.tasks.google_sheets.emulator.book import Workbook
from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel, bad_request
from toolbench.tasks.google_sheets.emulator.values import RAW
from toolbench.tasks.google_sheets.emulator.worksheet import Worksheet


def _locate(book: Workbook, name: str) -> tuple[Worksheet, GridRange]:
    try:
        rng = parse_range(name)
    except IncorrectCellLabel:
        raise bad_request(f"Unable to parse range: {name}") from None
    if rng.sheet is None:
        return book.get_worksheet(0), rng
    for ws in book.worksheets():
        if ws.title == rng.sheet or ws.title.casefold() == rng.sheet.casefold():
            return ws, rng.with_sheet(None)
    raise bad_request(f"Unable to parse range: {name}")


def values_get(book: Workbook, name: str, params: dict[str, Any]) -> dict[str, Any]:
    ws, rng = _locate(book, name)
    return ws._read(rng, params.get("valueRenderOption"), params.get("majorDimension"))


def values_update(
    book: Workbook, name: str, params: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    if not params.get("valueInputOption"):
        raise bad_request("'valueInputOption' is required but not specified")
    ws, rng = _locate(book, name)
    option = ws._input_option(params["valueInputOption"])
    if rng.r1 is None and rng.c1 is None:
        rng = GridRange(None, 1, 1, None, None)
    return ws._write(rng, ws._matrix(body.get("values"), body.get("majorDimension")), option)


def values_append(
    book: Workbook, name: str, params: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    ws, rng = _locate(book, name)
    table = format_range(rng, with_sheet=False) or None
    return ws.append_rows(
        body.get("values", []),
        params.get("valueInputOption") or RAW,
        params.get("insertDataOption"),
        table,
    )


def values_clear(book: Workbook, name: str) -> dict[str, Any]:
    ws, rng = _locate(book, name)
    box = ws._read_box(rng)
    ws._clear_box(box)
    return {"spreadsheetId": book.id, "clearedRange": ws._label(box)}


def metadata(book: Workbook) -> dict[str, Any]:
    sheets = []
    for i, ws in enumerate(book.worksheets()):
        grid = ws._grid
        props = {
            "sheetId": ws.id,
            "title": ws.title,
            "index": i,
            "sheetType": "GRID",
            "gridProperties": {
                "rowCount": grid.rows,
                "columnCount": grid.cols,
                "frozenRowCount": grid.frozen_rows,
                "frozenColumnCount": grid.frozen_cols,
            },
        }
        merges = [_grid_range(ws.id, m) for m in grid.merges]
        sheets.append({"properties": props, "merges": merges} if merges else {"properties": props})
    return {
        "spreadsheetId": book.id,
        "properties": {"title": book.title, "locale": "en_US"},
        "sheets": sheets,
        "spreadsheetUrl": book.url,
    }


def _grid_range(sheet_id: int, box: tuple[int, int, int, int]) -> dict[str, int]:
    r1, c1, r2, c2 = box
    return {
        "sheetId": sheet_id,
        "startRowIndex": r1 - 1,
        "endRowIndex": r2,
        "startColumnIndex": c1 - 1,
        "endColumnIndex": c2,
    }


def _a1(book: Workbook, grid_range: dict[str, Any]) -> tuple[Worksheet, str]:
    """A GridRange dict (0-based, end-exclusive) as the worksheet and an A1 label."""
    ws = book.get_worksheet_by_id(grid_range.get("sheetId", 0))
    rows, cols = ws.row_count, ws.col_count
    rng = GridRange(
        None,
        grid_range.get("startRowIndex", 0) + 1,
        grid_range.get("startColumnIndex", 0) + 1,
        grid_range.get("endRowIndex", rows),
        grid_range.get("endColumnIndex", cols),
    )
    return ws, format_range(rng, with_sheet=False)


def _apply(book: Workbook, i: int, kind: str, req: dict[str, Any]) -> dict[str, Any]:
    if kind == "addSheet":
        props = req.get("properties", {})
        grid = props.get("gridProperties", {})
        ws = book.add_worksheet(
            props.get("title") or f"Sheet{len(book.worksheets()) + 1}",
            grid.get("rowCount", 1000),
            grid.get("columnCount", 26),
            props.get("index"),
        )
        return {"addSheet": {"properties": {"sheetId": ws.id, "title": ws.title}}}
    if kind == "deleteSheet":
        book.del_worksheet_by_id(req["sheetId"])
    elif kind == "updateSheetProperties":
        props = req["properties"]
        ws = book.get_worksheet_by_id(props.get("sheetId", 0))
        grid = props.get("gridProperties", {})
        if "title" in props:
            ws.update_title(props["title"])
        if "rowCount" in grid or "columnCount" in grid:
            ws.resize(grid.get("rowCount"), grid.get("columnCount"))
        if "frozenRowCount" in grid or "frozenColumnCount" in grid:
            ws.freeze(grid.get("frozenRowCount"), grid.get("frozenColumnCount"))
    elif kind in ("insertDimension", "deleteDimension"):
        rng = req["range"]
        ws = book.get_worksheet_by_id(rng.get("sheetId", 0))
        axis = "row" if rng["dimension"] == "ROWS" else "column"
        start, end = rng["startIndex"] + 1, rng["endIndex"]
        if kind == "insertDimension":
            ws._insert_dimension(axis, start, end - start + 1, bool(req.get("inheritFromBefore")))
        else:
            ws.delete_dimension(rng["dimension"], start, end)
    elif kind == "repeatCell":
        ws, label = _a1(book, req["range"])
        fmt = req.get("cell", {}).get("userEnteredFormat", {})
        ws.format(label, fmt)
    elif kind in ("mergeCells", "unmergeCells"):
        ws, label = _a1(book, req["range"])
        if kind == "mergeCells":
            ws.merge_cells(label, req.get("mergeType", "MERGE_ALL"))
        else:
            ws.unmerge_cells(label)
    elif kind == "sortRange":
        ws, label = _a1(book, req["range"])
        specs = [
            (s["dimensionIndex"] + 1, "des" if s.get("sortOrder") == "DESCENDING" else "asc")
            for s in req.get("sortSpecs", [])
        ]
        ws.sort(*specs, range=label)
    elif kind not in (
        "autoResizeDimensions",
        "updateDimensionProperties",
        "setBasicFilter",
        "clearBasicFilter",
        "updateBorders",
        "addConditionalFormatRule",
    ):
        raise bad_request(
            f"Invalid JSON payload received. Unknown name \"{kind}\" at 'requests[{i}]': "
            "Cannot find field."
        )
    return {}


def batch_update(book: Workbook, body: dict[str, Any]) -> dict[str, Any]:
    replies = []
    for i, request in enumerate(body.get("requests", [])):
        if not isinstance(request, dict) or len(request) != 1:
            raise bad_request(f"Invalid requests[{i}]: exactly one request kind is expected")
        ((kind, req),) = request.items()
        replies.append(_apply(book, i, kind, req))
    return {"spreadsheetId": book.id, "replies": replies}
