"""Utterance-removal checks on real-data shapes: user turns only, values matched whole, a value
still said in another user turn, gold-less sources, the answer-first budget, and the
"unclear request" kind of removal. All test data is written for these tests."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from toolbench.aware.manipulate.call_values import mentions
from toolbench.aware.manipulate.removal_checks import REMOVAL_KINDS, auto_rejections
from toolbench.aware.manipulate.rewrite_parse import MAX_REPLY_CHARS, parse_rewrite
from toolbench.aware.manipulate.unclear_prompt import (
    UNCLEAR_DEMONSTRATIONS,
    UNCLEAR_SYSTEM_PROMPT,
)
from toolbench.aware.manipulate.utterance_removal import (
    MAX_TOKENS,
    VALUES_UNCHECKED,
    parse_removal_kind,
    remove_utterances,
    rewrite_request,
    twin_from_reply,
)
from toolbench.aware.review_reasons import AUTO_NOTES, AUTO_REASONS, reason_code
from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, complete_instance
from toolbench.errors import UserError
from toolbench.types import Generation, GenerationRequest

API = ApiSpec(
    name="Tool",
    description="A stand-in API; the checks read gold calls, not schemas.",
    parameters={"type": "object", "properties": {}, "required": []},
)


def make(dialogue: list[Turn], gold: list[str], id: str = "x", source: str = "test") -> Instance:
    return complete_instance(
        id=id,
        source=source,
        dialogue=dialogue,
        apis=[API],
        relevant_apis=["Tool"],
        gold_calls=gold,
        provenance=Provenance(original_id=f"orig-{id}"),
    )


def user(text: str) -> Turn:
    return Turn(role="user", content=text)


def assistant(text: str) -> Turn:
    return Turn(role="assistant", content=text)


def found(instance: Instance, turn: int, rewritten: str, removed: list[str], **kw: Any) -> dict:
    reasons = auto_rejections(instance, turn, rewritten, removed, **kw)
    return {reason_code(reason): reason for reason in reasons}


def reply(turn: int, rewritten: str, removed: list[str], after: str = "Short reason.") -> str:
    body = json.dumps({"turn": turn, "rewritten": rewritten, "removed": removed})
    return f"```json\n{body}\n```\n\n{after}"


# -- values_still_present: user turns only, whole values ------------------------------------


def test_an_assistants_ordinary_word_is_not_the_user_stating_a_value() -> None:
    # The gold value "password" is said by the user in turn 1 only; after the rewrite only the
    # assistant says the word. Before, any turn counted and this was wrongly rejected.
    original = make(
        [
            user("Please reset my password."),
            assistant("Sure, please give me your password reset account name."),
            user("It is kim_l."),
        ],
        ["ResetSecret(kind='password', account='kim_l')"],
    )
    result = found(original, 0, "Please reset my login.", ["password"])
    assert result == {}


def test_a_short_gold_value_does_not_match_inside_a_longer_word() -> None:
    assert not mentions("please give me your password", "pass")
    original = make(
        [user("Log in as kim_l with password pass, please.")],
        ["GetToken(username='kim_l', password='pass')"],
    )
    result = found(original, 0, "Log in as kim_l with my password, please.", ["password pass"])
    assert "values_still_present" not in result


def test_values_match_across_case_spacing_quotes_and_punctuation() -> None:
    assert mentions("book  TRATTORIA   nonna’s table", "Trattoria Nonna's")
    assert mentions("flights to st louis please", "St. Louis")
    assert mentions("an office in New York NY", "New York, NY")
    assert not mentions("a 12.5 kg parcel", 2.5)
    # Punctuation is only ignored for values of several words with letters.
    assert not mentions("my password", "pass")
    assert not mentions("at 7 30", "7:30")
    assert not mentions("new yorker", "New York, NY")


def test_a_fully_stated_call_in_user_turns_is_still_rejected() -> None:
    original = make(
        [user("Transfer 300 to account 7781."), assistant("On it."), user("From savings.")],
        ["Transfer(amount=300, to='7781', source='savings')"],
    )
    # Removing a politeness word leaves every value said by the user.
    result = found(original, 2, "From my savings.", ["From savings."])
    assert "values_still_present" in result
    assert "Transfer can still be called" in result["values_still_present"]


# -- a value still said in another user turn -------------------------------------------------


def _alarm(gold_time: str) -> Instance:
    return make(
        [
            user("Yesterday I set an alarm for 7:30."),
            assistant("I see. What would you like to do with it?"),
            user("Delete the alarm at 7:30, please."),
        ],
        [f"DeleteAlarm(token='t-91', time='{gold_time}')"],
    )


def test_a_time_removed_from_one_turn_but_said_in_an_earlier_turn_is_rejected() -> None:
    # The gold time is not verbatim (ISO form), so only the removed span can show the leak.
    result = found(_alarm("2023-03-16 07:30:00"), 2, "Delete that alarm, please.", ["at 7:30"])
    assert list(result) == ["values_still_present"]
    assert "'7:30' was removed but user turn 1 still says it" in result["values_still_present"]


def test_a_verbatim_gold_value_removed_from_one_turn_but_said_in_another_is_rejected() -> None:
    result = found(_alarm("7:30"), 2, "Delete that alarm, please.", ["the alarm at 7:30"])
    assert "user turn 1 still says it" in result["values_still_present"]


def test_removing_it_from_the_turn_that_says_it_everywhere_passes() -> None:
    original = make(
        [
            user("I want to change an alarm."),
            assistant("Which one?"),
            user("Delete the alarm at 7:30, please."),
        ],
        ["DeleteAlarm(time='7:30')"],
    )
    assert found(original, 2, "Delete the alarm, please.", ["at 7:30"]) == {}


def test_a_short_number_in_another_turn_is_not_evidence() -> None:
    # "10" in the removed span is too common to count as the same value said elsewhere.
    original = make(
        [
            user("I will be 10 minutes late to everything today."),
            assistant("Noted."),
            user("Book a table for four at 10 pm."),
        ],
        ["Book(party=4, time='22:00')"],
    )
    result = found(original, 2, "Book a table for four tonight.", ["at 10 pm"])
    assert "values_still_present" not in result


# -- sources without gold calls (ToolBench/StableToolBench) -----------------------------------


def test_an_instance_without_gold_calls_stays_pending_with_the_unchecked_reason() -> None:
    original = make([user("Find me vegan recipes with lentils.")], [], source="toolbench")
    twin = twin_from_reply(
        original, reply(1, "Find me vegan recipes.", ["with lentils"]), generator="g", seed=0
    )
    assert twin.verification.status == "pending"
    assert twin.verification.reasons == [VALUES_UNCHECKED]
    assert reason_code(VALUES_UNCHECKED) in AUTO_NOTES
    assert reason_code(VALUES_UNCHECKED) not in AUTO_REASONS


def test_an_instance_without_gold_calls_is_still_rejected_for_certain_faults() -> None:
    original = make([user("Find me vegan recipes with lentils.")], [], source="toolbench")
    twin = twin_from_reply(
        original, reply(1, "Find me vegan recipes with lentils.", ["x"]), generator="g", seed=0
    )
    assert twin.verification.status == "rejected"
    assert [reason_code(r) for r in twin.verification.reasons] == ["unchanged"]


# -- the token budget and answer-first replies -------------------------------------------------


def test_the_budget_leaves_room_for_the_answer() -> None:
    request = rewrite_request(make([user("Book a room in Oslo.")], ["Book(city='Oslo')"]), seed=1)
    assert request.max_tokens == MAX_TOKENS >= 2048


def test_an_answer_first_reply_with_a_long_cut_off_explanation_is_read() -> None:
    # A model that writes a long explanation after the answer and is cut off mid-sentence.
    long_tail = "The city is needed because {the API} cannot guess it. " * 2000
    text = reply(1, "Book a room.", ["in Oslo"], after=long_tail[:-17])
    parsed = parse_rewrite(text)
    assert parsed is not None
    assert (parsed.turn, parsed.rewritten, parsed.removed) == (1, "Book a room.", ("in Oslo",))
    assert parsed.reasoning.startswith("The city is needed")


def test_an_answer_first_reply_longer_than_the_read_limit_is_read_in_bounded_time() -> None:
    # Past MAX_REPLY_CHARS, and with more braces after the answer than the backward scan
    # tries: the start of the reply is kept and scanned forward.
    tail = '{"note": 1} {bad ' * (MAX_REPLY_CHARS // 8)
    text = reply(1, "Book a room.", ["in Oslo"], after=tail)
    assert len(text) > MAX_REPLY_CHARS
    started = time.perf_counter()
    parsed = parse_rewrite(text)
    assert time.perf_counter() - started < 5
    assert parsed is not None and parsed.rewritten == "Book a room."


def test_an_explanation_before_the_answer_still_reads() -> None:
    text = "I looked at it.\n```json\n" + json.dumps(
        {"turn": 1, "rewritten": "Hi.", "removed": ["a"]}
    )
    parsed = parse_rewrite(text + "\n```")
    assert parsed is not None and parsed.reasoning == "I looked at it."


# -- the "unclear request" kind ------------------------------------------------------------------


class Scripted:
    """Replies keyed by instance id; keeps the requests it saw."""

    name = "scripted"
    cacheable = False

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Generation:
        assert request.sample is not None
        self.requests.append(request)
        return Generation(text=self.replies[request.sample.id])

    async def aclose(self) -> None:
        return None


def _lamp() -> Instance:
    return make(
        [user("Turn off the kitchen lamp at 11 pm tonight.")],
        ["SwitchLamp(room='kitchen', state='off', at='23:00')"],
        id="lamp",
    )


def test_removal_kinds_and_their_parsing() -> None:
    assert REMOVAL_KINDS == ("missing_argument", "unclear_request")
    assert parse_removal_kind("unclear_request") == "unclear_request"
    with pytest.raises(UserError, match=r"--removal-kind 'unclear'.*unclear_request"):
        parse_removal_kind("unclear")


def test_unclear_request_uses_its_own_prompt_and_records_the_kind() -> None:
    model = Scripted(
        {"lamp": reply(1, "The kitchen lamp at 11 pm tonight, can you handle it?", ["Turn off"])}
    )
    result = asyncio.run(remove_utterances([_lamp()], model, seed=3, kind="unclear_request"))  # type: ignore[arg-type]
    [twin] = result.instances
    assert model.requests[0].messages[0]["content"] == UNCLEAR_SYSTEM_PROMPT
    assert twin.provenance.notes["removal_kind"] == "unclear_request"
    # Every value is still said: expected for this kind, so no values_still_present rejection.
    assert twin.verification.status == "pending" and twin.verification.reasons == []
    assert twin.provenance.removed_slots == []
    assert twin.provenance.missing.startswith("The user no longer says clearly what they want")


def test_the_default_kind_is_missing_argument_and_would_reject_the_same_reply() -> None:
    model = Scripted(
        {"lamp": reply(1, "The kitchen lamp at 11 pm tonight, can you handle it?", ["Turn off"])}
    )
    result = asyncio.run(remove_utterances([_lamp()], model, seed=3))  # type: ignore[arg-type]
    [twin] = result.instances
    assert model.requests[0].messages[0]["content"] != UNCLEAR_SYSTEM_PROMPT
    assert twin.provenance.notes["removal_kind"] == "missing_argument"
    # "off" is gone, but 'kitchen' and '23:00' (not verbatim) leave the call untraceable;
    # the other checks pass, so the twin waits for a reviewer.
    assert twin.verification.status == "pending"


def test_unclear_request_still_gets_the_structural_checks() -> None:
    result = found(
        _lamp(), 0, "Turn off the kitchen lamp at 11 pm tonight.", ["x"], kind="unclear_request"
    )
    assert list(result) == ["unchanged"]


@pytest.mark.parametrize("demo", UNCLEAR_DEMONSTRATIONS, ids=lambda d: d.instance.id)
def test_unclear_demonstrations_pass_the_automatic_checks(demo: Any) -> None:
    answer = demo.answer
    turns = [i for i, t in enumerate(demo.instance.dialogue) if t.role == "user"]
    index = turns[answer["turn"] - 1]
    reasons = auto_rejections(
        demo.instance, index, answer["rewritten"], answer["removed"], kind="unclear_request"
    )
    assert reasons == []
    assert parse_rewrite(demo.reply()) is not None


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown removal kind"):
        asyncio.run(remove_utterances([], Scripted({}), seed=0, kind="vague"))  # type: ignore[arg-type]
