"""An optional judge model for API-replacement twins (``aware build --verify-model SPEC``).

The automatic checks (``replacement_checks``) catch copies by name, tool and numbers; whether
an offered API can still *serve* the request ("generate GUIDs" with a ``uuidv4_generator``
offered) needs reading. The judge gets the dialogue and the offered APIs, with our own prompt,
and answers whether any of them can fully serve the user's last request. Its verdict and
reasoning are stored in the twin's provenance (``notes["judge"]``). A twin it judges still
servable is not kept: the candidate it was built with is excluded and the next-ranked
candidate that passes every check is tried, up to ``ROUNDS`` times; after that the twin is
kept but auto-rejected with the judge's reasoning, so a reviewer sees why.

Replies are hostile input: only the first ``READ_CHARS`` characters are read, the verdict is
the first ``VERDICT: yes|no`` line, and anything else is an unparseable verdict (the twin is
kept pending, with that noted).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.aware.evaluate.render import render_apis, render_dialogue
from toolbench.aware.schema import Instance
from toolbench.models.base import Model, ModelOutputError
from toolbench.types import GenerationRequest, InfraError, Sample

TASK = "aware-verify-replacement"
ROUNDS = 3
READ_CHARS = 4_000
REASONING_CHARS = 600
# "VERDICT: yes" with optional emphasis and spaces; each space belongs to one repetition only
# (written with adjacent ``\s*`` it was cubic: 1,000 blank lines took seconds).
_VERDICT = re.compile(
    r"^[^\S\n]*(?:\*+\s*)?verdict\s*(?:\*+\s*)?[:=]\s*(?:\*+\s*)?(yes|no)\b", re.I | re.M
)

SYSTEM = (
    "You check items of a benchmark about tool use. Each item is a conversation and a list of "
    "APIs an assistant may call. Decide one thing: can any of the listed APIs, called with "
    "arguments taken from the conversation, fully do what the user asks in their last "
    "request? Judge by what each API does according to its name, description and parameters, "
    "not by how similar it sounds. An API that does a related but different job does not count."
)


def judge_request(twin: Instance) -> GenerationRequest:
    user = (
        f"Conversation:\n{render_dialogue(twin.dialogue)}\n\nAPIs:\n{render_apis(twin.apis)}\n\n"
        "Answer with a first line 'VERDICT: yes' (an API can serve the request) or "
        "'VERDICT: no' (none can), then at most two sentences saying which API and why."
    )
    last = twin.user_turns()
    return GenerationRequest(
        messages=({"role": "system", "content": SYSTEM}, {"role": "user", "content": user}),
        max_tokens=300,
        temperature=0.0,
        sample=Sample(id=twin.id, task=TASK, query=last[-1].content if last else "", labels=()),
    )


@dataclass(frozen=True)
class Verdict:
    serves: bool | None  # None: the reply had no verdict line
    reasoning: str

    def as_note(self, model: str) -> dict[str, object]:
        label = {True: "serves", False: "does not serve", None: "unparseable"}[self.serves]
        return {"model": model, "verdict": label, "reasoning": self.reasoning}


def parse_verdict(text: str) -> Verdict:
    head = text[:READ_CHARS]
    found = _VERDICT.search(head)
    if found is None:
        return Verdict(None, " ".join(head.split())[:REASONING_CHARS])
    rest = " ".join(head[found.end() :].split()).lstrip(".:-* ")
    return Verdict(found.group(1).lower() == "yes", rest[:REASONING_CHARS])


async def judge_all(
    twins: Sequence[Instance], model: Model, concurrency: int
) -> dict[str, Verdict | str]:
    """Twin id -> its verdict, or a one-line error when the model could not be asked."""
    semaphore = asyncio.Semaphore(max(1, concurrency))
    found: dict[str, Verdict | str] = {}

    async def one(twin: Instance) -> None:
        async with semaphore:
            try:
                generation = await model.generate(judge_request(twin))
            except (InfraError, ModelOutputError) as error:
                found[twin.id] = " ".join(str(error).split()) or type(error).__name__
                return
        found[twin.id] = parse_verdict(generation.text)

    await asyncio.gather(*(one(twin) for twin in twins))
    return found
