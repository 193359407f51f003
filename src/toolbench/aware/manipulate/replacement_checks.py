"""Automatic pre-verification of API replacements, before any human sees a twin.

A replacement twin is only incomplete if no offered API can still serve the request. An audit
of StableToolBench twins found the most similar candidate is often not a different API at all:
a copy from the same tool ("Judge0 Extra CE" for "Judge0 CE", identical descriptions at 0.98),
a sibling tool of the same family ("Realtor API" / "Realtor Data API", "Demo Project" /
"Demo Project_v2"), or an API whose name says it does the same job (an email validator for
another). 166 of 765 twins (22 %) carried one of these signs. Each check below rejects such a
candidate with its reason; the selection then takes the next-ranked candidate that passes, and
the reasons are recorded in the twin's provenance and counted in the build summary.

Checks, in order (the first that fires is the recorded reason):

* ``same_tool``: the candidate belongs to the original's tool (``origin.tool_name``).
* ``tool_family``: the tools' names are the same once versions and filler words ("api",
  "data", "extra", "v2", "pro", ...) are dropped, or one name's words contain the other's.
* ``near_identical_name``: the API names, normalised (case, separators), have a
  ``difflib`` ratio of at least ``name_ratio`` (0.9).
* ``near_identical_description``: the descriptions, normalised (case, whitespace,
  punctuation), are equal and non-empty, or have a ratio of at least ``description_ratio``
  (0.95).
* ``similarity_ceiling``: cosine similarity at or above ``ceiling`` (default 0.90). The
  default follows the audit of the real StableToolBench twins (that file is not in this repo):
  its copies sat at 0.98-0.9995, and 86 of the 765 twins (11 %) were at or above 0.90.
  ``--similarity-ceiling`` changes it (``none`` turns the check off).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from toolbench.aware.schema import ApiSpec

CHECKS = (
    "same_tool",
    "tool_family",
    "near_identical_name",
    "near_identical_description",
    "similarity_ceiling",
)
DEFAULT_CEILING = 0.90
_FILLER = frozenset(
    {"api", "apis", "data", "extra", "pro", "free", "official", "the", "service", "tool", "v"}
)
_VERSION = re.compile(r"^(?:v\d+(?:\.\d+)*|\d+(?:\.\d+)*)$")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class CheckOptions:
    ceiling: float | None = DEFAULT_CEILING
    name_ratio: float = 0.9
    description_ratio: float = 0.95
    enabled: bool = True

    def as_notes(self) -> dict[str, object]:
        return {
            "similarity_ceiling": self.ceiling,
            "name_ratio": self.name_ratio,
            "description_ratio": self.description_ratio,
        }


@dataclass
class CheckTally:
    """Candidates each check rejected, and twins whose first choice it rejected."""

    candidates: Counter[str] = field(default_factory=Counter)
    twins: Counter[str] = field(default_factory=Counter)

    def merge(self, other: CheckTally) -> None:
        self.candidates.update(other.candidates)
        self.twins.update(other.twins)


def family_words(tool: str) -> frozenset[str]:
    """A tool name's words without versions and filler: its family."""
    words = _WORD.findall(tool.lower().replace("_", " "))
    return frozenset(w for w in words if w not in _FILLER and not _VERSION.match(w))


def _tool(api: ApiSpec) -> str:
    return str(api.origin.get("tool_name") or "").strip()


def _normal_name(name: str) -> str:
    return "".join(_WORD.findall(name.lower()))


def _normal_text(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio() if a and b else 0.0


def rejection(
    original: ApiSpec, candidate: ApiSpec, similarity: float, options: CheckOptions
) -> str | None:
    """``"check: detail"`` for the first check that rejects ``candidate``, else None."""
    if not options.enabled:
        return None
    mine, theirs = _tool(original), _tool(candidate)
    if mine and theirs:
        if mine == theirs:
            return f"same_tool: both from the tool '{mine}'"
        a, b = family_words(mine), family_words(theirs)
        if a and b and (a <= b or b <= a):
            return f"tool_family: '{theirs}' is the same family as '{mine}'"
    name_ratio = _ratio(_normal_name(original.name), _normal_name(candidate.name))
    if name_ratio >= options.name_ratio:
        return f"near_identical_name: '{candidate.name}' ~ '{original.name}' ({name_ratio:.2f})"
    description_ratio = _ratio(
        _normal_text(original.description), _normal_text(candidate.description)
    )
    if description_ratio >= options.description_ratio:
        return f"near_identical_description: ratio {description_ratio:.2f}"
    if options.ceiling is not None and similarity >= options.ceiling:
        return f"similarity_ceiling: {similarity:.6f} >= {options.ceiling}"
    return None


def check_name(reason: str) -> str:
    return reason.partition(":")[0]
