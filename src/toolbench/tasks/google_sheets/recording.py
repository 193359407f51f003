"""The google_sheets world with its worksheet wrapped in a recorder (``agent_world.py``).

A program sees the same names as in ``world.make_world``, but ``worksheet`` is a recorder:
each call of a documented worksheet method runs on the real sheet and is written down with its
arguments and answer as JSON. The snapshot is ``{"result": <the last call's answer>, "calls":
[...]}``: the answer is an agent call's reply, the calls are a gold program's translation.
``set_with_dataframe`` on the recorder is recorded as the one ``update`` (user-entered, from
the frame's corner) that writes the same cells; a call whose arguments are not JSON marks the
program untranslatable.

The module re-exports the sandbox hooks of ``world`` (files, priming, worker preparation): the
sandbox finds them on the factory's module.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from toolbench.sandbox.world import World
from toolbench.tasks.google_sheets import docs
from toolbench.tasks.google_sheets.emulator import Cell, get_as_dataframe, set_with_dataframe
from toolbench.tasks.google_sheets.emulator.a1 import rowcol_to_a1
from toolbench.tasks.google_sheets.world import (
    make_world,
    prepare_sandbox_worker,
    prime_sandbox_worker,
    sandbox_files,
)

__all__ = [
    "make_recording_world",
    "prepare_sandbox_worker",
    "prime_sandbox_worker",
    "sandbox_files",
]

MAX_RESULT_ITEMS = 5_000
TOOL_NAMES = frozenset(
    name for name, doc in docs.FUNCTIONS.items() if doc.splitlines()[-1].startswith("worksheet.")
)


class _NotJson(Exception):
    pass


def as_json(value: Any, depth: int = 0) -> Any:
    """A call's argument or answer as JSON (``_NotJson`` for what has no JSON form)."""
    if depth > 10:
        raise _NotJson("nested too deep")
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson("a number that is not finite")
        return value
    if isinstance(value, Cell):
        return {"row": value.row, "col": value.col, "value": as_json(value.value, depth + 1)}
    if isinstance(value, (list, tuple)):
        return [as_json(item, depth + 1) for item in list(value)[:MAX_RESULT_ITEMS]]
    if isinstance(value, dict):
        return {str(key): as_json(item, depth + 1) for key, item in value.items()}
    raise _NotJson(f"a {type(value).__name__} value")


class SheetRecorder:
    """The question's worksheet for a program, every documented call written down."""

    def __init__(self, worksheet: Any) -> None:
        self._sheet = worksheet
        self._calls: list[dict[str, Any]] = []
        self._result: Any = None

    def __getattr__(self, name: str) -> Any:
        if name not in TOOL_NAMES:
            return getattr(self._sheet, name)
        method = getattr(self._sheet, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            answer = method(*args, **kwargs)
            self._record(name, method, args, kwargs, answer)
            return answer

        return call

    def _record(self, name: str, method: Any, args: Any, kwargs: Any, answer: Any) -> None:
        try:
            bound = inspect.signature(method).bind(*args, **kwargs)
            arguments = {key: as_json(value) for key, value in bound.arguments.items()}
        except (_NotJson, TypeError) as exc:
            self._calls.append({"untranslatable": f"{name}: an argument is {exc}"})
            arguments = None
        if arguments is not None:
            self._calls.append({"name": name, "arguments": arguments})
        try:
            self._result = as_json(answer)
        except _NotJson:
            self._result = str(answer)

    def _record_frame(self, frame: Any, row: int, col: int, header: bool) -> None:
        values = [[as_json(label) for label in frame.columns]] if header else []
        for line in frame.to_numpy("object"):
            values.append([_cell_value(value) for value in line])
        if values:
            label = rowcol_to_a1(row, col)
            arguments = {"values": values, "range_name": label, "raw": False}
            self._calls.append({"name": "update", "arguments": arguments})

    def _snapshot(self) -> dict[str, Any]:
        return {"result": self._result, "calls": self._calls}


def _cell_value(value: Any) -> Any:
    """What set_with_dataframe writes for one frame value (empty for a missing one)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    try:
        return as_json(value)
    except _NotJson:
        return str(value)


def make_recording_world(
    workbook_path: str, digest: str, sheet_title: str, check_format: bool = False
) -> World:
    world = make_world(workbook_path, digest, sheet_title, check_format)
    real = world.namespace["worksheet"]
    recorder = SheetRecorder(real)

    def read_frame(worksheet: Any, *args: Any, **kwargs: Any) -> Any:
        sheet = real if worksheet is recorder else worksheet
        return get_as_dataframe(sheet, *args, **kwargs)

    def write_frame(
        worksheet: Any,
        dataframe: Any,
        row: int = 1,
        col: int = 1,
        include_index: bool = False,
        include_column_header: bool = True,
        **kwargs: Any,
    ) -> None:
        sheet = real if worksheet is recorder else worksheet
        if worksheet is recorder:
            if include_index or kwargs:
                recorder._calls.append({"untranslatable": "set_with_dataframe with options"})
            else:
                recorder._record_frame(dataframe, row, col, include_column_header)
        set_with_dataframe(
            sheet, dataframe, row, col, include_index, include_column_header, **kwargs
        )

    world.namespace.update(
        worksheet=recorder, get_as_dataframe=read_frame, set_with_dataframe=write_frame
    )
    world.snapshot = recorder._snapshot
    return world
