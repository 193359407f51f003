"""Partial removal of a user utterance: a model rewrites the decisive user turn without the
information a call needs, and automatic checks reject the rewrites that evidently failed.

One request per complete instance (see ``rewrite_prompt`` for the prompt). The reply becomes
the incomplete twin ``<id>~utterance_removal``: the dialogue with that user turn replaced, the
removed spans and the model's reasoning in provenance, and a verification that is either
``rejected`` by ``auto`` (with ``"<code>: <details>"`` reasons, codes in
``toolbench.aware.review_reasons.AUTO_REASONS``) or ``pending`` for a person to review.

The automatic checks are deliberately conservative: they reject what is certainly wrong
(nothing changed, nothing verifiably removed, a call whose every value the user still says,
a removed value another user turn still says, a turn that cannot stand in the dialogue)
and leave judgement calls (was the removed detail really needed? is it natural?) to the
reviewer. Being strict here would throw away good instances without anyone seeing them, for
example a rewrite that removes a paraphrased date while the
verbatim restaurant name stays; see ``values_still_present`` in ``auto_rejections``
(``removal_checks``; value matching in ``call_values``, the reply reader in ``rewrite_parse``).

Failures of the service (``InfraError`` after retries) and replies a scripted model does not
have (``ModelOutputError``) never become instances: they are listed in ``RemovalResult.failed``
so a rerun fills them in, and with the response cache a rerun repeats no successful call.

Two kinds of removal (``RemovalKind``, chosen per run, recorded as ``removal_kind`` in every
twin's provenance notes): ``missing_argument`` (the default: a clear request with a needed
value gone; prompt in ``rewrite_prompt``) and ``unclear_request`` (the details stay but the
user no longer says what they want done; prompt in ``unclear_prompt``).

Sources without gold calls (ToolBench/StableToolBench instances carry only the relevant API
names) cannot have ``values_still_present`` checked: there are no argument values to look
for. Such a twin is never rejected for that; the other checks still run, and a twin that
passes them stays ``pending`` with the reason ``values_unchecked`` (see
``toolbench.aware.review_reasons.AUTO_NOTES``) so the reviewer knows that judging whether the
request can still be served is entirely theirs.

Gold calls and model replies are parsed with ``ast``/``json`` and string operations only; no
model output or dataset text is ever evaluated.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from toolbench.aware.manipulate.call_values import gold_call_values, norm_text
from toolbench.aware.manipulate.removal_checks import (
    REMOVAL_KINDS,
    RemovalKind,
    auto_rejections,
    replaced_turn,
    value_changes,
)
from toolbench.aware.manipulate.rewrite_parse import RewriteReply, parse_rewrite
from toolbench.aware.manipulate.rewrite_prompt import rewrite_messages
from toolbench.aware.manipulate.twin import incomplete_twin
from toolbench.aware.manipulate.unclear_prompt import unclear_messages
from toolbench.aware.review_reasons import AUTO_NOTES
from toolbench.aware.schema import Instance, Manipulation, Verification
from toolbench.errors import UserError, did_you_mean
from toolbench.models.base import Model, ModelOutputError
from toolbench.types import GenerationRequest, InfraError, Sample

MANIPULATION: Manipulation = "utterance_removal"
#: The ``Sample.task`` of every request: a ``replay:FILE`` model can be keyed on it.
TASK = "aware-utterance-removal"
#: Room for the JSON answer and the explanation after it, and headroom for a model that
#: reasons first anyway: a reply cut by the budget before its answer is lost.
MAX_TOKENS = 2048
#: How much of the model's reasoning, and of an unreadable reply, provenance keeps.
REASONING_LIMIT = 2000
RAW_REPLY_LIMIT = 4000

#: The pending twin's reason when there is no gold call to check values against.
VALUES_UNCHECKED = "values_unchecked: " + AUTO_NOTES["values_unchecked"]


def parse_removal_kind(text: str) -> RemovalKind:
    """``--removal-kind`` text -> the kind, or a one-line ``UserError`` naming the choices."""
    for kind in REMOVAL_KINDS:
        if text == kind:
            return kind
    raise UserError(f"--removal-kind '{text}'{did_you_mean(text, REMOVAL_KINDS)}")


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
        target = norm_text(reply.rewritten)[:2000]  # bounds the quadratic matcher on long replies

        def likeness(index: int) -> float:
            matcher = difflib.SequenceMatcher(
                None, norm_text(original.dialogue[index].content), target
            )
            return matcher.ratio()

        best = max(reversed(users), key=likeness)  # ties go to the later turn
        return best, True
    return None, False


def _missing(removed: Iterable[str], kind: RemovalKind) -> str:
    spans = [span for span in removed if span.strip()]
    if not spans:
        return ""
    shown = ", ".join(json.dumps(s, ensure_ascii=False) for s in spans)
    if kind == "unclear_request":
        return "The user no longer says clearly what they want done; removed: " + shown
    return "The user no longer says: " + shown


def _verification(original: Instance, reasons: list[str], kind: RemovalKind) -> Verification:
    """Rejected by ``auto`` when a check failed; else pending, with ``values_unchecked`` when
    the missing-argument check had no gold values to work with (ToolBench-side sources)."""
    if reasons:
        return Verification(status="rejected", reasons=reasons, by="auto")
    if kind == "missing_argument" and not any(map(gold_call_values, original.gold_calls)):
        return Verification(status="pending", reasons=[VALUES_UNCHECKED], by="auto")
    return Verification(status="pending")


def _unparseable(original: Instance, reply: str, notes: dict[str, Any], **kw: Any) -> Instance:
    why = (
        'no JSON object with "rewritten" and no "Rewritten:" line in the reply'
        if reply.strip()
        else "the reply is empty"
    )
    rejected = Verification(status="rejected", reasons=[f"unparseable: {why}"], by="auto")
    notes["raw_reply"] = _clip(reply, RAW_REPLY_LIMIT)
    return incomplete_twin(original, MANIPULATION, verification=rejected, notes=notes, **kw)


def twin_from_reply(
    original: Instance,
    reply: str,
    *,
    generator: str,
    seed: int,
    kind: RemovalKind = "missing_argument",
) -> Instance:
    """The incomplete twin of ``original`` from the model's raw reply text.

    Always returns an instance (rejected when the reply is unusable), so a reviewer can see
    what the model did; only a missing reply (a service failure) produces no instance.
    """
    notes: dict[str, Any] = {"removal_kind": kind}
    parsed = parse_rewrite(reply)
    if parsed is None:
        return _unparseable(original, reply, notes, generator=generator, seed=seed)
    index, inferred = _dialogue_index(original, parsed)
    reasons = auto_rejections(original, index, parsed.rewritten, parsed.removed, kind)
    notes.update(
        turn=index, user_turn=parsed.turn, reasoning=_clip(parsed.reasoning, REASONING_LIMIT)
    )
    if inferred:
        notes["turn_inferred"] = True
    dialogue = list(original.dialogue)
    removed_slots: list[str] = []
    if index is not None and original.dialogue[index].role == "user":
        dialogue = replaced_turn(dialogue, index, parsed.rewritten)
        removed_slots, kept = value_changes(original, dialogue)
        if kept:
            notes["values_kept"] = kept
    return incomplete_twin(
        original,
        MANIPULATION,
        dialogue=dialogue,
        verification=_verification(original, reasons, kind),
        removed_text=list(parsed.removed),
        removed_slots=removed_slots if kind == "missing_argument" else [],
        missing=_missing(parsed.removed, kind),
        generator=generator,
        seed=seed,
        notes=notes,
    )


# -- running it over a dataset -----------------------------------------------------------------


def rewrite_request(
    instance: Instance, *, seed: int, kind: RemovalKind = "missing_argument"
) -> GenerationRequest:
    """The request for one instance. ``sample.id`` is the instance id, so ``replay:FILE`` can
    script the model; the cache key depends only on the messages (which differ by ``kind``)
    and settings."""
    users = instance.user_turns()
    messages = unclear_messages(instance) if kind == "unclear_request" else None
    return GenerationRequest(
        messages=tuple(messages or rewrite_messages(instance)),
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
    kind: RemovalKind = "missing_argument",
) -> RemovalResult:
    """One rewrite request per complete instance with a user turn, at most ``concurrency`` at
    a time. ``progress(1)`` is called once per input instance when it is done (or skipped), as
    the other manipulations do. The caller owns (and closes) ``model``."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if kind not in REMOVAL_KINDS:
        raise ValueError(f"unknown removal kind {kind!r}; choose from {', '.join(REMOVAL_KINDS)}")
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
                request = rewrite_request(instance, seed=seed, kind=kind)
                generation = await model.generate(request)
            except (InfraError, ModelOutputError) as error:
                message = " ".join(str(error).split()) or type(error).__name__
                outcomes[position] = (instance.id, message)
            else:
                outcomes[position] = twin_from_reply(
                    instance, generation.text, generator=model.name, seed=seed, kind=kind
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
