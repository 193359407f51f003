"""The prompts of every awareness mode, in our own words (``toolbench aware prompt`` shows them).

* explicit: "can the listed APIs be called to fulfil the request?", answered Yes or No, with
  optional demonstrations given as earlier user/assistant exchanges (how chat models learn a
  format best);
* implicit: the model simply continues the dialogue as an assistant that may call an API with an
  ``API-Request: [Name(key=value)]`` line (API-Bank's notation), or natively through ``tools``;
* feedback: the explicit question asked after a call and its result are shown;
* explain: after a "No", the model is asked what is missing;
* judge: another model grades that explanation against what the dataset says was missing.

``PROMPT_VERSION`` is part of every run's fingerprint: change it when a prompt's words change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.aware.evaluate.render import render_apis, render_dialogue
from toolbench.aware.schema import Instance

PROMPT_VERSION = 1

Messages = tuple[dict[str, str], ...]

EXPLICIT_SYSTEM = (
    "You review whether an AI assistant is able to act on a user's request with the APIs it "
    "has. You see the list of available APIs and the conversation so far. The answer is Yes "
    "only if both hold: (1) an API in the list can do what the user's latest request needs, "
    "and (2) the conversation already gives every value that the call requires, so nothing "
    "would have to be guessed. Otherwise the answer is No. Reply with the single word Yes or No."
)

EXPLICIT_QUESTION = (
    "Can the assistant fulfil the user's request by calling the available APIs now? "
    "Answer Yes or No."
)

IMPLICIT_SYSTEM = (
    "You are an AI assistant that can call APIs for the user. Available APIs:\n{apis}\n\n"
    "To call an API, reply with one line in exactly this form and nothing else:\n"
    "API-Request: [ApiName(key1='value1', key2='value2')]\n"
    "Otherwise reply to the user in plain text."
)

TOOLS_SYSTEM = (
    "You are an AI assistant. Use the provided tools when one of them can fulfil the user's "
    "request; otherwise reply to the user in plain text."
)

FEEDBACK_QUESTION = (
    "Looking at the conversation, the APIs and the result of that call: did the conversation "
    "give the assistant everything it needed to fulfil the user's request with the available "
    "APIs? Answer Yes or No."
)

EXPLAIN_REQUEST = (
    "You answered No. In one or two sentences, say exactly what is missing: which needed API "
    "is not available, or which information the user has not given."
)

JUDGE_SYSTEM = (
    "You grade explanations. An assistant was shown a conversation and a list of APIs that "
    "were deliberately made insufficient, and it explained what was missing. Compare its "
    "explanation with the reference, which says what was actually made missing. The "
    "explanation is Correct if it identifies that missing API or missing information (other "
    "wording is fine, extra remarks are fine); it is Incorrect if it names something else or "
    "nothing specific. Reply with Correct or Incorrect on the first line, then one short reason."
)


@dataclass(frozen=True)
class Demonstration:
    """An instance shown as a solved example, with the answer it should get."""

    instance: Instance

    @property
    def answer(self) -> str:
        return "Yes" if self.instance.label == "complete" else "No"


def explicit_user_message(instance: Instance) -> str:
    return (
        f"Available APIs:\n{render_apis(instance.apis)}\n\n"
        f"Conversation:\n{render_dialogue(instance.dialogue)}\n\n{EXPLICIT_QUESTION}"
    )


def explicit_messages(instance: Instance, demos: Sequence[Demonstration] = ()) -> Messages:
    messages = [{"role": "system", "content": EXPLICIT_SYSTEM}]
    for demo in demos:
        messages.append({"role": "user", "content": explicit_user_message(demo.instance)})
        messages.append({"role": "assistant", "content": demo.answer})
    messages.append({"role": "user", "content": explicit_user_message(instance)})
    return tuple(messages)


def dialogue_messages(instance: Instance) -> list[dict[str, str]]:
    """The dialogue as chat turns; tool results become assistant turns (API-Bank style text)."""
    messages: list[dict[str, str]] = []
    for turn in instance.dialogue:
        role = "user" if turn.role == "user" else "assistant"
        content = turn.content.strip()
        if turn.role == "tool":
            content = f"[API result{f' of {turn.tool_name}' if turn.tool_name else ''}] {content}"
        if messages and messages[-1]["role"] == role:  # keep roles alternating
            messages[-1]["content"] += "\n" + content
        else:
            messages.append({"role": role, "content": content})
    return messages


def implicit_messages(instance: Instance) -> Messages:
    system = IMPLICIT_SYSTEM.format(apis=render_apis(instance.apis))
    return ({"role": "system", "content": system}, *dialogue_messages(instance))


def tools_messages(instance: Instance) -> Messages:
    return ({"role": "system", "content": TOOLS_SYSTEM}, *dialogue_messages(instance))


def feedback_messages(instance: Instance, call: str, result: str) -> Messages:
    user = (
        f"Available APIs:\n{render_apis(instance.apis)}\n\n"
        f"Conversation:\n{render_dialogue(instance.dialogue)}\n\n"
        f"The assistant then made this call:\nAPI-Request: {call}\n"
        f"The call returned:\n{result}\n\n{FEEDBACK_QUESTION}"
    )
    return ({"role": "system", "content": EXPLICIT_SYSTEM}, {"role": "user", "content": user})


def explain_messages(instance: Instance, explicit_reply: str) -> Messages:
    return (
        *explicit_messages(instance),
        {"role": "assistant", "content": explicit_reply.strip() or "No"},
        {"role": "user", "content": EXPLAIN_REQUEST},
    )


def reference_for(instance: Instance) -> str:
    """What was made missing, in words a judge can compare an explanation with."""
    p = instance.provenance
    parts = []
    if p.missing:
        parts.append(p.missing)
    for r in p.replacements:
        parts.append(
            f"The needed API {r.original} was replaced by the unrelated API {r.replacement}."
        )
    if p.removed_apis:
        parts.append(f"These needed APIs were removed: {', '.join(p.removed_apis)}.")
    if p.removed_text:
        quoted = "; ".join(f'"{t}"' for t in p.removed_text)
        parts.append(f"These words were removed from the user's messages: {quoted}.")
    if p.removed_slots:
        parts.append(f"The values of {', '.join(p.removed_slots)} are no longer given.")
    return " ".join(parts) or "(the dataset does not say what is missing)"


def judge_messages(instance: Instance, explanation: str) -> Messages:
    user = (
        f"Available APIs:\n{render_apis(instance.apis)}\n\n"
        f"Conversation:\n{render_dialogue(instance.dialogue)}\n\n"
        f"Reference (what was made missing): {reference_for(instance)}\n\n"
        f"Assistant's explanation: {explanation.strip()}\n\n"
        "Is the explanation Correct or Incorrect?"
    )
    return ({"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user})
