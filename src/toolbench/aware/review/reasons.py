"""The reason codes a reviewer picks from when rejecting an instance.

The paper's rejection criteria per manipulation live in ``toolbench.aware.review_reasons``
(``REVIEW_REASONS``: manipulation -> {code: text}). It is imported lazily, when a review asks
for reasons, so the review tools work before that table exists and for manipulations it does
not cover: those get a generic list that still separates "not actually incomplete" from
"unnatural", the two failure families the paper filtered for.
"""

from __future__ import annotations

import importlib

REASONS_MODULE = "toolbench.aware.review_reasons"

GENERIC_REASONS: dict[str, str] = {
    "not_incomplete": "the request can still be served",
    "unnatural": "the dialogue is unnatural or ungrammatical",
    "other": "other (type a note)",
}


def reasons_for(manipulation: str) -> dict[str, str]:
    """Reason code -> text for rejecting an instance made by ``manipulation`` (ordered)."""
    try:
        module = importlib.import_module(REASONS_MODULE)
    except ModuleNotFoundError as error:
        if error.name != REASONS_MODULE:  # a real bug inside that module must surface
            raise
        return dict(GENERIC_REASONS)
    table = getattr(module, "REVIEW_REASONS", None) or {}
    reasons = table.get(manipulation)
    return dict(reasons) if reasons else dict(GENERIC_REASONS)
