"""API-Bank-shaped test data (level 1 and level 2) from dialogues we write ourselves.

The shape is that of API-Bank's ``test-data/level-{1,2}-api.json``: a JSON list of records
``{file, id, instruction, input, expected_output}``, one per API call of a dialogue. The
instruction ends with the offered APIs, one JSON description per line after "API
descriptions:" (``name``, ``description``, ``input_parameters``, ``output_parameters``);
``input`` is the dialogue so far ("User: ...", "AI: ...", earlier calls as
"API-Request: [Name(key='value')]->result") closed by "Generate API Request:"; and
``expected_output`` is the gold "API-Request: [Name(...)]".

What the awareness checks must cope with is planted on purpose: level-2 dialogues whose only
described API is the tool searcher (its own call, and later calls to APIs it found but the
instruction never describes); an assistant asking for a *password* before a sign-in; and an
alarm time the user says in the first turn and again in the last. Alongside, a replay file
scripts the utterance-removal rewriter (the model a real build would ask), one reply per
level-1 record, so that build runs offline through the real CLI.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: name -> (description, inputs {name: (type, description)}, outputs).
APIS: dict[str, tuple[str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]]] = {
    "SignIn": (
        "Signs a user in with username and password and returns a session token.",
        {"username": ("str", "The account name."), "password": ("str", "The password.")},
        {"token": ("str", "Session token for later calls.")},
    ),
    "AddAlarm": (
        "Sets an alarm for the signed-in user at the given time.",
        {"token": ("str", "Session token."), "time": ("str", "Format: %H:%M.")},
        {"status": ("str", "success or failed")},
    ),
    "DeleteAlarm": (
        "Removes the signed-in user's alarm at the given time.",
        {"token": ("str", "Session token."), "time": ("str", "Format: %H:%M.")},
        {"status": ("str", "success or failed")},
    ),
    "BookTaxi": (
        "Books a taxi from a pickup point to a destination at a time.",
        {
            "pickup": ("str", "Where to be picked up."),
            "destination": ("str", "Where to go."),
            "time": ("str", "Pickup time. Format: %Y-%m-%d %H:%M."),
        },
        {"ride_id": ("str", "The booking id.")},
    ),
    "QueryTaxiFare": (
        "Estimates the taxi fare between two places.",
        {"pickup": ("str", "Start."), "destination": ("str", "End.")},
        {"fare": ("float", "Estimated fare in dollars.")},
    ),
    "RecordExpense": (
        "Records an expense with amount, category and date.",
        {
            "amount": ("float", "How much was spent."),
            "category": ("str", "e.g. food, travel."),
            "date": ("str", "Format: %Y-%m-%d."),
        },
        {"expense_id": ("str", "Id of the record.")},
    ),
    "QueryExpenses": (
        "Lists the expenses recorded between two dates.",
        {"start_date": ("str", "Format: %Y-%m-%d."), "end_date": ("str", "Format: %Y-%m-%d.")},
        {"expenses": ("list", "The matching expenses.")},
    ),
    "QueryExpense": (
        "Lists the expenses recorded between two dates.",
        {"expense_id": ("str", "Id of one expense.")},
        {"expense": ("dict", "The expense.")},
    ),
    "AddReminder": (
        "Sets a reminder for the signed-in user at the given time.",
        {
            "token": ("str", "Session token."),
            "time": ("str", "Format: %H:%M."),
            "note": ("str", "What to be reminded of."),
        },
        {"status": ("str", "success or failed")},
    ),
    "TranslateText": (
        "Translates a piece of text into a target language.",
        {
            "text": ("str", "What to translate."),
            "target_language": ("str", "Language code, e.g. fr."),
        },
        {"translation": ("str", "The translated text.")},
    ),
    "RegisterVisit": (
        "Books a visit with a doctor for a patient on a date.",
        {
            "patient_name": ("str", "Who the visit is for."),
            "doctor": ("str", "The doctor's name."),
            "date": ("str", "Format: %Y-%m-%d."),
        },
        {"visit_id": ("str", "Id of the booking.")},
    ),
    "CancelVisit": (
        "Cancels a doctor's visit given its id.",
        {"visit_id": ("str", "Id of the visit.")},
        {"status": ("str", "success or failed")},
    ),
    "CheckPackage": (
        "Reports where a parcel is, given its tracking number.",
        {"tracking_number": ("str", "Carrier tracking number.")},
        {"status": ("str", "Where the parcel is.")},
    ),
    "SetThermostat": (
        "Sets the target temperature of a room's thermostat.",
        {"room": ("str", "Which room."), "temperature": ("float", "Celsius.")},
        {"status": ("str", "success or failed")},
    ),
    "ToolSearcher": (
        "Searches for the API that fits a few keywords and returns its description.",
        {"keywords": ("str", "Words describing the needed tool.")},
        {"best_matchs": ("dict", "The best matching API.")},
    ),
}
PREAMBLE = (
    "\nWrite the API call the dialogue needs next, as [ApiName(key1='value1', key2='value2')].\n"
    "The current year is 2024.\nInput:\nUser: what the user says\nAI: what the assistant says\n"
    "\nExpected output:\nAPI-Request: [ApiName(key1='value1', key2='value2')]\n\n"
    "API descriptions:\n"
)
NAMES = ("mira", "jonas", "priya", "tomek", "lena", "omar", "sofia", "kwame")
PLACES = ("the central station", "Elm Street 14", "the airport", "the city library", "Pier 7")


@dataclass
class Dialogue:
    """Events in order: ("User"|"AI", text) or ("CALL", call text, result)."""

    main: str
    events: list[tuple[Any, ...]] = field(default_factory=list)
    #: For the scripted rewriter, per call index: (rewritten last user turn, removed spans).
    rewrites: dict[int, tuple[str, list[str]]] = field(default_factory=dict)

    def say(self, role: str, text: str) -> None:
        self.events.append((role, text))

    def call(self, text: str, result: Any, rewrite: tuple[str, list[str]] | None = None) -> None:
        if rewrite is not None:
            self.rewrites[sum(1 for e in self.events if e[0] == "CALL")] = rewrite
        self.events.append(("CALL", text, result))


def _q(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _call(name: str, **args: Any) -> str:
    return f"{name}(" + ", ".join(f"{k}={_q(v)}" for k, v in args.items()) + ")"


def _sign_in(d: Dialogue, rng: random.Random) -> str:
    """The assistant asks for a *password*; the user gives both; a token comes back."""
    user, password = (
        rng.choice(NAMES),
        f"{rng.choice(('tulip', 'cedar', 'orbit'))}{rng.randint(10, 99)}",
    )
    d.say("AI", "I can do that once you are signed in. What are your username and password?")
    said = f"My username is {user} and my password is {password}."
    d.say("User", said)
    token = f"tk{rng.randint(10**7, 10**8 - 1)}"
    d.call(
        _call("SignIn", username=user, password=password),
        {"token": token},
        (f"My username is {user}.", [f"and my password is {password}"]),
    )
    return token


def alarm(rng: random.Random) -> Dialogue:
    """The time is said in the first user turn and again in the last one."""
    d = Dialogue("AddAlarm")
    time = f"{rng.randint(5, 9)}:{rng.choice(('00', '15', '30', '45'))}"
    d.say("User", f"Could you set an alarm for {time} tomorrow morning?")
    token = _sign_in(d, rng)
    d.say("AI", "You are signed in. Just to be sure, which time should it ring?")
    d.say("User", f"{time}, please.")
    d.call(
        _call("AddAlarm", token=token, time=time),
        {"status": "success"},
        ("The usual time, please.", [time]),
    )
    d.say("AI", f"Done, your alarm rings at {time}.")
    return d


def taxi(rng: random.Random) -> Dialogue:
    d = Dialogue("BookTaxi")
    pickup, destination = rng.sample(PLACES, 2)
    when = f"2024-0{rng.randint(3, 9)}-{rng.randint(10, 28)} {rng.randint(7, 20)}:00"
    d.say("User", f"I need a taxi to {destination}.")
    d.say("AI", "Where should it pick you up, and when?")
    d.say("User", f"From {pickup}, at {when}.")
    d.call(
        _call("BookTaxi", pickup=pickup, destination=destination, time=when),
        {"ride_id": f"R{rng.randint(1000, 9999)}"},
        (f"At {when}.", [f"From {pickup},"]),
    )
    d.say("AI", "Your taxi is booked.")
    return d


def expense(rng: random.Random) -> Dialogue:
    d = Dialogue("RecordExpense")
    amount = round(rng.uniform(5, 300), 2)
    date = f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"
    category = rng.choice(("food", "travel", "books"))
    d.say("User", f"Please log an expense: {amount} dollars for {category} on {date}.")
    d.call(
        _call("RecordExpense", amount=amount, category=category, date=date),
        {"expense_id": f"E{rng.randint(100, 999)}"},
        (f"Please log an expense for {category} on {date}.", [f"{amount} dollars"]),
    )
    d.say("AI", "Logged.")
    return d


def visit(rng: random.Random) -> Dialogue:
    d = Dialogue("RegisterVisit")
    patient = rng.choice(NAMES).capitalize()
    doctor = f"Dr. {rng.choice(('Okafor', 'Lindqvist', 'Baptiste', 'Moreau'))}"
    date = f"2024-1{rng.randint(0, 2)}-{rng.randint(10, 28)}"
    d.say("User", f"Book me a visit with {doctor}, please.")
    d.say("AI", "For which patient and on which date?")
    d.say("User", f"For {patient}, on {date}.")
    d.call(
        _call("RegisterVisit", patient_name=patient, doctor=doctor, date=date),
        {"visit_id": f"V{rng.randint(10**5, 10**6 - 1)}"},
        (f"For {patient}.", [f"on {date}"]),
    )
    d.say("AI", "The visit is booked.")
    return d


def parcel(rng: random.Random) -> Dialogue:
    d = Dialogue("CheckPackage")
    number = f"ZX{rng.randint(10**8, 10**9 - 1)}"
    d.say("User", f"Where is my parcel? The tracking number is {number}.")
    d.call(
        _call("CheckPackage", tracking_number=number),
        {"status": "at the depot"},
        ("Where is my parcel?", [f"The tracking number is {number}."]),
    )
    d.say("AI", "It is at the local depot.")
    return d


def translate(rng: random.Random) -> Dialogue:
    d = Dialogue("TranslateText")
    text = rng.choice(("See you at noon", "The shop opens at nine", "Thank you for the gift"))
    language = rng.choice(("fr", "de", "pt"))
    d.say("User", f"How do I say '{text}' in {language}?")
    d.call(
        _call("TranslateText", text=text, target_language=language),
        {"translation": "..."},
        (f"How do I say it in {language}?", [f"'{text}'"]),
    )
    return d


def _one_turn(main: str, said: str, call: str, rewrite: tuple[str, list[str]]) -> Dialogue:
    d = Dialogue(main)
    d.say("User", said)
    d.call(call, {"status": "success"}, rewrite)
    return d


def expenses(rng: random.Random) -> Dialogue:
    start = f"2024-0{rng.randint(1, 4)}-01"
    end = f"2024-0{rng.randint(5, 9)}-28"
    return _one_turn(
        "QueryExpenses", f"What did I spend between {start} and {end}?",
        _call("QueryExpenses", start_date=start, end_date=end),
        ("What did I spend recently?", [f"between {start} and {end}"]),
    )  # fmt: skip


def one_expense(rng: random.Random) -> Dialogue:
    number = f"E{rng.randint(100, 999)}"
    return _one_turn(
        "QueryExpense", f"Show me expense {number}.", _call("QueryExpense", expense_id=number),
        ("Show me that expense.", [number]),
    )  # fmt: skip


def delete_alarm(rng: random.Random) -> Dialogue:
    d = Dialogue("DeleteAlarm")
    time = f"{rng.randint(5, 9)}:{rng.choice(('00', '30'))}"
    d.say("User", "Please remove one of my alarms.")
    token = _sign_in(d, rng)
    d.say("AI", "Which one?")
    d.say("User", f"The one at {time}.")
    d.call(
        _call("DeleteAlarm", token=token, time=time),
        {"status": "success"},
        ("The early one.", [f"at {time}"]),
    )
    return d


def reminder(rng: random.Random) -> Dialogue:
    d = Dialogue("AddReminder")
    time = f"{rng.randint(12, 20)}:00"
    note = rng.choice(("call the plumber", "water the plants", "pick up the keys"))
    d.say("User", f"Remind me to {note}.")
    token = _sign_in(d, rng)
    d.say("AI", "At what time?")
    d.say("User", f"At {time}, thanks.")
    d.call(
        _call("AddReminder", token=token, time=time, note=note),
        {"status": "success"},
        ("Later today, thanks.", [f"At {time}"]),
    )
    return d


LEVEL1 = (
    alarm,
    taxi,
    expense,
    visit,
    parcel,
    translate,
    expenses,
    one_expense,
    delete_alarm,
    reminder,
)


def level2(rng: random.Random) -> Dialogue:
    """The tool searcher is the only described API: its own call (the retrieval step) and
    the calls after it (to APIs found, never described) all need tool retrieval."""
    d = Dialogue("ToolSearcher")
    room = rng.choice(("bedroom", "office", "kitchen"))
    temperature = float(rng.randint(18, 24))
    d.say("User", f"Set the {room} thermostat to {temperature} degrees.")
    d.call(
        _call("ToolSearcher", keywords="thermostat temperature"),
        {"best_matchs": {"name": "SetThermostat"}},
    )
    token = _sign_in(d, rng)
    del token  # SetThermostat takes no token; the sign-in is its own undescribed call
    d.call(_call("SetThermostat", room=room, temperature=temperature), {"status": "success"})
    return d


def _describe(names: list[str]) -> str:
    lines = []
    for name in names:
        description, inputs, outputs = APIS[name]
        lines.append(
            json.dumps(
                {
                    "name": name,
                    "description": description,
                    "input_parameters": {
                        k: {"type": t, "description": s} for k, (t, s) in inputs.items()
                    },
                    "output_parameters": {
                        k: {"type": t, "description": s} for k, (t, s) in outputs.items()
                    },
                }
            )
        )
    return PREAMBLE + "\n".join(lines)


def _render(events: list[tuple[Any, ...]]) -> str:
    lines = []
    for event in events:
        if event[0] == "CALL":
            lines.append(f"API-Request: [{event[1]}]->{json.dumps(event[2])}")
        else:
            lines.append(f"{event[0]}: {event[1]}")
    return "\n".join(lines) + "\nGenerate API Request:\n"


def records(d: Dialogue, file: str, described: list[str]) -> list[dict[str, Any]]:
    out = []
    for position, event in enumerate(d.events):
        if event[0] == "CALL":
            out.append(
                {
                    "file": file,
                    "id": len(out),
                    "instruction": _describe(described),
                    "input": _render(d.events[:position]),
                    "expected_output": f"API-Request: [{event[1]}]",
                }
            )
    return out


def _replay_lines(d: Dialogue, file: str) -> list[dict[str, Any]]:
    """One scripted rewriter reply per call record: the answer-first JSON the prompt asks for."""
    lines = []
    for call_index, (rewritten, removed) in d.rewrites.items():
        calls = [i for i, e in enumerate(d.events) if e[0] == "CALL"]
        users = sum(1 for e in d.events[: calls[call_index]] if e[0] == "User")
        body = {"turn": users, "rewritten": rewritten, "removed": removed}
        lines.append(
            {
                "id": f"apibank-{Path(file).stem}-{call_index}",
                "task": "aware-utterance-removal",
                "prediction": "```json\n" + json.dumps(body) + "\n```\nThe decisive value is gone.",
            }
        )
    return lines


def write_apibank(out: Path, dialogues: int, seed: int) -> dict[str, int]:
    """``level-1-api.json`` (about 1.4 records per dialogue), ``level-2-api.json`` (three
    records per dialogue: one tool-searcher call, two calls it made necessary) and the
    rewriter's replay file ``rewrites.jsonl``."""
    rng = random.Random(f"realshape-apibank|{seed}")
    out.mkdir(parents=True, exist_ok=True)
    level_1: list[dict[str, Any]] = []
    replies: list[dict[str, Any]] = []
    for number in range(dialogues):
        d = LEVEL1[number % len(LEVEL1)](rng)
        described = sorted({e[1].split("(")[0] for e in d.events if e[0] == "CALL"})
        stem = "-".join([d.main] + [n for n in described if n != d.main])
        file = f"{stem}-level-1-{number + 1}.jsonl"
        level_1 += records(d, file, described)
        replies += _replay_lines(d, file)
    level_2: list[dict[str, Any]] = []
    for number in range(max(1, dialogues // 3)):
        d = level2(rng)
        level_2 += records(d, f"SetThermostat-level-2-{number + 1}.jsonl", ["ToolSearcher"])
    for name, data in (("level-1-api.json", level_1), ("level-2-api.json", level_2)):
        (out / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    lines = "".join(json.dumps(line) + "\n" for line in replies)
    (out.parent / "rewrites.jsonl").write_text(lines, encoding="utf-8")
    return {"level-1 records": len(level_1), "level-2 records": len(level_2)}
