"""The prompt for the paper's other kind of utterance removal: a request made unclear.

``rewrite_prompt`` asks for a *clear request with a missing argument* (the user still says
what they want, but not, say, which account). This prompt asks for the opposite: the user
still gives the details, but no longer says clearly what they want done with them, so more
than one offered API (or none) is a fair reading. An assistant should ask what is meant
instead of guessing an action; that is the awareness being tested.

The reply has the same shape as for the other kind (``turn``, ``rewritten``, ``removed``), so
``rewrite_parse`` reads both and the same automatic checks apply, except that values the user
still states are expected here (``removal_checks.auto_rejections`` skips that check). The
demonstrations are written by us and rendered with the same code as the real input.
"""

from __future__ import annotations

from toolbench.aware.manipulate.rewrite_prompt import (
    Demonstration,
    _demo_instance,
    _schema,
    _user,
    render_instance,
)
from toolbench.aware.schema import ApiSpec, Instance

UNCLEAR_SYSTEM_PROMPT = """\
You help build a test of whether AI assistants notice when a request is too vague to act on.

You get the APIs an assistant may call, a dialogue between a user and the assistant (the user \
turns are numbered), and the API call(s) the dialogue supports as it stands. Rewrite ONE user \
turn so that the user no longer says clearly what they want done: the details may all stay, \
but an assistant could no longer tell which action to take (which API, or which way round) \
without asking.

Think it through in these steps:
1. Find the words that say what the user wants done: the verb or phrase that picks the API \
("delete", "book", "move ... to", "what is"). Find the user turn that holds them.
2. Replace those words with something vague ("do something about", "sort out", "help me \
with") or leave them out, so that at least two of the offered APIs would be a reasonable \
reading of the new utterance.
3. Keep the details. This is not about a missing value: names, dates, times and amounts stay \
unless they themselves give the action away.
4. Keep it natural: the new utterance must read like something a person would say, \
grammatical, in the same voice and language. Do not add new facts.
5. Change only that one user turn. Do not write assistant lines or role names such as "User:".

Answer FIRST, with one JSON object in a ```json block, with exactly these keys:
{"turn": <number of the user turn you rewrote>, "rewritten": "<the whole new utterance>", \
"removed": ["<each removed span, copied verbatim from the original utterance>", ...]}
After the block, explain in a few sentences which readings the new utterance allows."""


def _alarm_apis() -> list[ApiSpec]:
    time = ("string", "alarm time as %Y-%m-%d %H:%M:%S")
    return [
        ApiSpec(
            name="AddAlarm", description="Set a new alarm.", parameters=_schema(["time"], time=time)
        ),
        ApiSpec(
            name="DeleteAlarm",
            description="Remove an existing alarm.",
            parameters=_schema(["time"], time=time),
        ),
        ApiSpec(
            name="SnoozeAlarm",
            description="Push an existing alarm back by some minutes.",
            parameters=_schema(["time", "minutes"], time=time, minutes=("integer", "delay")),
        ),
    ]


_ALARM = Demonstration(
    _demo_instance(
        "unclear-alarm",
        [_user("Please delete my alarm for 6:45 tomorrow morning. Today is 2024-02-11.")],
        _alarm_apis(),
        ["DeleteAlarm"],
        ["DeleteAlarm(time='2024-02-12 06:45:00')"],
    ),
    'The action comes from "delete". With it gone, the user still names the alarm, but '
    "they might want it removed, snoozed, or a new one set; the assistant has to ask.",
    {
        "turn": 1,
        "rewritten": "Could you do something about my alarm for 6:45 tomorrow morning? "
        "Today is 2024-02-11.",
        "removed": ["Please delete"],
    },
)

_TRANSFER = Demonstration(
    _demo_instance(
        "unclear-transfer",
        [_user("Move 200 dollars from my savings into my checking account, please.")],
        [
            ApiSpec(
                name="TransferMoney",
                description="Move money between two of the user's accounts.",
                parameters=_schema(
                    ["amount", "from_account", "to_account"],
                    amount=("number", "US dollars"),
                    from_account=("string", "'checking' or 'savings'"),
                    to_account=("string", "'checking' or 'savings'"),
                ),
            ),
            ApiSpec(
                name="AccountBalance",
                description="Balance of one of the user's accounts.",
                parameters=_schema(["account"], account=("string", "'checking' or 'savings'")),
            ),
        ],
        ["TransferMoney"],
        ["TransferMoney(amount=200, from_account='savings', to_account='checking')"],
    ),
    '"Move ... from ... into" gives both the action and its direction. Without it the user '
    "could mean a transfer either way, or only want to know whether the 200 dollars are there.",
    {
        "turn": 1,
        "rewritten": "It's about 200 dollars and my savings and checking accounts, please.",
        "removed": ["Move", "from my savings into my checking account"],
    },
)

#: Two worked examples: the verb that picks one of several APIs on the same object, and an
#: action whose direction is part of the request.
UNCLEAR_DEMONSTRATIONS: tuple[Demonstration, ...] = (_ALARM, _TRANSFER)


def unclear_messages(instance: Instance) -> list[dict[str, str]]:
    """The chat messages for one instance: system, the demonstrations, then the instance."""
    messages = [{"role": "system", "content": UNCLEAR_SYSTEM_PROMPT}]
    for demo in UNCLEAR_DEMONSTRATIONS:
        messages.append({"role": "user", "content": render_instance(demo.instance)})
        messages.append({"role": "assistant", "content": demo.reply()})
    messages.append({"role": "user", "content": render_instance(instance)})
    return messages
