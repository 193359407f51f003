"""Utterance removal end to end: a scripted model, a real OpenAI-compatible server on loopback
(with the response cache), a failing server, and every automatic rejection rule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakeserver import FakeOpenAIServer
from toolbench.aware.manipulate.call_values import CallValue, gold_call_values, mentions
from toolbench.aware.manipulate.removal_checks import auto_rejections
from toolbench.aware.manipulate.rewrite_parse import parse_rewrite
from toolbench.aware.manipulate.rewrite_prompt import (
    DEMONSTRATIONS,
    SYSTEM_PROMPT,
    rewrite_messages,
)
from toolbench.aware.manipulate.utterance_removal import (
    MAX_TOKENS,
    TASK,
    remove_utterances,
    rewrite_request,
    twin_from_reply,
)
from toolbench.aware.review_reasons import AUTO_REASONS, REVIEW_REASONS, reason_code
from toolbench.aware.schema import (
    ApiSpec,
    Instance,
    Provenance,
    Turn,
    complete_instance,
    dump_line,
)
from toolbench.models.base import ModelOptions, ModelOutputError
from toolbench.models.spec import make_model
from toolbench.types import Generation, GenerationRequest, InfraError

# -- instances ----------------------------------------------------------------------------------

HOTEL_API = ApiSpec(
    name="BookHotel",
    description="Book a hotel room.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "checkin": {"type": "string", "description": "YYYY-MM-DD"},
            "nights": {"type": "integer"},
        },
        "required": ["city", "checkin", "nights"],
    },
)
CANCEL_API = ApiSpec(
    name="CancelAppointment",
    description="Cancel an appointment by its id.",
    parameters={
        "type": "object",
        "properties": {"appointment_id": {"type": "string"}},
        "required": ["appointment_id"],
    },
)
HOTEL_QUERY = "Please book a hotel in Paris for 2 nights starting 2024-05-03."


def make(
    id: str,
    dialogue: list[Turn],
    gold: list[str],
    apis: list[ApiSpec] | None = None,
) -> Instance:
    return complete_instance(
        id=id,
        source="test",
        dialogue=dialogue,
        apis=apis or [HOTEL_API, CANCEL_API],
        relevant_apis=[call.call for call in gold_call_values(gold[0])[:1]] if gold else [],
        gold_calls=gold,
        provenance=Provenance(original_id=f"orig-{id}", source_file="test/file.json"),
    )


def user(text: str) -> Turn:
    return Turn(role="user", content=text)


def assistant(text: str) -> Turn:
    return Turn(role="assistant", content=text)


HOTEL_GOLD = "BookHotel(city='Paris', checkin='2024-05-03', nights=2)"


def hotel(id: str) -> Instance:
    return make(id, [user(HOTEL_QUERY)], [HOTEL_GOLD])


def cancel(id: str) -> Instance:
    return make(
        id,
        [
            user("I can't make it to my appointment."),
            assistant("I can cancel it for you. What is the appointment id?"),
            user("It is 48213057, thanks."),
        ],
        ["API-Request: [CancelAppointment(appointment_id='48213057')]"],
    )


def answer(turn: int | None, rewritten: str, removed: list[str], reasoning: str = "") -> str:
    body: dict[str, Any] = {"rewritten": rewritten, "removed": removed}
    if turn is not None:
        body = {"turn": turn, **body}
    return f"{reasoning or 'Thinking it through.'}\n```json\n{json.dumps(body)}\n```"


def codes(instance: Instance) -> list[str]:
    return [reason_code(reason) for reason in instance.verification.reasons]


# -- a scripted model -------------------------------------------------------------------------


class ScriptedModel:
    """Canned replies per instance id; ids in ``fail`` raise InfraError like a dead service."""

    name = "scripted"
    cacheable = False

    def __init__(
        self,
        replies: dict[str, str],
        fail: frozenset[str] = frozenset(),
        delays: dict[str, float] | None = None,
    ) -> None:
        self.replies = replies
        self.fail = fail
        self.delays = delays or {}
        self.requests: list[GenerationRequest] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def generate(self, request: GenerationRequest) -> Generation:
        assert request.sample is not None
        self.requests.append(request)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(request.sample.id, 0))
        finally:
            self.in_flight -= 1
        if request.sample.id in self.fail:
            raise InfraError(f"scripted: gave up on {request.sample.id}")
        if request.sample.id not in self.replies:
            raise ModelOutputError(f"no reply for {request.sample.id}")
        return Generation(text=self.replies[request.sample.id])

    async def aclose(self) -> None:
        return None


async def test_scripted_model_end_to_end_records_each_rejection() -> None:
    originals = [
        hotel("good"),
        cancel("good-later-turn"),
        hotel("unchanged"),
        hotel("keeps-value"),
        hotel("broken"),
        hotel("unparseable"),
        cancel("wrong-turn"),
        cancel("dead"),
        cancel("no-reply"),
    ]
    replies = {
        "good": answer(
            1, "Please book a hotel for 2 nights starting 2024-05-03.", ["in Paris"], "City."
        ),
        "good-later-turn": answer(2, "It is in my calendar, thanks.", ["48213057"]),
        "unchanged": answer(
            1, "please book a hotel in Paris, for 2 nights starting 2024-05-03", []
        ),
        "keeps-value": answer(
            1, "Book a hotel in Paris for 2 nights starting 2024-05-03.", ["Please"]
        ),
        "broken": answer(
            1, "User: Please book a hotel for 2 nights starting 2024-05-03.", ["in Paris"]
        ),
        "unparseable": "Sorry, I will not rewrite this dialogue.",
        "wrong-turn": answer(3, "It is in my calendar, thanks.", ["48213057"]),
    }
    model = ScriptedModel(replies, fail=frozenset({"dead"}))
    steps: list[int] = []
    result = await remove_utterances(originals, model, seed=7, progress=steps.append)

    assert sum(steps) == len(originals)
    assert sorted(result.failed) == [
        ("dead", "scripted: gave up on dead"),
        ("no-reply", "no reply for no-reply"),
    ]
    assert result.skipped == []
    twins = {twin.twin_id: twin for twin in result.instances}
    # Output order is input order, failures left out.
    assert [t.twin_id for t in result.instances] == [
        i.id for i in originals if i.id not in ("dead", "no-reply")
    ]
    expected = {
        "good": [],
        "good-later-turn": [],
        "unchanged": ["unchanged"],
        "keeps-value": ["values_still_present"],
        "broken": ["broken_dialogue"],
        "unparseable": ["unparseable"],
        "wrong-turn": ["broken_dialogue"],
    }
    assert {key: codes(twin) for key, twin in twins.items()} == expected
    for key, twin in twins.items():
        assert twin.id == f"{key}~utterance_removal"
        assert twin.label == "incomplete" and twin.manipulation == "utterance_removal"
        assert twin.provenance.original_id == f"orig-{key}"
        assert twin.provenance.source_file == "test/file.json"
        assert twin.provenance.generator == "scripted" and twin.provenance.seed == 7
        status = "pending" if not expected[key] else "rejected"
        assert twin.verification.status == status
        assert twin.verification.by == ("auto" if expected[key] else "")
        assert set(codes(twin)) <= set(AUTO_REASONS)
        json.loads(dump_line(twin))  # serialisable as a dataset line

    good = twins["good"]
    assert good.dialogue[0].content == "Please book a hotel for 2 nights starting 2024-05-03."
    assert good.provenance.removed_text == ["in Paris"]
    assert good.provenance.removed_slots == ["city"]
    assert good.provenance.missing == 'The user no longer says: "in Paris"'
    assert good.provenance.notes["turn"] == 0 and good.provenance.notes["user_turn"] == 1
    assert good.provenance.notes["reasoning"] == "City."
    assert good.provenance.notes["values_kept"] == ["2024-05-03", 2]

    later = twins["good-later-turn"]
    assert [turn.content for turn in later.dialogue][2] == "It is in my calendar, thanks."
    assert later.dialogue[:2] == cancel("x").dialogue[:2]
    assert later.provenance.notes["turn"] == 2
    assert later.provenance.removed_slots == ["appointment_id"]

    assert "'Paris'" in twins["keeps-value"].verification.reasons[0]
    assert "role name" in twins["broken"].verification.reasons[0]
    assert twins["unparseable"].provenance.notes["raw_reply"] == replies["unparseable"]
    assert twins["unparseable"].dialogue == hotel("x").dialogue
    wrong = twins["wrong-turn"]
    assert wrong.dialogue == cancel("x").dialogue  # nothing replaced when the turn is unknown
    assert wrong.provenance.notes["turn"] is None and wrong.provenance.notes["user_turn"] == 3

    request = model.requests[0]
    assert request.sample is not None and request.sample.task == TASK
    assert request.temperature == 0 and request.seed == 7 and request.max_tokens == MAX_TOKENS


async def test_only_complete_instances_with_a_user_turn_are_sent() -> None:
    no_user = make("tool-only", [assistant("Hello, how can I help?")], [HOTEL_GOLD])
    twin = twin_from_reply(
        hotel("h"), answer(1, "Book a hotel.", ["in Paris"]), generator="g", seed=0
    )
    model = ScriptedModel({})
    steps: list[int] = []
    result = await remove_utterances([no_user, twin], model, seed=0, progress=steps.append)
    assert model.requests == [] and result.instances == [] and steps == [1, 1]
    assert result.skipped == [
        ("tool-only", "no user turn to rewrite"),
        ("h~utterance_removal", "not a complete instance"),
    ]


async def test_order_is_input_order_and_concurrency_is_bounded() -> None:
    originals = [hotel(f"h{n}") for n in range(8)]
    replies = {i.id: answer(1, "Please book a hotel.", ["in Paris"]) for i in originals}
    delays = {i.id: 0.002 * (8 - n) for n, i in enumerate(originals)}  # later ones finish first
    model = ScriptedModel(replies, delays=delays)
    result = await remove_utterances(originals, model, seed=1, concurrency=3)
    assert [t.twin_id for t in result.instances] == [i.id for i in originals]
    assert model.most_in_flight == 3
    with pytest.raises(ValueError):
        await remove_utterances(originals, model, seed=1, concurrency=0)


async def test_replay_model_scripts_the_rewrite(tmp_path: Path) -> None:
    line = {"id": "h1", "task": TASK, "prediction": answer(1, "Book a hotel.", ["in Paris"])}
    path = tmp_path / "replies.jsonl"
    path.write_text(json.dumps(line) + "\n")
    model = make_model(f"replay:{path}", ModelOptions())
    result = await remove_utterances([hotel("h1"), hotel("h2")], model, seed=0)
    assert [t.twin_id for t in result.instances] == ["h1"]
    assert [failed_id for failed_id, _ in result.failed] == ["h2"]


# -- a real OpenAI-compatible server on loopback ---------------------------------------------


def _server_answer(body: dict[str, Any]) -> str:
    """Plays the rewriting model: reads the instance from the last message, removes the value."""
    last = body["messages"][-1]["content"]
    if "48213057" in last:
        return answer(2, "It is the one on Friday, thanks.", ["48213057"], "The id is decisive.")
    if "Paris" in last:
        return answer(1, "Please book a hotel for 2 nights starting 2024-05-03.", ["in Paris"])
    return "no idea"


async def test_real_server_end_to_end_and_a_rerun_makes_no_calls(tmp_path: Path) -> None:
    originals = [hotel("h1"), cancel("c1"), make("odd", [user("Hi there")], [])]
    options = ModelOptions(
        base_url="", api_key="x", cache_path=tmp_path / "responses.sqlite", max_retries=0
    )
    with FakeOpenAIServer(answer=_server_answer) as srv:
        options = ModelOptions(
            base_url=srv.base_url, api_key="x", cache_path=options.cache_path, max_retries=0
        )
        model = make_model("openai:fake", options)
        try:
            first = await remove_utterances(originals, model, seed=3, concurrency=2)
        finally:
            await model.aclose()
        assert srv.calls == 3 and first.failed == []
        body = srv.requests[0]
        assert body["temperature"] == 0 and body["seed"] == 3 and body["max_tokens"] == MAX_TOKENS
        assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert len(body["messages"]) == 2 + 2 * len(DEMONSTRATIONS)

        twins = {t.twin_id: t for t in first.instances}
        assert twins["h1"].dialogue[0].content.startswith("Please book a hotel for 2 nights")
        assert twins["h1"].verification.status == "pending"
        assert twins["h1"].provenance.generator == "openai:fake"
        assert twins["c1"].dialogue[2].content == "It is the one on Friday, thanks."
        assert twins["c1"].provenance.notes["reasoning"] == "The id is decisive."
        assert codes(twins["odd"]) == ["unparseable"]

        model = make_model("openai:fake", options)
        try:
            second = await remove_utterances(originals, model, seed=3, concurrency=2)
        finally:
            await model.aclose()
        assert srv.calls == 3  # every answer came from the cache
        assert [dump_line(t) for t in second.instances] == [dump_line(t) for t in first.instances]


async def test_failing_server_gives_failures_not_instances_and_a_rerun_fills_them_in(
    tmp_path: Path,
) -> None:
    originals = [hotel("h1"), cancel("c1")]
    with FakeOpenAIServer(answer=_server_answer, fail_always=True) as srv:
        options = ModelOptions(
            base_url=srv.base_url, api_key="x", cache_path=tmp_path / "r.sqlite", max_retries=0
        )
        model = make_model("openai:fake", options)
        try:
            result = await remove_utterances(originals, model, seed=0)
        finally:
            await model.aclose()
        assert result.instances == []
        assert [failed_id for failed_id, _ in result.failed] == ["h1", "c1"]
        assert all("HTTP 500" in message for _, message in result.failed)

        srv.fail_always = False
        model = make_model("openai:fake", options)
        try:
            rerun = await remove_utterances(originals, model, seed=0)
        finally:
            await model.aclose()
        assert rerun.failed == [] and len(rerun.instances) == 2


# -- the prompt -------------------------------------------------------------------------------


def test_prompt_shows_apis_numbered_user_turns_and_gold() -> None:
    messages = rewrite_messages(cancel("c"))
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 5 + ["user"]
    last = messages[-1]["content"]
    assert "[User turn 1] I can't make it to my appointment." in last
    assert "[Assistant] I can cancel it for you." in last
    assert "[User turn 2] It is 48213057, thanks." in last
    assert "CancelAppointment (needed for the request)" in last
    assert '"appointment_id":{"type":"string"}' in last
    assert "API-Request: [CancelAppointment(appointment_id='48213057')]" in last
    request = rewrite_request(cancel("c"), seed=5)
    assert request.messages is not None and list(request.messages) == messages
    assert request.sample is not None and request.sample.id == "c"


def test_demonstrations_are_varied_and_pass_the_automatic_checks() -> None:
    assert len(DEMONSTRATIONS) == 5
    assert any(len(demo.instance.gold_calls) > 1 for demo in DEMONSTRATIONS)
    assert any(len(demo.instance.user_turns()) > 1 for demo in DEMONSTRATIONS)
    for demo in DEMONSTRATIONS:
        parsed = parse_rewrite(demo.reply())
        assert parsed is not None
        assert parsed.turn == demo.answer["turn"] and parsed.rewritten == demo.answer["rewritten"]
        twin = twin_from_reply(demo.instance, demo.reply(), generator="demo", seed=0)
        assert twin.verification.status == "pending", (demo.instance.id, twin.verification)
        assert twin.provenance.removed_text == demo.answer["removed"]


def test_review_reasons_cover_both_manipulations() -> None:
    assert set(REVIEW_REASONS["utterance_removal"]) == {
        "nonessential_removed",
        "request_still_served",
        "unnatural",
        "identical",
        "last_turn_not_user",
        "other",
    }
    assert set(REVIEW_REASONS["api_replacement"]) == {
        "alternative_api",
        "non_replaced_api",
        "unnatural",
        "other",
    }
    # Every manipulation a person may review offers "other" (with a note).
    assert all("other" in codes for codes in REVIEW_REASONS.values())
    assert set(AUTO_REASONS) == {
        "unparseable",
        "broken_dialogue",
        "unchanged",
        "nothing_removed",
        "values_still_present",
    }
    assert reason_code("nothing_removed: 'x' is still there: really") == "nothing_removed"


# -- each automatic rule ------------------------------------------------------------------------


def rejections(instance: Instance, turn: int | None, rewritten: str, removed: list[str]) -> dict:
    found = auto_rejections(instance, turn, rewritten, removed)
    return {reason_code(reason): reason for reason in found}


GOOD = "Please book a hotel for 2 nights starting 2024-05-03."


def test_a_good_rewrite_has_no_rejection() -> None:
    assert auto_rejections(hotel("h"), 0, GOOD, ["in Paris"]) == []


@pytest.mark.parametrize(
    ("turn", "words"),
    [(None, "names no turn"), (3, "turn index 3"), (-1, "turn index -1"), (1, "assistant")],
)
def test_broken_dialogue_for_a_turn_that_is_not_a_user_turn(turn: int | None, words: str) -> None:
    found = rejections(cancel("c"), turn, "It is in my calendar.", ["48213057"])
    assert list(found) == ["broken_dialogue"] and words in found["broken_dialogue"]


def test_broken_dialogue_for_an_empty_rewrite_of_the_last_turn() -> None:
    found = rejections(cancel("c"), 2, "  ", ["It is 48213057, thanks."])
    assert list(found) == ["broken_dialogue"]
    assert "empty" in found["broken_dialogue"]
    assert "no longer ends with the user" in found["broken_dialogue"]


def test_broken_dialogue_for_a_much_longer_rewrite() -> None:
    # 40 extra characters (the floor for a short utterance) pass; more do not.
    base = "It is the one, thanks."
    original = cancel("c")
    before = len(original.dialogue[2].content)
    ok = base + " " + "x" * (before + 40 - len(base) - 1)
    assert len(ok) == before + 40
    assert auto_rejections(original, 2, ok, ["48213057"]) == []
    found = rejections(original, 2, ok + "y", ["48213057"])
    assert list(found) == ["broken_dialogue"] and "characters" in found["broken_dialogue"]


@pytest.mark.parametrize(
    "rewritten",
    [
        "User: Please book a hotel for 2 nights.",
        "Please book a hotel.\nAI: Sure, which city?",
        "[User turn 1] Please book a hotel.",
        "assistant : ok",
    ],
)
def test_broken_dialogue_for_role_names(rewritten: str) -> None:
    found = rejections(hotel("h"), 0, rewritten, ["in Paris"])
    assert "broken_dialogue" in found and "role name" in found["broken_dialogue"]


@pytest.mark.parametrize(
    "rewritten",
    [
        HOTEL_QUERY,
        HOTEL_QUERY.upper(),
        "please  book a hotel in Paris for 2 nights starting 2024-05-03",
    ],
)
def test_unchanged_ignores_case_spacing_and_punctuation(rewritten: str) -> None:
    assert rejections(hotel("h"), 0, rewritten, ["in Paris"]).keys() == {"unchanged"}


def test_nothing_removed_rules() -> None:
    h = hotel("h")
    assert "lists no removed text" in rejections(h, 0, GOOD, [])["nothing_removed"]
    assert "lists no removed text" in rejections(h, 0, GOOD, ["  "])["nothing_removed"]
    found = rejections(h, 0, GOOD, ["in Paris", "in Rome"])
    assert list(found) == ["nothing_removed"]
    assert "'in Rome' is not in the original" in found["nothing_removed"]
    found = rejections(h, 0, GOOD, ["in Paris", "hotel"])
    assert "'hotel' is still in the rewrite" in found["nothing_removed"]
    # "hotel" as a word is still there, but a span that is only part of a word is not matched:
    assert auto_rejections(h, 0, GOOD, ["in Paris", "Please book a hotel in"]) == []
    # Only additions: every original word survives, whatever the reply claims.
    grown = "Please book a hotel in some city, not Paris, for 2 nights starting 2024-05-03."
    found = rejections(make("g", [user(HOTEL_QUERY)], []), 0, grown, ["Paris for"])
    assert "every word of the original utterance is still there" in found["nothing_removed"]


def test_values_still_present_when_a_call_is_fully_stated() -> None:
    found = rejections(
        hotel("h"), 0, "Book a hotel in Paris for 2 nights starting 2024-05-03.", ["Please"]
    )
    assert list(found) == ["values_still_present"]
    assert (
        "BookHotel can still be called: 'Paris', '2024-05-03', 2" in found["values_still_present"]
    )


def test_values_echoed_only_by_the_assistant_are_left_to_the_reviewer() -> None:
    original = make(
        "a",
        [
            user("Cancel appointment 48213057."),
            assistant("Cancelling appointment 48213057 now."),
            user("Thanks."),
        ],
        ["CancelAppointment(appointment_id='48213057')"],
    )
    # Only user turns count for the automatic check; the echo reaches the reviewer as a note.
    found = rejections(original, 0, "Cancel my appointment.", ["appointment 48213057"])
    assert "values_still_present" not in found


def test_a_paraphrased_value_is_left_to_the_reviewer() -> None:
    # The date is not said verbatim, so removing it cannot be traced: no automatic rejection,
    # even though the verbatim city stays.
    original = make(
        "p",
        [user("Book a hotel in Paris for 2 nights from May 3rd.")],
        ["BookHotel(city='Paris', checkin='2024-05-03', nights=2)"],
    )
    assert (
        auto_rejections(original, 0, "Book a hotel in Paris for 2 nights.", ["from May 3rd"]) == []
    )


def test_one_of_several_requests_still_callable_is_rejected() -> None:
    original = make(
        "two",
        [
            user(
                "Book a hotel in Paris for 2 nights starting 2024-05-03 and cancel appointment 881."
            )
        ],
        [HOTEL_GOLD, "CancelAppointment(appointment_id='881')"],
    )
    found = rejections(
        original,
        0,
        "Book a hotel in Paris for 2 nights starting 2024-05-03 and cancel my appointment.",
        ["appointment 881"],
    )
    assert list(found) == ["values_still_present"]
    assert found["values_still_present"].startswith("values_still_present: BookHotel")
    assert "CancelAppointment" not in found["values_still_present"]


@pytest.mark.parametrize(
    ("gold", "utterance", "rewrite", "removed"),
    [
        # An int inside a sentence, with a thousands separator.
        (
            "Pay(amount=1250, to='landlord')",
            "Pay 1,250 dollars to my landlord.",
            "Pay 1,250 dollars to the landlord today.",
            ["my"],
        ),
        # A float, also written without its trailing zero.
        (
            "Weigh(kg=2.5, scale=3.0)",
            "Log 2.5 kg on scale 3 please.",
            "Log 2.5 kg on scale 3.",
            ["please"],
        ),
        # A date and a date-time inside strings, seconds dropped by the user.
        (
            "Meet(day='2023-05-09', at='2023-05-09 14:00:00')",
            "Meet me on 2023-05-09, at 2023-05-09 14:00 sharp.",
            "Meet me on 2023-05-09, at 2023-05-09 14:00.",
            ["sharp"],
        ),
    ],
)
def test_value_detection_for_numbers_and_dates(
    gold: str, utterance: str, rewrite: str, removed: list[str]
) -> None:
    original = make("v", [user(utterance)], [gold])
    assert list(rejections(original, 0, rewrite, removed)) == ["values_still_present"]


def test_mentions_matches_whole_values_only() -> None:
    assert mentions("appointment 48213057, please", 48213057)
    assert mentions("appointment 48213057, please", "48213057")
    assert not mentions("in 2023 we met", 3)
    assert not mentions("it weighs 12.5 kg", 2.5)
    assert not mentions("it weighs 2.55 kg", 2.5)
    assert mentions("it weighs 2.5.", 2.5)
    assert not mentions("version 2.1", 2)
    assert mentions("pay 1,250 now", 1250)
    assert mentions("pay 1250 now", "1250")
    assert mentions("scale 3 please", 3.0)
    assert mentions("scale 3 please", "3.0")
    assert not mentions("room 7", "007")  # an id with leading zeros is not the number 7
    assert mentions("on 2023-05-09 14:00", "2023-05-09 14:00:00")
    assert not mentions("on 2023-05-091", "2023-05-09")
    assert mentions("see DR. LEE’s office", "Dr. Lee")
    assert mentions("the  marketing\nteam", "Marketing team")
    assert not mentions("a", "a")  # single letters would match everywhere
    assert not mentions("true story", True)


def test_gold_call_values_reads_the_formats_in_use() -> None:
    assert gold_call_values("API-Request: [Cancel(appointment_id='1', force=True, note=None)]") == [
        CallValue("Cancel", "appointment_id", "1")
    ]
    program = 'API.set_location("San Francisco")\nloc = Loc("Dallas")\nAPI.set_num_beds(-2)'
    assert gold_call_values(program) == [
        CallValue("set_location", "set_location", "San Francisco"),
        CallValue("Loc", "Loc", "Dallas"),
        CallValue("set_num_beds", "set_num_beds", -2),
    ]
    assert gold_call_values('search({"q": "tea", "filters": {"max": 5}, "ok": true})') == [
        CallValue("search", "q", "tea"),
        CallValue("search", "max", 5),
    ]
    tool_call = json.dumps({"name": "search", "arguments": json.dumps({"q": "tea", "n": 2})})
    assert gold_call_values(tool_call) == [
        CallValue("search", "q", "tea"),
        CallValue("search", "n", 2),
    ]
    assert gold_call_values('{"api_name": "X", "param_dict": {"city": "Oslo"}}') == [
        CallValue("X", "city", "Oslo")
    ]
    curl = "curl -X GET 'https://api.example.com/data/2.5/weather?q=New%20York&appid={API_KEY}'"
    assert gold_call_values(curl) == [CallValue("weather", "q", "New York")]
    assert gold_call_values("Date(6, 14, 2024)") == [
        CallValue("Date", "Date[0]", 6),
        CallValue("Date", "Date[1]", 14),
        CallValue("Date", "Date[2]", 2024),
    ]
    # API-Bank quirks: an unescaped quote inside a value, a bare word.
    assert gold_call_values("AddMeeting(content='John's team sync', mode=w)") == [
        CallValue("AddMeeting", "content", "John's team sync"),
        CallValue("AddMeeting", "mode", "w"),
    ]
    for garbage in ("", "not a call", "f(", "((((" * 500, "[" * 10000):
        assert isinstance(gold_call_values(garbage), list)


def test_gold_calls_are_read_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    values = gold_call_values(hostile)
    assert not marker.exists()
    assert CallValue("Path", "Path", str(marker)) in values


def test_turn_number_is_inferred_when_missing_or_obvious() -> None:
    # One user turn: any number (a 0-based answer, none at all) means that turn.
    for turn in (0, None, 5):
        twin = twin_from_reply(hotel("h"), answer(turn, GOOD, ["in Paris"]), generator="g", seed=0)
        assert twin.verification.status == "pending"
        assert twin.provenance.notes["turn"] == 0 and twin.provenance.notes["turn_inferred"]
    # Several user turns, no number: the turn the rewrite is most like.
    reply = answer(None, "It is in my calendar, thanks.", ["48213057"])
    twin = twin_from_reply(cancel("c"), reply, generator="g", seed=0)
    assert twin.provenance.notes["turn"] == 2 and twin.verification.status == "pending"


@settings(max_examples=150, deadline=None)
@given(
    turn=st.one_of(st.none(), st.integers(min_value=-3, max_value=4)),
    rewritten=st.text(max_size=120),
    removed=st.lists(st.text(max_size=20), max_size=3),
)
def test_auto_rejections_never_raise(turn: int | None, rewritten: str, removed: list[str]) -> None:
    for original in (hotel("h"), cancel("c")):
        for reason in auto_rejections(original, turn, rewritten, removed):
            assert reason_code(reason) in AUTO_REASONS


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_gold_call_values_never_raise(text: str) -> None:
    for value in gold_call_values(text):
        assert isinstance(value.value, (str, int, float)) and not isinstance(value.value, bool)
