r"""The harness's side of one sample's LMPs: answer the worker's host calls with model code.

The worker (``lmp.py``) asks ``("lmp", {"lmp", "query", "context"})`` when the program calls an
LMP and ``("fgen", {"name", "signature"})`` for a function nobody defined. For each, this
builds the prompt the original built (memo §2.2: base prompt, the session's history for
``tabletop_ui``, the context line, prefix + query + suffix; fgen: base prompt and
``# define function: <signature>.``), asks the model through the runner's recording
``generate`` (so the call is cached, retried and recorded as a step: ``tabletop_ui``,
``parse_obj_name``, ``parse_obj_name#2``, ``fgen:make_line``), and answers with the code.
Each request stops at its LMP's own stop sequences in every mode (they end the code block the
original asked for), plus the harness's ``HARNESS_STOPS`` in completion mode only (a chat
reply ends with its turn); a run's ``--stop``/``--no-stop`` replaces the harness's stops,
never the LMP's (``harness_stops``).

The worker is not trusted: a payload that is not exactly one of the two shapes, an unknown
LMP, a function name that is not an identifier or text over ``MAX_TEXT_CHARS`` is refused
(``HostRefused``: the program gets an exception and the sample crashes), never formatted
into a prompt. So is model text that UTF-8 cannot encode (a lone surrogate, which a
``'\ud800'`` escape in the model's code makes): prompts, cache keys and logs are UTF-8, and it
is the model's error, said as such, not the harness's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolbench.core.solve import Generate
from toolbench.prompts.builder import Mode, PromptConfig
from toolbench.prompts.extract import extract_program
from toolbench.sandbox import HostRefused
from toolbench.sandbox.host import Code
from toolbench.tasks.tabletop import docs, experts
from toolbench.tasks.tabletop.lmp import FGEN, HARNESS_STOPS, LMPS, TOP_LMP, lmp_sources
from toolbench.types import GenerationRequest, Sample

MAX_TEXT_CHARS = 4_000  # a query, context or signature longer than this is refused
MAX_NAME_CHARS = 64
CHAT_INSTRUCTION = (
    "Continue the Python program below: write only the code that comes next for the last "
    "comment, with no explanation."
)


@dataclass
class LmpCall:
    """One answered host call, for the record's trace."""

    step: str
    query: str
    context: str = ""


@dataclass
class LmpSession:
    """One sample's LMPs on the harness side; a ``HostHandler`` for ``SandboxPool.arun``."""

    sample: Sample
    epoch: int
    generate: Generate
    config: PromptConfig
    prompts: dict[str, str]
    ideal: Any = None  # (lmp, query, context) -> the oracle's program, or None
    history: dict[str, str] = field(default_factory=dict)
    trace: list[LmpCall] = field(default_factory=list)
    top_code: str = ""

    async def __call__(self, name: str, payload: Any) -> Code:
        if name == "lmp":
            lmp, query, context = _lmp_call(payload)
            return await self._lmp(lmp, query, context)
        if name == FGEN:
            function, signature = _fgen_call(payload)
            return await self._fgen(function, signature)
        raise HostRefused(f"unknown host function {name[:MAX_NAME_CHARS]!r}")

    def lmp_prompt(self, lmp: str, query: str, context: str) -> str:
        """The prompt of one LMP call (memo 2.2)."""
        spec = LMPS[lmp]
        prompt = self.prompts.get(lmp, "")
        if spec.session:
            prompt += "\n" + self.history.get(lmp, "")
        if context:
            prompt += "\n" + context
        return prompt + f"\n{spec.prefix}{query}{spec.suffix}"

    def lmp_request(self, lmp: str, query: str, context: str) -> GenerationRequest:
        """The request of one LMP call; the task's ``first_request`` is this for the
        program's ``tabletop_ui`` call."""
        prompt = self.lmp_prompt(lmp, query, context)
        return self.request(lmp, prompt, LMPS[lmp].stops, (lmp, query, context))

    async def _lmp(self, lmp: str, query: str, context: str) -> Code:
        spec = LMPS[lmp]
        code = _utf8(await self._ask(self.lmp_request(lmp, query, context)), f"{lmp}'s reply")
        self.trace.append(LmpCall(lmp, query, context))
        if lmp == TOP_LMP and not self.top_code:
            self.top_code = code
        if spec.session:  # what ran, as the original's history kept it
            ran = f"{context}\n{code}" if context else code
            self.history[lmp] = self.history.get(lmp, "") + "\n" + ran
        return Code(code, lmp_sources(context, code))

    async def _fgen(self, function: str, signature: str) -> Code:
        spec = LMPS[FGEN]
        prompt = f"{self.prompts.get(FGEN, '')}\n{spec.prefix}{signature}{spec.suffix}"
        request = self.request(f"fgen:{function}", prompt, spec.stops, (FGEN, signature, ""))
        code = _utf8(await self._ask(request), f"the reply defining {function}")
        self.trace.append(LmpCall(f"fgen:{function}", signature))
        return Code(code)

    async def _ask(self, request: GenerationRequest) -> str:
        generation = await self.generate(request)
        text = generation.text
        return extract_program(text) if request.messages is not None else text.strip()

    def request(
        self, step: str, prompt: str, stops: tuple[str, ...], ideal_key: tuple[str, str, str]
    ) -> GenerationRequest:
        config = self.config
        chat = config.mode is not Mode.COMPLETION
        messages = (
            (
                {"role": "system", "content": config.system or CHAT_INSTRUCTION},
                {"role": "user", "content": prompt},
            )
            if chat
            else None
        )
        return GenerationRequest(
            prompt=None if chat else prompt,
            messages=messages,
            stop=_unique((*stops, *harness_stops(config))),
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            seed=None if config.seed is None else config.seed + self.epoch,
            sample=self.sample,
            epoch=self.epoch,
            step=step,
            ideal=self.ideal(*ideal_key) if self.ideal is not None else None,
        )


def harness_stops(config: PromptConfig) -> tuple[str, ...]:
    """The stops the harness adds to every LMP's own: the run's (``--stop``, none for
    ``--no-stop``), else ``HARNESS_STOPS`` in completion mode and none in chat mode."""
    if config.stop is not None:
        return config.stop
    return HARNESS_STOPS if config.mode is Mode.COMPLETION else ()


def _unique(stops: tuple[str, ...]) -> tuple[str, ...]:
    """``stops`` without repeats, in order: a server takes only the first few (OpenAI: 4)."""
    return tuple(dict.fromkeys(stops))


def _text(payload: dict[str, Any], key: str, owner: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str):
        raise HostRefused(f"{key} must be a string")
    if len(value) > MAX_TEXT_CHARS:
        raise HostRefused(f"{key} is longer than {MAX_TEXT_CHARS} characters")
    return _utf8(value, f"{owner}'s {key}")


def _utf8(text: str, what: str) -> str:
    """``text`` if UTF-8 can encode it; else the model's error, refused before a prompt, a
    cache key or a log line meets it (there it was an internal error of the harness)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise HostRefused(
            f"{what} holds text that cannot be encoded as UTF-8 (a lone surrogate, "
            f"{text[error.start]!a} at character {error.start}): the model wrote it"
        ) from None
    return text


def _lmp_call(payload: Any) -> tuple[str, str, str]:
    if not (isinstance(payload, dict) and set(payload) == {"lmp", "query", "context"}):
        raise HostRefused("an LMP call is {lmp, query, context}")
    lmp = payload["lmp"]
    if not isinstance(lmp, str) or lmp not in LMPS or lmp == FGEN:
        raise HostRefused("unknown LMP")
    return lmp, _text(payload, "query", lmp), _text(payload, "context", lmp)


def _fgen_call(payload: Any) -> tuple[str, str]:
    if not (isinstance(payload, dict) and set(payload) == {"name", "signature"}):
        raise HostRefused("a function-generation call is {name, signature}")
    name = payload["name"]
    if not (isinstance(name, str) and name.isidentifier() and len(name) <= MAX_NAME_CHARS):
        raise HostRefused("a generated function's name must be an identifier")
    return name, _text(payload, "signature", f"fgen:{name}")


def split_prompt(step: str, prompt: str, base: str) -> tuple[str, str, str]:
    """(lmp, query, context) read back from a request the way a model sees it: the step names
    the LMP, the query is what follows the last prefix, the context the line before it. For
    the baseline, which may use only the prompt; an odd query (one with a line break in it)
    is read approximately, never with an error."""
    label = step.partition("#")[0]
    lmp = FGEN if label.startswith("fgen:") else label
    spec = LMPS.get(lmp, LMPS[TOP_LMP])
    at = prompt.rfind("\n" + spec.prefix)
    if at < 0:
        return lmp, "", ""
    query = prompt[at + 1 + len(spec.prefix) :]
    if spec.suffix and query.endswith(spec.suffix):
        query = query[: -len(spec.suffix)]
    head = prompt[:at]
    context = head.rpartition("\n")[2] if len(head) > len(base) and lmp != FGEN else ""
    return lmp, query, context


def baseline_reply(request: GenerationRequest) -> str:
    """The built-in baseline's answer to a tabletop request: the template policy of
    ``experts.baseline_program``, given only what the prompt says."""
    if request.prompt is not None:
        text = request.prompt
    else:
        messages = request.messages or ()
        text = str(messages[-1].get("content", "")) if messages else ""
    label = request.step.partition("#")[0]
    lmp_name = FGEN if label.startswith("fgen:") else label
    base = docs.BASE_PROMPTS.get(lmp_name, "")
    lmp, query, context = split_prompt(request.step, text, base)
    return str(experts.baseline_program(lmp, query, context))
