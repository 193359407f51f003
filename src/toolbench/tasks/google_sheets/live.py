"""Harness side of ``--live``: a scratch Google spreadsheet for the run, holding the workbook.

Needs ``pip install 'toolbench[sheets]'`` (gspread, gspread-dataframe) and a service-account
key file in ``$GOOGLE_APPLICATION_CREDENTIALS``. At load the harness creates a scratch
spreadsheet owned by the service account, uploads every sheet of the workbook (values,
formulas, formats, merges), and deletes the spreadsheet when the process exits. Each program
then works on its own copy of its question sheet (``live_world.py``). Requests go through
gspread's ``BackOffHTTPClient``, which waits and retries on 429 (rate limit) and 5xx answers.

``$TOOLBENCH_SHEETS_CLIENT`` ('module:function', called with the credentials path) replaces
the client factory: for OAuth users, and for the tests, which use an emulator-backed fake.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbench.errors import UserError
from toolbench.sandbox.world import WorldFactory
from toolbench.tasks.google_sheets.live_world import load_client_factory, make_live_world
from toolbench.types import Sample

if TYPE_CHECKING:
    from toolbench.tasks.google_sheets.task import Workbook

CREDENTIALS_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
CLIENT_ENV = "TOOLBENCH_SHEETS_CLIENT"
DEFAULT_CLIENT = "toolbench.tasks.google_sheets.live:service_account_client"


def service_account_client(credentials: str) -> Any:
    import gspread  # deferred: gspread is the optional extra toolbench[sheets] (--live)

    # deferred: gspread is the optional extra toolbench[sheets] (--live)
    from gspread.http_client import BackOffHTTPClient

    return gspread.service_account(filename=credentials, http_client=BackOffHTTPClient)


def live_worlds(
    workbook: Workbook, samples: Sequence[Sample]
) -> tuple[dict[str, WorldFactory], Callable[[], None]]:
    """Per-sample live factories, and the function that deletes the scratch spreadsheet (also
    registered to run at exit, so an interrupted run cleans up too)."""
    credentials = os.environ.get(CREDENTIALS_ENV, "")
    if not credentials or not Path(credentials).is_file():
        raise UserError(
            f"--live for google_sheets needs a service-account key file in ${CREDENTIALS_ENV} "
            f"(now {credentials or 'unset'}); share nothing else with that account"
        )
    client_ref = os.environ.get(CLIENT_ENV, DEFAULT_CLIENT)
    try:
        factory = load_client_factory(client_ref)
    except (ImportError, AttributeError, ValueError):
        raise UserError(
            f"${CLIENT_ENV}={client_ref!r}: expected module:function naming a gspread client "
            f"factory (default {DEFAULT_CLIENT}), or unset it"
        ) from None
    try:
        client = factory(credentials)
    except ImportError as exc:
        raise UserError(
            f"--live for google_sheets needs gspread: pip install 'toolbench[sheets]' ({exc})"
        ) from None
    scratch = client.create(f"toolbench scratch {os.getpid()} {int(time.time())}")
    cleanup = functools.partial(_delete_once, client, scratch.id, [])
    atexit.register(cleanup)
    upload(json.loads(workbook.path.read_text(encoding="utf-8")), scratch)
    worlds: dict[str, WorldFactory] = {
        sample.id: functools.partial(
            make_live_world,
            client_ref,
            str(Path(credentials).resolve()),
            scratch.id,
            sample.fields["question_sheet_name"],
            bool(sample.fields.get("check_format", False)),
        )
        for sample in samples
    }
    return worlds, cleanup


def upload(workbook: dict[str, Any], scratch: Any) -> None:
    """Every sheet of a ``Spreadsheet.to_dict`` workbook into a (new, empty) spreadsheet."""
    default = scratch.sheet1
    titles = [sheet["title"] for sheet in workbook["sheets"]]
    for sheet in workbook["sheets"]:
        rows, cols = sheet.get("rows", 1000), sheet.get("cols", 26)
        if sheet["title"] == default.title:
            ws = default
            ws.resize(rows, cols)
        else:
            ws = scratch.add_worksheet(sheet["title"], rows=rows, cols=cols)
        if sheet.get("cells"):
            ws.update(sheet["cells"], "A1", value_input_option="USER_ENTERED")
        if sheet.get("formats"):
            ws.batch_format([{"range": a1, "format": f} for a1, f in sheet["formats"].items()])
        for merge in sheet.get("merges", []):
            ws.merge_cells(merge)
    if default.title not in titles:
        scratch.del_worksheet(default)


def _delete_once(client: Any, spreadsheet_id: str, done: list[bool]) -> None:
    if done:
        return
    done.append(True)
    with contextlib.suppress(Exception):  # ending anyway; a leftover sheet is harmless
        client.del_spreadsheet(spreadsheet_id)
