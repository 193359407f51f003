"""Why a manipulated instance is rejected: the codes people and the automatic checks use.

``REVIEW_REASONS`` holds the criteria a reviewer applies by hand, keyed by manipulation, in the
spirit of the paper's verification step: a manipulated instance stays only if the request
really cannot be served with what the dialogue and the offered APIs give; ``reasons_for``
gives a manipulation's list, and ``GENERIC_REASONS`` for a manipulation the table does not
cover (it still separates "not actually incomplete" from "unnatural", the two failure families
the paper filtered for). ``AUTO_REASONS`` are
the checks that run before anyone looks (``toolbench.aware.manipulate.utterance_removal``); an
automatic rejection is stored as ``"<code>: <details>"`` so the code can be read back with
``reason_code``.

Codes are stable: they are written into datasets and counted in reports, so rename one only
together with a migration of the files that use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_UTTERANCE_REMOVAL = {
    "nonessential_removed": (
        "Only information the call does not need was removed: the offered APIs can still "
        "fulfil the request."
    ),
    "request_still_served": (
        "One of several requests lost its information, but the remaining requests can still "
        "be served by calls to the offered APIs."
    ),
    "unnatural": "The dialogue became unnatural or ungrammatical.",
    "identical": "The result is the same as the original instance.",
    "last_turn_not_user": (
        "The last utterance no longer comes from (or pertains to) the user, so calling an API "
        "in the next turn would be unnatural."
    ),
}

_API_REPLACEMENT = {
    "alternative_api": (
        "The request can still be fulfilled with another of the offered APIs (an alternative "
        "to the one replaced)."
    ),
    "non_replaced_api": "The request can still be handled by APIs that were not replaced.",
    "unnatural": "The replacement API makes the instance unnatural (e.g. an unrelated domain).",
}

# Our own tasks' twins are exact by construction except google_sheets tool removal, whose
# worksheet keeps general-purpose writes; a reviewer checks those.
_TOOL_REMOVAL = {
    "alternative_api": (
        "The request can still be fulfilled with the APIs left (e.g. a general-purpose write "
        "such as update or batch_update)."
    ),
}
_SLOT_REMOVAL = {
    "nonessential_removed": "The removed words were not needed: the call can still be made.",
    "unnatural": "The request became unnatural or ungrammatical.",
}
_OTHER = {"other": "Another reason (write it in the note)."}

#: Manipulation -> (code -> what the reviewer checked). Read-only.
REVIEW_REASONS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "utterance_removal": MappingProxyType(_UTTERANCE_REMOVAL | _OTHER),
        "api_replacement": MappingProxyType(_API_REPLACEMENT | _OTHER),
        "tool_removal": MappingProxyType(_TOOL_REMOVAL | _OTHER),
        "slot_removal": MappingProxyType(_SLOT_REMOVAL | _OTHER),
    }
)

#: The reasons for a manipulation ``REVIEW_REASONS`` does not cover. Read-only.
GENERIC_REASONS: Mapping[str, str] = MappingProxyType(
    {
        "not_incomplete": "the request can still be served",
        "unnatural": "the dialogue is unnatural or ungrammatical",
        "other": "other (type a note)",
    }
)


def reasons_for(manipulation: str) -> dict[str, str]:
    """Reason code -> text for rejecting an instance made by ``manipulation`` (ordered)."""
    return dict(REVIEW_REASONS.get(manipulation) or GENERIC_REASONS)


#: Codes of the automatic utterance-removal checks -> what they catch. Read-only.
AUTO_REASONS: Mapping[str, str] = MappingProxyType(
    {
        "unparseable": "The model's reply held no rewrite that could be read.",
        "broken_dialogue": (
            "The rewrite cannot stand in the dialogue: no such user turn, empty, much longer "
            "than the original, role names in the text, or the dialogue no longer ends with "
            "the user."
        ),
        "unchanged": "The rewritten utterance says the same words as the original.",
        "nothing_removed": (
            "Nothing of the original utterance is verifiably gone: no removed text listed, or "
            "a listed span was not in the original or is still in the rewrite."
        ),
        "values_still_present": (
            "What was removed is still said by the user: a gold call whose every argument "
            "value the user still says verbatim, or a removed value or span that another user "
            "turn still says (only user turns count; values match whole, not inside words)."
        ),
    }
)

#: Codes an automatic step puts on a *pending* instance to tell the reviewer what it could not
#: check (not rejections). Read-only.
AUTO_NOTES: Mapping[str, str] = MappingProxyType(
    {
        "values_unchecked": (
            "No gold call with argument values (e.g. a ToolBench/StableToolBench instance), so "
            "whether the removed information is still said could not be checked automatically; "
            "the reviewer judges whether the request can still be served."
        ),
    }
)


def reason_code(reason: str) -> str:
    """The code of a stored reason: ``"nothing_removed: 'x' is still there"`` -> the code."""
    return reason.split(":", 1)[0].strip()
