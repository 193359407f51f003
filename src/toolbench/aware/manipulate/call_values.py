"""The argument values of a gold call, and whether a text still says one of them.

Split from ``utterance_removal`` so the automatic checks (``removal_checks``) and the twin
builder share one definition of "the user said this value": whole values at token
boundaries (``pass`` is not in ``password``, 3 is not in 2023), case-, space- and
quote-insensitive, with the usual surface forms of numbers and ISO times. Gold calls are read
with ``ast``/``json``/string operations only, never evaluated.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolbench.aware.schema import Turn
from toolbench.aware.sources._calls import parse_calls

# -- values of a gold call ----------------------------------------------------------------------

Scalar = str | int | float


@dataclass(frozen=True)
class CallValue:
    """One argument value of a gold call: the API it goes to, the argument, the value."""

    call: str
    slot: str
    value: Scalar


_NAME_KEYS = ("name", "api_name", "api", "function", "tool")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "param_dict", "input")
_SECRET_QUERY_KEYS = frozenset({"appid", "api_key", "apikey", "key", "token", "access_token"})


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _leaves(value: Any, slot: str, depth: int = 0) -> Iterator[tuple[str, Scalar]]:
    """Scalar leaves of decoded JSON; dict keys become the slot of what is under them."""
    if depth > 20:
        return
    if _scalar(value):
        yield slot, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, str(key), depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, slot, depth + 1)


def _node_leaves(node: ast.expr, slot: str, depth: int = 0) -> Iterator[tuple[str, Scalar]]:
    """Literal leaves of an expression, read from the tree (never ``eval``/``literal_eval``)."""
    if depth > 20:
        return
    if isinstance(node, ast.Constant):
        constant = node.value
        if isinstance(constant, (str, int, float)) and not isinstance(constant, bool):
            yield slot, constant
    elif (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        number = node.operand.value
        yield slot, -number if isinstance(node.op, ast.USub) else number
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for element in node.elts:
            yield from _node_leaves(element, slot, depth + 1)
    elif isinstance(node, ast.Dict):
        for key, item in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield from _node_leaves(item, key.value, depth + 1)
            elif key is None:  # {**other}: the other dict's literal leaves, if any
                yield from _node_leaves(item, slot, depth + 1)
    # Names, nested calls (visited on their own), f-strings...: not a value of this call.


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return "?"


def _python_values(text: str) -> list[CallValue] | None:
    """Values of every call in Python syntax (``Name(k='v')``, ``[A(..), B(..)]``, programs)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if not calls:
        if (
            len(tree.body) == 1
            and isinstance(tree.body[0], ast.Expr)
            and isinstance(tree.body[0].value, (ast.Dict, ast.List))
        ):
            return None  # a JSON object or list: the JSON reader knows its shapes
        return []
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    values: list[CallValue] = []
    for call in calls:
        name = _call_name(call.func)
        for position, argument in enumerate(call.args):
            slot = name if len(call.args) == 1 else f"{name}[{position}]"
            values.extend(CallValue(name, s, v) for s, v in _node_leaves(argument, slot))
        for keyword in call.keywords:
            slot = keyword.arg or name
            if isinstance(keyword.value, ast.Name) and keyword.arg is not None:
                # API-Bank writes some string values unquoted (``mode=w``) and reads them as
                # the word; positional names are program variables and are skipped.
                values.append(CallValue(name, slot, keyword.value.id))
                continue
            values.extend(CallValue(name, s, v) for s, v in _node_leaves(keyword.value, slot))
    return values


def _tolerant_values(text: str) -> list[CallValue] | None:
    """API-Bank's own tolerant reading (``content='John's team'`` is one value), for call text
    that is not Python syntax; None when that does not read it either."""
    try:
        calls = parse_calls(text)
    except (ValueError, RecursionError, MemoryError):
        return None
    values: list[CallValue] = []
    for call in calls:
        name = call.name.rsplit(".", 1)[-1]
        for position, argument in enumerate(call.args):
            slot = name if len(call.args) == 1 else f"{name}[{position}]"
            values.extend(CallValue(name, s, v) for s, v in _leaves(argument, slot))
        for key, argument in call.kwargs.items():
            values.extend(CallValue(name, s, v) for s, v in _leaves(argument, key))
    return values


def _json_call_values(obj: Any, depth: int = 0) -> list[CallValue]:
    """Values of JSON-shaped calls: ``{"name": .., "arguments": {..}}`` (arguments may be a
    JSON string, as in OpenAI tool calls), a bare argument object, or a list of those."""
    if depth > 5:
        return []
    if isinstance(obj, list):
        return [value for item in obj for value in _json_call_values(item, depth + 1)]
    if not isinstance(obj, dict):
        return []
    name = next((str(obj[key]) for key in _NAME_KEYS if isinstance(obj.get(key), str)), "")
    for key in _ARGUMENT_KEYS:
        if key in obj:
            arguments = obj[key]
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except (ValueError, RecursionError):
                    return [CallValue(name, key, arguments)]
            return [CallValue(name, s, v) for s, v in _leaves(arguments, name)]
    rest = {key: value for key, value in obj.items() if key not in _NAME_KEYS}
    return [CallValue(name, s, v) for s, v in _leaves(rest, name)]


def _json_values(text: str) -> list[CallValue]:
    """JSON found in the text: the whole text, else from the first bracket (``Name({..})``)."""
    decoder = json.JSONDecoder()
    for start in (0, text.find("{"), text.find("[")):
        if start < 0:
            continue
        try:
            obj, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        values = _json_call_values(obj)
        if values and start > 0:
            name = text[:start].strip().rstrip("(").strip()
            values = [CallValue(value.call or name, value.slot, value.value) for value in values]
        return values
    return []


def _curl_values(text: str) -> list[CallValue]:
    """Query parameters of the URLs in a curl line (placeholders and API keys left out)."""
    values: list[CallValue] = []
    for url in re.findall(r"https?://[^\s'\"]+", text):
        parts = urlsplit(url)
        name = parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc
        for key, value in parse_qsl(parts.query, keep_blank_values=False):
            if key.lower() in _SECRET_QUERY_KEYS or "{" in value:
                continue
            values.append(CallValue(name, key, value))
    return values


def gold_call_values(call: str) -> list[CallValue]:
    """The literal argument values of one gold call as written in a dataset.

    Reads ``Name(key='v', k2=3)`` (with or without API-Bank's ``API-Request: [...]``, and with
    its quirks: unescaped quotes inside values, bare words), Python
    programs of such calls (every call's arguments; nested calls like ``Loc("Paris")`` too),
    JSON calls (``{"name": .., "arguments": ..}`` or ``Name({..})``) and curl lines. Booleans
    and None are left out: a user never says them verbatim. Unreadable text gives [].
    """
    text = call.strip()
    text = re.sub(r"^\s*API-Request:\s*", "", text, flags=re.I)
    if text.startswith("curl"):
        return _curl_values(text)
    values = _python_values(text)
    if values is None:
        values = _tolerant_values(text)
    if values is not None:
        return values
    return _json_values(text)


# -- finding words and values in text ------------------------------------------------------------

_QUOTE_MAP = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def norm_text(text: str) -> str:
    """Compatibility-normalised, case-folded, straight quotes, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_MAP).casefold()
    return " ".join(text.split())


def word_list(text: str) -> list[str]:
    return re.findall(r"\w+", norm_text(text))


_ISO_SECONDS = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}):00$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _number_forms(number: int | float) -> list[str]:
    if isinstance(number, float):
        if not number.is_integer():
            return [repr(number)]
        number = int(number)
    forms = [str(number)]
    if abs(number) >= 1000:
        forms.append(f"{number:,}")
    return forms


def surface_forms(value: Scalar) -> list[str]:
    """The ways a value may be written verbatim: ``1250`` also as ``1,250``, ``2.0`` as ``2``,
    ``2023-05-09 14:00:00`` also as ``2023-05-09 14:00``. Single letters have none (they would
    match everywhere)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return _number_forms(value)
    text = " ".join(str(value).split())
    if not text or (len(text) == 1 and not text.isdigit()):
        return []
    forms = [text]
    if _NUMBER.match(text):
        # Only a number written canonically gets the other forms: "007" is an id, not 7.
        number: int | float = float(text) if "." in text else int(text)
        alternatives = _number_forms(number)
        if text in alternatives or (isinstance(number, float) and text == repr(number)):
            forms.extend(form for form in alternatives if form not in forms)
    match = _ISO_SECONDS.match(text)
    if match:
        forms.append(f"{match.group(1)} {match.group(2)}")
    return forms


@functools.lru_cache(maxsize=4096)
def _pattern(form: str) -> re.Pattern[str]:
    """Match ``form`` as a whole word or number: 3 is not in 2023, 2.5 is not in 12.5."""
    norm = norm_text(form)
    body = re.escape(norm)
    prefix = suffix = ""
    if norm[:1].isalnum() or norm[:1] == "_":
        prefix = r"(?<!\w)"
        if norm[:1].isdigit():
            prefix += r"(?<!\d[.,])"
    if norm[-1:].isalnum() or norm[-1:] == "_":
        suffix = r"(?!\w)"
        if norm[-1:].isdigit():
            suffix += r"(?![.,]\d)"
    return re.compile(prefix + body + suffix)


def has_form(normalised_text: str, form: str) -> bool:
    return bool(form.strip()) and _pattern(form).search(normalised_text) is not None


def mentions(text: str, value: Scalar) -> bool:
    """Whether ``value`` is written verbatim in ``text`` (case-insensitive, whole words).

    A value of several words with letters also matches with its punctuation ignored on both
    sides ("St. Louis" in "st louis", "New York, NY" in "New York NY"): people drop commas
    and full stops. Single words and numbers do not: "7:30" is not in "7 30", and "pass" is
    never in "password" (token boundaries).
    """
    normalised = norm_text(text)
    if any(has_form(normalised, form) for form in surface_forms(value)):
        return True
    return _token_mention(normalised, value)


def _token_mention(normalised_text: str, value: Scalar) -> bool:
    if not isinstance(value, str) or not any(char.isalpha() for char in value):
        return False
    tokens = word_list(value)
    if len(tokens) < 2:
        return False
    return has_form(" ".join(word_list(normalised_text)), " ".join(tokens))


def _turn_text(turn: Turn) -> str:
    if turn.tool_arguments:
        arguments = json.dumps(turn.tool_arguments, ensure_ascii=False)
        return f"{turn.content}\n{arguments}"
    return turn.content


def dialogue_text(dialogue: Iterable[Turn], *, users_only: bool = False) -> str:
    return "\n".join(_turn_text(turn) for turn in dialogue if turn.role == "user" or not users_only)
