"""The prompt for a clear request with a missing argument, and its five demonstrations.

Utterance removal asks a model to rewrite one user turn so that something a call needs is no
longer said. The prompt shows what the model needs to judge that (the offered APIs with their
JSON-schema parameters, the dialogue with its user turns numbered, the gold call the dialogue
supports now) and asks for one JSON object first and a short explanation after it, so that a
reply cut by the token budget loses explanation, not the answer.

The demonstrations are ``Instance`` objects rendered by the same code as the real input, so the
model sees exactly one format, and the tests can run the automatic checks on every demonstration
answer: a demonstration the checks would reject would teach the model the wrong thing.

The reply is hostile input; ``rewrite_parse`` reads it (bounded, never ``eval``). The
"unclear request" kind of removal has its own prompt in ``unclear_prompt``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, complete_instance

#: The JSON keys the model must answer with.
ANSWER_KEYS = ("turn", "rewritten", "removed")

SYSTEM_PROMPT = """\
You help build a test of whether AI assistants notice when they cannot call an API yet.

You get the APIs an assistant may call, a dialogue between a user and the assistant (the user \
turns are numbered), and the API call(s) the dialogue supports as it stands. Rewrite ONE user \
turn so that information the call needs is no longer there: after your edit, none of the \
offered APIs can be called correctly without first asking the user for something.

Think it through in these steps:
1. For every argument value in the call(s), find the user's words it comes from. A value may \
be paraphrased ("next Friday" for a date, "four" for 4).
2. Pick the decisive user turn: the one whose words supply what the call cannot do without. It \
is not always the last one.
3. Decide what to remove. One required value is enough when nothing else in the dialogue gives \
it away. If the user asks for several things, every request must lose something it needs: \
dropping one request while the others can still be served is not enough. If a value also \
appears in a turn you are not rewriting, remove a different one. Optional details (a \
preference, a greeting) do not count.
4. Keep the request. The user must still ask for the same thing, only without the missing \
detail. Never delete the whole utterance or turn it into small talk.
5. Keep it natural: the new utterance must read like something a person would say, \
grammatical, in the same voice and language. A few glue words ("my order", "somewhere") are \
fine; new facts are not.
6. Change only that one user turn. Do not write assistant lines or role names such as "User:".

Answer FIRST, with one JSON object in a ```json block, with exactly these keys:
{"turn": <number of the user turn you rewrote>, "rewritten": "<the whole new utterance>", \
"removed": ["<each removed span, copied verbatim from the original utterance>", ...]}
After the block, explain in a few sentences which values you traced and why the call is no \
longer possible."""

_DESCRIPTION_LIMIT = 1000
_PARAMETERS_LIMIT = 1500
_TOOL_RESULT_LIMIT = 600


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render_api(number: int, api: ApiSpec, needed: bool) -> str:
    mark = " (needed for the request)" if needed else ""
    parameters = json.dumps(api.parameters, ensure_ascii=False, separators=(",", ":"))
    lines = [f"{number}. {api.name}{mark}"]
    if api.description.strip():
        lines.append(f"   description: {_clip(api.description, _DESCRIPTION_LIMIT)}")
    lines.append(f"   parameters: {_clip(parameters, _PARAMETERS_LIMIT)}")
    return "\n".join(lines)


def _render_turn(turn: Turn, user_number: int | None) -> str:
    if turn.role == "user":
        return f"[User turn {user_number}] {turn.content}"
    if turn.role == "assistant":
        return f"[Assistant] {turn.content}"
    name = f": {turn.tool_name}" if turn.tool_name else ""
    return f"[Tool result{name}] {_clip(turn.content, _TOOL_RESULT_LIMIT)}"


def render_instance(instance: Instance) -> str:
    """The user message for one instance: APIs, numbered dialogue, gold call(s), the ask."""
    relevant = set(instance.relevant_apis)
    apis = "\n".join(
        _render_api(number, api, api.name in relevant)
        for number, api in enumerate(instance.apis, start=1)
    )
    lines = []
    user_number = 0
    for turn in instance.dialogue:
        if turn.role == "user":
            user_number += 1
        lines.append(_render_turn(turn, user_number if turn.role == "user" else None))
    dialogue = "\n".join(lines)
    if instance.gold_calls:
        calls = "\n".join(instance.gold_calls)
    else:
        calls = "(not recorded; the request needs these APIs: "
        calls += ", ".join(instance.relevant_apis) or "see the APIs marked as needed"
        calls += ")"
    return (
        f"APIs on offer:\n{apis}\n\n"
        f"Dialogue ({user_number} user turn{'s' if user_number != 1 else ''}):\n{dialogue}\n\n"
        f"Call(s) the dialogue supports now:\n{calls}\n\n"
        "Give the JSON answer first, then your short explanation."
    )


# -- demonstrations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Demonstration:
    """One worked example: the input instance, the reasoning, and the answer object."""

    instance: Instance
    reasoning: str
    answer: dict[str, Any]

    def reply(self) -> str:
        """The assistant message exactly as a good model would write it."""
        body = json.dumps(self.answer, ensure_ascii=False)
        return f"```json\n{body}\n```\n\n{self.reasoning}"


def _schema(required: list[str], **properties: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            name: {"type": kind, "description": text} for name, (kind, text) in properties.items()
        },
        "required": required,
    }


def _demo_instance(
    name: str, dialogue: list[Turn], apis: list[ApiSpec], relevant: list[str], gold: list[str]
) -> Instance:
    return complete_instance(
        id=f"demo-{name}",
        source="demonstration",
        dialogue=dialogue,
        apis=apis,
        relevant_apis=relevant,
        gold_calls=gold,
        provenance=Provenance(original_id=f"demo-{name}", generator="hand-written"),
    )


def _user(text: str) -> Turn:
    return Turn(role="user", content=text)


def _assistant(text: str) -> Turn:
    return Turn(role="assistant", content=text)


_TRIP = _demo_instance(
    "several-requests",
    [
        _user(
            "I'm flying to Lisbon next month and want to sort a few things out. What is the "
            "exchange rate from USD to EUR right now, and can you find vegetarian restaurants "
            "near Alfama?"
        )
    ],
    [
        ApiSpec(
            name="currency_rate",
            description="Current exchange rate between two currencies (ISO 4217 codes).",
            parameters=_schema(
                ["base", "quote"],
                base=("string", "currency to convert from"),
                quote=("string", "currency to convert to"),
            ),
        ),
        ApiSpec(
            name="restaurant_finder",
            description="Restaurants in or near a place, optionally filtered by diet.",
            parameters=_schema(
                ["near"],
                near=("string", "neighbourhood, city or address"),
                diet=("string", "e.g. vegan, vegetarian, halal"),
            ),
        ),
        ApiSpec(
            name="flight_status",
            description="Live status of a flight by its flight number.",
            parameters=_schema(["flight_number"], flight_number=("string", "e.g. TP1351")),
        ),
    ],
    ["currency_rate", "restaurant_finder"],
    [
        "currency_rate(base='USD', quote='EUR')",
        "restaurant_finder(near='Alfama', diet='vegetarian')",
    ],
)

_TRIP_DEMO = Demonstration(
    _TRIP,
    "There is one user turn, so it is the decisive one. It makes two requests.\n"
    "- currency_rate: base='USD' and quote='EUR' come from \"from USD to EUR\". Both are "
    "required.\n"
    "- restaurant_finder: near='Alfama' comes from \"near Alfama\"; diet='vegetarian' is "
    'optional. "to Lisbon" matters too: with the city alone the search could still run near '
    "Lisbon.\n"
    "Removing only one request would leave the other callable, so each must lose what it "
    "needs: the currency pair, and every hint of the place (Alfama and Lisbon). The user still "
    "asks for an exchange rate and for vegetarian restaurants, which now calls for questions "
    "about which currencies and where.",
    {
        "turn": 1,
        "rewritten": "I'm flying out next month and want to sort a few things out. What is the "
        "exchange rate I'll be dealing with right now, and can you find vegetarian restaurants "
        "near where I'm staying?",
        "removed": ["to Lisbon", "from USD to EUR", "Alfama"],
    },
)

_REMINDER = _demo_instance(
    "later-turn",
    [
        _user("Could you set up a reminder for me?"),
        _assistant("Of course. What should I remind you about, and when?"),
        _user("Remind me to call the plumber tomorrow at 9 am. Today is 2023-06-14."),
    ],
    [
        ApiSpec(
            name="AddReminder",
            description="Create a reminder with its content and the time it should go off.",
            parameters=_schema(
                ["content", "time"],
                content=("string", "what to be reminded of"),
                time=("string", "when, as %Y-%m-%d %H:%M:%S"),
            ),
        ),
        ApiSpec(
            name="DeleteReminder",
            description="Delete a reminder by its content.",
            parameters=_schema(["content"], content=("string", "the reminder's content")),
        ),
    ],
    ["AddReminder"],
    ["AddReminder(content='Call the plumber', time='2023-06-15 09:00:00')"],
)

_REMINDER_DEMO = Demonstration(
    _REMINDER,
    "User turn 1 only asks for a reminder; it gives no value. Everything comes from user turn "
    "2, which is decisive:\n"
    "- content='Call the plumber' comes from \"to call the plumber\".\n"
    "- time='2023-06-15 09:00:00' comes from \"tomorrow at 9 am\" together with the stated "
    "date.\n"
    "Both are required. The time could be removed, but a reminder without its subject is just "
    "as impossible to create and the sentence stays natural without it, so I remove the "
    "content. The user still asks for the reminder and gives the time; the assistant would "
    "have to ask what the reminder is about.",
    {
        "turn": 2,
        "rewritten": "Remind me tomorrow at 9 am. Today is 2023-06-14.",
        "removed": ["to call the plumber"],
    },
)

_TABLE = _demo_instance(
    "date-time",
    [_user("Please book a table for four at Trattoria Nonna on Friday, March 8 at 7:30 pm.")],
    [
        ApiSpec(
            name="ReserveTable",
            description="Reserve a table at a restaurant for a given date and time.",
            parameters=_schema(
                ["restaurant", "party_size", "date", "time"],
                restaurant=("string", "restaurant name"),
                party_size=("integer", "number of guests"),
                date=("string", "YYYY-MM-DD"),
                time=("string", "HH:MM, 24-hour clock"),
            ),
        ),
        ApiSpec(
            name="RestaurantReviews",
            description="Recent reviews of a restaurant.",
            parameters=_schema(["restaurant"], restaurant=("string", "restaurant name")),
        ),
    ],
    ["ReserveTable"],
    ["ReserveTable(restaurant='Trattoria Nonna', party_size=4, date='2024-03-08', time='19:30')"],
)

_TABLE_DEMO = Demonstration(
    _TABLE,
    "One user turn, so it is decisive.\n"
    "- restaurant='Trattoria Nonna' comes from \"at Trattoria Nonna\".\n"
    '- party_size=4 comes from "for four".\n'
    "- date='2024-03-08' comes from \"on Friday, March 8\"; time='19:30' from \"at 7:30 pm\".\n"
    "All four are required. The booking cannot be made without knowing when, and the date and "
    "time are a single phrase, so I remove that phrase. Removing only the weekday would not "
    'do: "March 8" alone still fixes the date. The sentence still asks for the booking.',
    {
        "turn": 1,
        "rewritten": "Please book a table for four at Trattoria Nonna.",
        "removed": ["on Friday, March 8 at 7:30 pm"],
    },
)

_TRANSFER = _demo_instance(
    "id-number",
    [
        _user("I need to pay my rent."),
        _assistant("I can help with a transfer. How much, and to which account?"),
        _user("Send 1,250 dollars from my checking account to account 55120983, please."),
    ],
    [
        ApiSpec(
            name="TransferMoney",
            description="Transfer money from one of the user's accounts to another account.",
            parameters=_schema(
                ["amount", "from_account", "to_account"],
                amount=("number", "amount in US dollars"),
                from_account=("string", "'checking' or 'savings'"),
                to_account=("string", "the recipient's account number"),
            ),
        ),
        ApiSpec(
            name="AccountBalance",
            description="Balance of one of the user's accounts.",
            parameters=_schema(["account"], account=("string", "'checking' or 'savings'")),
        ),
    ],
    ["TransferMoney"],
    ["TransferMoney(amount=1250, from_account='checking', to_account='55120983')"],
)

_TRANSFER_DEMO = Demonstration(
    _TRANSFER,
    "User turn 1 states the goal but no values; user turn 2 is decisive.\n"
    '- amount=1250 comes from "1,250 dollars".\n'
    "- from_account='checking' comes from \"from my checking account\".\n"
    "- to_account='55120983' comes from \"to account 55120983\".\n"
    "All three are required. The recipient's account number is the one thing no assistant "
    "could guess, so I remove it and let the user refer to the landlord instead, which is what "
    "a person paying rent would naturally say. Amount and source account stay.",
    {
        "turn": 2,
        "rewritten": "Send 1,250 dollars from my checking account to my landlord, please.",
        "removed": ["to account 55120983"],
    },
)

_WEATHER = _demo_instance(
    "location",
    [
        _user("I'm heading to Porto on Saturday for a few days."),
        _assistant("That sounds lovely! Is there anything I can help you plan?"),
        _user("Yes, what will the weather be like there over the weekend?"),
    ],
    [
        ApiSpec(
            name="weather_forecast",
            description="Daily weather forecast for a city.",
            parameters=_schema(
                ["city", "days"],
                city=("string", "city name"),
                days=("integer", "how many days ahead, 1 to 7"),
            ),
        ),
        ApiSpec(
            name="air_quality",
            description="Current air quality index for a city.",
            parameters=_schema(["city"], city=("string", "city name")),
        ),
    ],
    ["weather_forecast"],
    ["weather_forecast(city='Porto', days=3)"],
)

_WEATHER_DEMO = Demonstration(
    _WEATHER,
    'User turn 2 asks for the forecast but says only "there"; the city comes from user turn '
    '1: city=\'Porto\' from "to Porto". days=3 follows from "over the weekend". The city is '
    "required and cannot be guessed, so user turn 1 is the decisive turn even though it is not "
    'the last. I remove the city and keep the rest of the sentence, so the later "there" '
    "now points nowhere the assistant knows. The last turn is still the user's request.",
    {
        "turn": 1,
        "rewritten": "I'm heading away on Saturday for a few days.",
        "removed": ["to Porto"],
    },
)

#: Five worked examples: several requests in one query, information given in a later turn, a
#: date and time, an account number, and a location mentioned before the request.
DEMONSTRATIONS: tuple[Demonstration, ...] = (
    _TRIP_DEMO,
    _REMINDER_DEMO,
    _TABLE_DEMO,
    _TRANSFER_DEMO,
    _WEATHER_DEMO,
)


def rewrite_messages(instance: Instance) -> list[dict[str, str]]:
    """The chat messages for one instance: system, five demonstrations, then the instance."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for demo in DEMONSTRATIONS:
        messages.append({"role": "user", "content": render_instance(demo.instance)})
        messages.append({"role": "assistant", "content": demo.reply()})
    messages.append({"role": "user", "content": render_instance(instance)})
    return messages
