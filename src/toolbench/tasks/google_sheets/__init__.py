"""google_sheets: gspread/pandas code editing a worksheet, run on an in-memory spreadsheet."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.google_sheets.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
