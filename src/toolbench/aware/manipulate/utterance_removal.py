"""Partial removal of a user utterance: a model rewrites the decisive user turn without the
information a call needs, and automatic checks reject the rewrites that evidently failed.

One request per complete instance (see ``rewrite_prompt`` for the prompt). The reply becomes
the incomplete twin ``<id>~utterance_removal``: the dialogue with that user turn replaced, the
removed spans and the model's reasoning in provenance, and a verification that is either
``rejected`` by ``auto`` (with ``"<code>: <details>"`` reasons, codes in
``toolbench.aware.review_reasons.AUTO_REASONS``) or ``pending`` for a person to review.

The automatic checks are deliberately conservative: they reject what is certainly wrong
(nothing changed, nothing verifiably removed, a call whose every value is still said, a turn
that cannot stand in the dialogue) and leave judgement calls (was the removed detail really
needed? is it natural?) to the reviewer. Being strict here would throw away good instances
without anyone seeing them, for example a rewrite that removes a paraphrased date while the
verbatim restaurant name stays; see ``values_still_present`` in ``auto_rejections``.

Failures of the service (``InfraError`` after retries) and replies a scripted model does not
have (``ModelOutputError``) never become instances: they are listed in ``RemovalResult.failed``
so a rerun fills them in, and with the response cache a rerun repeats no successful call.

Gold calls and model replies are parsed with ``ast``/``json`` and string operations only; no
model output or dataset text is ever evaluated.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import functools
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolbench.aware.manipulate.rewrite_prompt import (
    DEMONSTRATIONS,
    RewriteReply,
    parse_rewrite,
    rewrite_messages,
)
from toolbench.aware.manipulate.twin import incomplete_twin
from toolbench.aware.schema import Instance, Manipulation, Turn, Verification
from toolbench.aware.sources._calls import parse_calls
from toolbench.models.base import Model, ModelOutputError
from toolbench.types import GenerationRequest, InfraError, Sample

__all__ = [
    "DEMONSTRATIONS",
    "MANIPULATION",
    "TASK",
    "CallValue",
    "RemovalResult",
    "RewriteReply",
    "auto_rejections",
    "gold_call_values",
    "mentions",
    "parse_rewrite",
    "remove_utterances",
    "rewrite_messages",
    "rewrite_request",
    "twin_from_reply",
]

MANIPULATION: Manipulation = "utterance_removal"
#: The ``Sample.task`` of every request: a ``replay:FILE`` model can be keyed on it.
TASK = "aware-utterance-removal"
MAX_TOKENS = 700
#: How much of the model's reasoning, and of an unreadable reply, provenance keeps.
REASONING_LIMIT = 2000
RAW_REPLY_LIMIT = 4000
#: A rewrite may add a few glue words ("my landlord", "somewhere"); beyond this many extra
#: characters (whichever is larger: this floor or a quarter of the original) it is rewriting,
#: not removing.
LONGER_SLACK_CHARS = 40

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


def _norm(text: str) -> str:
    """Compatibility-normalised, case-folded, straight quotes, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_MAP).casefold()
    return " ".join(text.split())


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", _norm(text))


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
    norm = _norm(form)
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


def _has(normalised_text: str, form: str) -> bool:
    return bool(form.strip()) and _pattern(form).search(normalised_text) is not None


def mentions(text: str, value: Scalar) -> bool:
    """Whether ``value`` is written verbatim in ``text`` (case-insensitive, whole words)."""
    normalised = _norm(text)
    return any(_has(normalised, form) for form in surface_forms(value))


def _turn_text(turn: Turn) -> str:
    if turn.tool_arguments:
        arguments = json.dumps(turn.tool_arguments, ensure_ascii=False)
        return f"{turn.content}\n{arguments}"
    return turn.content


def _dialogue_text(dialogue: Iterable[Turn], *, users_only: bool = False) -> str:
    return "\n".join(_turn_text(turn) for turn in dialogue if turn.role == "user" or not users_only)


# -- the automatic checks --------------------------------------------------------------------

_CODES = ("broken_dialogue", "unchanged", "nothing_removed", "values_still_present")
_ROLE_PREFIX = re.compile(
    r"^\s*(?:(?:user|ai|assistant|system|human|bot|api|tool|api-request)(?:\s+turn\s*\d+)?"
    r"\s*[:：]|\[\s*(?:user|assistant|tool)\b[^\]]*\])",
    re.I | re.M,
)


def _show(value: Scalar) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _replaced(dialogue: list[Turn], index: int, rewritten: str) -> list[Turn]:
    turns = list(dialogue)
    turns[index] = turns[index].model_copy(update={"content": rewritten})
    return turns


def _still_callable(gold: str, before: str, after: str) -> list[CallValue] | None:
    """The values of ``gold`` when every one was said verbatim before and still is after.

    Only then is the call certainly still possible. A call with a value the dialogue never
    states verbatim (a date the user paraphrased, a default) is left to the reviewer: the
    rewrite may well have removed exactly that.
    """
    values = gold_call_values(gold)
    if not values:
        return None
    for value in values:
        if not mentions(before, value.value) or not mentions(after, value.value):
            return None
    return values


def auto_rejections(
    original: Instance, turn_index: int | None, rewritten: str, removed: Iterable[str]
) -> list[str]:
    """Why the rewrite of ``original.dialogue[turn_index]`` is certainly not usable, as
    ``"<code>: <details>"`` strings (at most one per code, in a fixed order); [] if none.

    ``turn_index`` indexes the whole dialogue (0 = first turn); None means the reply named no
    user turn that exists. The codes:

    * ``broken_dialogue``: no such turn, or not a user turn (then nothing else is checked);
      an empty rewrite; a rewrite more than ``max(LONGER_SLACK_CHARS, 25%)`` characters longer
      than the original; role names ("User:", "AI:", "[Assistant]") in it; or the dialogue
      ended with the user and no longer does.
    * ``unchanged``: the same words as the original, ignoring case, spacing and punctuation.
      The other checks are skipped: they would only restate it.
    * ``nothing_removed``: no removed span listed; a span that was not in the original
      utterance or is still in the rewrite; or no word of the original is missing.
    * ``values_still_present``: some gold call is certainly still possible, because every
      argument value it takes was said verbatim in the original dialogue and still is in the
      rewritten one (in any turn: an assistant repeating the value gives it away too).
      Values the user paraphrased cannot be traced, so a call that has one is not judged here.
    """
    dialogue = original.dialogue
    if turn_index is None or not 0 <= turn_index < len(dialogue):
        where = "no turn" if turn_index is None else f"turn index {turn_index}"
        return [
            f"broken_dialogue: the reply names {where}; the dialogue has "
            f"{len(original.user_turns())} user turn(s) in {len(dialogue)} turns"
        ]
    if dialogue[turn_index].role != "user":
        return [
            f"broken_dialogue: turn index {turn_index} is a {dialogue[turn_index].role} turn, "
            "not a user turn"
        ]
    before = dialogue[turn_index].content
    after = rewritten.strip()
    if _words(after) == _words(before):
        return ["unchanged: the rewrite has the same words as the original utterance"]

    found: dict[str, list[str]] = {code: [] for code in _CODES}
    if not after:
        found["broken_dialogue"].append("the rewrite is empty")
    allowed = len(_norm(before)) + max(LONGER_SLACK_CHARS, len(_norm(before)) // 4)
    if len(_norm(after)) > allowed:
        found["broken_dialogue"].append(
            f"the rewrite has {len(_norm(after))} characters where the original has "
            f"{len(_norm(before))}; a removal may add a few words, not this many"
        )
    prefix = _ROLE_PREFIX.search(after)
    if prefix:
        found["broken_dialogue"].append(
            f"the rewrite contains a role name ({prefix.group(0).strip()!r})"
        )
    new_dialogue = _replaced(dialogue, turn_index, after)
    spoken = [turn for turn in new_dialogue if turn.content.strip()]
    if dialogue[-1].role == "user" and (not spoken or spoken[-1].role != "user"):
        found["broken_dialogue"].append("the dialogue no longer ends with the user speaking")

    spans = [span.strip() for span in removed if span.strip()]
    if not spans:
        found["nothing_removed"].append("the reply lists no removed text")
    original_norm, after_norm = _norm(before), _norm(after)
    for span in spans:
        if not _has(original_norm, span):
            found["nothing_removed"].append(f"{span!r} is not in the original utterance")
        elif _has(after_norm, span):
            found["nothing_removed"].append(f"{span!r} is still in the rewrite")
    if not Counter(_words(before)) - Counter(_words(after)):
        found["nothing_removed"].append("every word of the original utterance is still there")

    before_text, after_text = _dialogue_text(dialogue), _dialogue_text(new_dialogue)
    for gold in original.gold_calls:
        values = _still_callable(gold, before_text, after_text)
        if values:
            names = ", ".join(dict.fromkeys(value.call for value in values))
            shown = ", ".join(dict.fromkeys(_show(value.value) for value in values))
            found["values_still_present"].append(
                f"{names} can still be called: {shown} still said verbatim"
            )
    return [f"{code}: {'; '.join(found[code])}" for code in _CODES if found[code]]


def _value_changes(original: Instance, new_dialogue: list[Turn]) -> tuple[list[str], list[Scalar]]:
    """(slots whose user-stated value is gone, user-stated values still said) over all golds.

    For provenance and the reviewer: which arguments the rewrite took away, and which values
    the user said verbatim that are still there (harmless for one of several arguments, a
    warning sign when it is the one the rewrite was meant to remove).
    """
    before = _dialogue_text(original.dialogue, users_only=True)
    after = _dialogue_text(new_dialogue)
    gone: dict[str, None] = {}
    kept: dict[Scalar, None] = {}
    for gold in original.gold_calls:
        for value in gold_call_values(gold):
            if not mentions(before, value.value):
                continue
            if mentions(after, value.value):
                kept[value.value] = None
            else:
                gone[value.slot] = None
    return list(gone), list(kept)


# -- building the twin --------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dialogue_index(original: Instance, reply: RewriteReply) -> tuple[int | None, bool]:
    """(dialogue index of the user turn the reply means, whether it had to be inferred).

    The reply counts user turns from 1 as the prompt shows them. With a single user turn any
    number means that turn. A missing number is inferred as the user turn the rewrite is most
    like; an out-of-range number with several user turns is an error (None).
    """
    users = [index for index, turn in enumerate(original.dialogue) if turn.role == "user"]
    if reply.turn is not None and 1 <= reply.turn <= len(users):
        return users[reply.turn - 1], False
    if len(users) == 1:
        return users[0], reply.turn != 1
    if reply.turn is None and users:
        target = _norm(reply.rewritten)[:2000]  # bounds the quadratic matcher on long replies

        def likeness(index: int) -> float:
            matcher = difflib.SequenceMatcher(None, _norm(original.dialogue[index].content), target)
            return matcher.ratio()

        best = max(reversed(users), key=likeness)  # ties go to the later turn
        return best, True
    return None, False


def _missing(removed: Iterable[str]) -> str:
    spans = [span for span in removed if span.strip()]
    if not spans:
        return ""
    return "The user no longer says: " + ", ".join(json.dumps(s, ensure_ascii=False) for s in spans)


def twin_from_reply(original: Instance, reply: str, *, generator: str, seed: int) -> Instance:
    """The incomplete twin of ``original`` from the model's raw reply text.

    Always returns an instance (rejected when the reply is unusable), so a reviewer can see
    what the model did; only a missing reply (a service failure) produces no instance.
    """
    parsed = parse_rewrite(reply)
    if parsed is None:
        why = (
            'no JSON object with "rewritten" and no "Rewritten:" line in the reply'
            if reply.strip()
            else "the reply is empty"
        )
        rejected = Verification(status="rejected", reasons=[f"unparseable: {why}"], by="auto")
        return incomplete_twin(
            original,
            MANIPULATION,
            verification=rejected,
            generator=generator,
            seed=seed,
            notes={"raw_reply": _clip(reply, RAW_REPLY_LIMIT)},
        )
    index, inferred = _dialogue_index(original, parsed)
    reasons = auto_rejections(original, index, parsed.rewritten, parsed.removed)
    notes: dict[str, Any] = {
        "turn": index,
        "user_turn": parsed.turn,
        "reasoning": _clip(parsed.reasoning, REASONING_LIMIT),
    }
    if inferred:
        notes["turn_inferred"] = True
    dialogue = list(original.dialogue)
    removed_slots: list[str] = []
    if index is not None and original.dialogue[index].role == "user":
        dialogue = _replaced(dialogue, index, parsed.rewritten)
        removed_slots, kept = _value_changes(original, dialogue)
        if kept:
            notes["values_kept"] = kept
    verification = (
        Verification(status="rejected", reasons=reasons, by="auto")
        if reasons
        else Verification(status="pending")
    )
    return incomplete_twin(
        original,
        MANIPULATION,
        dialogue=dialogue,
        verification=verification,
        removed_text=list(parsed.removed),
        removed_slots=removed_slots,
        missing=_missing(parsed.removed),
        generator=generator,
        seed=seed,
        notes=notes,
    )


# -- running it over a dataset -----------------------------------------------------------------


def rewrite_request(instance: Instance, *, seed: int) -> GenerationRequest:
    """The request for one instance. ``sample.id`` is the instance id, so ``replay:FILE`` can
    script the model; the cache key depends only on the messages and settings."""
    users = instance.user_turns()
    return GenerationRequest(
        messages=tuple(rewrite_messages(instance)),
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        seed=seed,
        sample=Sample(
            id=instance.id, task=TASK, query=users[-1].content if users else "", labels=()
        ),
    )


@dataclass
class RemovalResult:
    """Twins in input order; instances the model could not answer for; instances not tried."""

    instances: list[Instance] = field(default_factory=list)
    #: (instance id, one-line error): rerun to fill these in.
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: (instance id, why): not complete, or no user turn to rewrite.
    skipped: list[tuple[str, str]] = field(default_factory=list)


async def remove_utterances(
    instances: Iterable[Instance],
    model: Model,
    *,
    seed: int,
    concurrency: int = 4,
    progress: Callable[[int], None] | None = None,
) -> RemovalResult:
    """One rewrite request per complete instance with a user turn, at most ``concurrency`` at
    a time. ``progress(1)`` is called once per input instance when it is done (or skipped), as
    the other manipulations do. The caller owns (and closes) ``model``."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    result = RemovalResult()
    todo: list[Instance] = []
    for instance in instances:
        if instance.label != "complete":
            result.skipped.append((instance.id, "not a complete instance"))
        elif not instance.user_turns():
            result.skipped.append((instance.id, "no user turn to rewrite"))
        else:
            todo.append(instance)
            continue
        if progress is not None:
            progress(1)

    semaphore = asyncio.Semaphore(concurrency)
    outcomes: list[Instance | tuple[str, str] | None] = [None] * len(todo)

    async def one(position: int, instance: Instance) -> None:
        async with semaphore:
            try:
                generation = await model.generate(rewrite_request(instance, seed=seed))
            except (InfraError, ModelOutputError) as error:
                message = " ".join(str(error).split()) or type(error).__name__
                outcomes[position] = (instance.id, message)
            else:
                outcomes[position] = twin_from_reply(
                    instance, generation.text, generator=model.name, seed=seed
                )
        if progress is not None:
            progress(1)

    await asyncio.gather(*(one(position, instance) for position, instance in enumerate(todo)))
    for outcome in outcomes:
        if isinstance(outcome, Instance):
            result.instances.append(outcome)
        elif outcome is not None:
            result.failed.append(outcome)
    return result
