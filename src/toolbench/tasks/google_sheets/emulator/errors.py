"""Exceptions named and worded like gspread's, so a model's `except` clauses and its reading of a
traceback work as they would against the real library.

They are our own classes (gspread's `APIError` needs a `requests.Response`); a sandbox that offers a
fake `gspread` module should expose these under `gspread.exceptions`.
"""

from __future__ import annotations

from typing import Any, ClassVar


class GSpreadException(Exception):
    """A base class for gspread's exceptions."""


class WorksheetNotFound(GSpreadException):
    """Trying to open non-existent or inaccessible worksheet."""


class SpreadsheetNotFound(GSpreadException):
    """Trying to open non-existent or inaccessible spreadsheet."""


class IncorrectCellLabel(GSpreadException):
    """The cell label is incorrect."""


class InvalidInputValue(GSpreadException):
    """The provided values is incorrect."""


class NoValidUrlKeyFound(GSpreadException):
    """No valid key found in URL."""


class APIError(GSpreadException):
    """What the Sheets API answers with an HTTP error; `str()` matches gspread 6's rendering."""

    STATUS: ClassVar[dict[int, str]] = {
        400: "INVALID_ARGUMENT",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
    }

    def __init__(self, message: str, code: int = 400) -> None:
        error = {"code": code, "message": message, "status": self.STATUS.get(code, "UNKNOWN")}
        super().__init__(error)
        self.error: dict[str, Any] = error
        self.code = code
        self.response = None

    def __str__(self) -> str:
        return f"{type(self).__name__}: [{self.code}]: {self.error['message']}"

    def __repr__(self) -> str:
        return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.error["message"], self.code)


class InvalidJSONError(OSError):
    """What `requests` raises for NaN or infinity in a JSON body (gspread sends values as JSON)."""


def bad_request(message: str) -> APIError:
    return APIError(message, 400)
