"""A web_shop episode as an ``AgentWorld``: ``search(query)`` and ``click(target)`` tools.

A model plays web_shop by writing one ``search[...]`` / ``click[...]`` action a turn and
reading the page that follows. An agent makes the same moves as tool calls: each call is
turned into the action text ``search[<query>]`` / ``click[<target>]`` (built here, so an
argument can never smuggle in a second action) and stepped on this sample's session; the reply
is the page as the episode's prompt shows it (same layout, same text). The request is the
goal's instruction: the start page shows nothing else, and ``search`` works from any page.

Which calls count: every call the shop accepted, in order — they are the episode's actions.
A call the shop refuses (``click`` on something not on the page, an empty query) is an error
reply in the store's own words and, unlike a model's no-op, costs no turn: the protocol says a
refused call changes nothing. The episode keeps the task's limit of ``MAX_STEPS`` accepted
actions; after that, and after the purchase, every call is refused. ``outcome`` is the task's
own ``episode_outcome`` on the session (success = a purchase was made, ``reward`` the purchase
reward, ``purchase_match_rate`` reward = 1); an agent that never bought scores as an episode
that never bought does today (success False, reward 0).

The gold: web_shop has no gold label; the oracle answers each page with the expert's
``ideal_action``. ``gold_calls`` plays the expert on a fresh session of the goal and returns
its actions as calls — the path the oracle takes (its reward is the expert's: 1, except where
WebShop's colour normaliser loses an option, see ``expert.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable
from toolbench.core.bounded import bounded_text
from toolbench.tasks.web_shop.actions import Action, parse_action, split_action
from toolbench.tasks.web_shop.docs import FUNCTIONS
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.judging import MAX_STEPS, episode_outcome
from toolbench.tasks.web_shop.world import Session, Store
from toolbench.types import Outcome, Status

MAX_REPLY_CHARS = 20_000  # one page as a tool reply (pages are a few thousand characters)
MAX_ARGUMENT_CHARS = 1_000  # a query or target; a model's action is cut at 128 tokens
MAX_ACTION_LINES = 1_000  # lines of a native action text that ``translate`` reads
#: Each tool's one argument, named as the brief of the MCP tools says, and what it holds.
_ARGUMENTS = {
    "search": ("query", "the keywords to type into the search box"),
    "click": ("target", "the text of what to click, as the current page shows it"),
}


def _spec(name: str, doc: str) -> ToolSpec:
    """A tool from its API doc (``docs.FUNCTIONS``: signature line, then ``# what it does``),
    the text a model's prompt shows."""
    said = " ".join(line.lstrip("# ").strip() for line in doc.splitlines()[1:]).strip()
    argument, meaning = _ARGUMENTS[name]
    description = (
        f"{said} (As a tool: {name}({argument}) does what {name}[{argument}] does.) "
        "Replies with the page shown after the action, as text."
    )
    schema = {
        "type": "object",
        "properties": {argument: {"type": "string", "description": meaning}},
        "required": [argument],
        "additionalProperties": False,
    }
    return ToolSpec(name, description, schema)


TOOLS: tuple[ToolSpec, ...] = tuple(_spec(name, doc) for name, doc in FUNCTIONS.items())


class BadCall(ValueError):
    """A call that is not one of the shop's actions (said to the agent as an error reply)."""


def call_action(name: str, arguments: Mapping[str, Any]) -> str:
    """The native action a call stands for; ``BadCall`` in words the agent can act on."""
    if not isinstance(name, str) or name not in _ARGUMENTS:
        raise BadCall(f"unknown tool {bounded_text(str(name), 100)!r}; the tools are search, click")
    if not isinstance(arguments, Mapping):
        raise BadCall("the arguments must be a JSON object")
    argument, _ = _ARGUMENTS[name]
    extra = sorted(str(key) for key in arguments if key != argument)
    if extra:
        shown = bounded_text(", ".join(extra), 200)
        raise BadCall(f"{name} takes only {argument!r}; unexpected argument(s): {shown}")
    if argument not in arguments:
        raise BadCall(f"{name} needs the argument {argument!r} (a string)")
    value = arguments[argument]
    if not isinstance(value, str):
        raise BadCall(f"{name}: {argument!r} must be a string, not {type(value).__name__}")
    if len(value) > MAX_ARGUMENT_CHARS:
        raise BadCall(f"{name}: {argument!r} is longer than {MAX_ARGUMENT_CHARS} characters")
    if not value.strip():
        raise BadCall(f"{name}[...] needs a non-empty argument")
    action = f"{name}[{value}]"
    # The shop reads only an action's first line and its last "[" before "]": a value with a
    # line break or brackets would be read as another action, so it is refused here.
    if parse_action(action) != Action(name, value.lower()):
        raise BadCall(f"{name}: {argument!r} may not contain a line break or '[' / ']'")
    return action


def action_calls(action: str) -> list[ToolCall]:
    """The calls of a native action text: one ``search[...]`` / ``click[...]`` per line
    (blank lines skipped); ``Untranslatable`` for a line that is not one of them."""
    calls: list[ToolCall] = []
    lines = action.splitlines()
    if len(lines) > MAX_ACTION_LINES:
        raise Untranslatable(f"more than {MAX_ACTION_LINES} lines; one action per line")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        name, arg = split_action(line.strip())
        if name not in _ARGUMENTS or arg is None:
            shown = bounded_text(line.strip(), 100)
            raise Untranslatable(f"line {number} is not search[...] or click[...]: {shown!r}")
        call = ToolCall(name, {_ARGUMENTS[name][0]: arg})
        try:
            call_action(call.name, call.arguments)
        except BadCall as exc:
            raise Untranslatable(f"line {number}: {exc}") from None
        calls.append(call)
    return calls


class WebShopWorld:
    """One goal's episode for an agent (see module doc)."""

    def __init__(self, store: Store, goal_id: int, layout: str) -> None:
        self.store, self.goal_id, self.layout = store, goal_id, layout
        self.session: Session = store.new_session(goal_id, layout)
        self.actions: list[str] = []  # the accepted actions, in order

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return TOOLS

    @property
    def request(self) -> str:
        return self.session.goal.instruction_text

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        try:
            action = call_action(name, arguments)
        except BadCall as exc:
            return ToolReply(str(exc), is_error=True)
        if self.session.done:
            return ToolReply("the episode is over: the purchase has been made", is_error=True)
        if len(self.actions) >= MAX_STEPS:
            return ToolReply(
                f"the episode is over: {MAX_STEPS} actions taken without a purchase", True
            )
        steps = self.session.steps
        result = self.session.step(action)
        if not result.info["valid"]:
            self.session.steps = steps  # a refused call costs nothing (it changed nothing)
            reason = str(result.info.get("reason", "the shop did nothing"))
            return ToolReply(reason, is_error=True)
        self.actions.append(action)
        return ToolReply(bounded_text(result.observation, MAX_REPLY_CHARS))

    async def outcome(self) -> Outcome:
        outcome = episode_outcome(self.session, len(self.actions))
        outcome.details = {**outcome.details, "actions": list(self.actions)}
        return outcome

    def failed(self, message: str) -> Outcome:
        """A crash, as the task scores a failed model call mid-episode: a model_error that
        bought nothing (reward 0; no turn count, a crash's length is not an episode's)."""
        metrics = {"reward": 0.0, "purchase_match_rate": 0.0}
        details = {"goal": self.goal_id}
        return Outcome(Status.MODEL_ERROR, False, metrics, message, details)

    async def translate(self, action: str) -> list[ToolCall]:
        return action_calls(action)

    async def gold_calls(self) -> list[ToolCall]:
        return action_calls("\n".join(expert_actions(self.store, self.goal_id, self.layout)))

    async def close(self) -> None:
        return None


def expert_actions(store: Store, goal_id: int, layout: str) -> list[str]:
    """The oracle's path through the goal's episode: the expert's action on each page, from
    a fresh session, until the purchase (at most ``MAX_STEPS``)."""
    session = store.new_session(goal_id, layout)
    actions: list[str] = []
    while not session.done and len(actions) < MAX_STEPS:
        action = ideal_action(session)
        session.step(action)
        actions.append(action)
    return actions
