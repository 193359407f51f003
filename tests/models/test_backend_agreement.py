"""The same recorded generations give byte-identical records through every backend's code path.

A score must not depend on how a model was served. This test records one generation per
home_search sample and mode as token ids of a real tokenizer (``tests/tinylm.py``), the way an
engine produces them: token by token until the end-of-sequence token, the token that completes
a stop sequence, or ``max_tokens``. The same generations then go through three code paths of a
whole ``toolbench run`` (the CLI, in process):

- ``hf:DIR``, with only ``HFModel._generate_rows`` (the one method that runs the model)
  replaced by the recorded ids, so templates, stops, finish reasons, token counts and the
  overflow check all run as they do for a real model;
- ``openai:`` completions (``--mode completion``) and chat (``--mode chat``) against an
  OpenAI-compatible server on 127.0.0.1 (an aiohttp app started here) that answers with the
  decoded text of the same ids and counts tokens with the same tokenizer, as a real server
  does: prompt tokens as the tokenized prompt or chat template, completion tokens as the ids
  generated (the eos and the stop-completing token included). It answers in two conventions:
  ``openai`` (vLLM, the OpenAI API: the stop string is not in the text) and ``serve``
  (``transformers serve``: the text holds the stop string).

The recorded replies cover: a stop sequence in mid-reply (``------`` and ``Task:``), a reply that
runs into ``max_tokens``, an eos right away (an empty reply), a reply ended by eos, and chat
replies that begin with ``Task:`` or hold ``------`` (chat mode has no stops: kept whole).

What is compared: each run's ``samples.jsonl`` records, sorted by sample, as JSON text, with only
the ``latency_s`` fields removed (wall time is the one thing the backends cannot share) and each
line's ``chain`` (the log's tamper-evidence checksum: it starts from a random seed per run and
covers the latency, so no two runs share it). Where a
stop sequence ended the reply, ``hf:`` and a ``serve``-convention server both hand the harness the
reply with its stop, which the harness cuts and keeps as ``raw_text``; an ``openai``-convention
server never sends the stop, so nothing is cut and there is no ``raw_text``: that comparison
also drops ``raw_text``, and checks separately that it appears exactly where a stop was cut.
A batched ``hf:`` run (``--hf-batch-size 8``: padded rows of several lengths) must give the same
records with ``batch_size`` dropped too (how many rows shared a ``generate`` call).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from aiohttp import web

import toolbench.tasks.home_search as home_search_package
from tests.conftest import CliResult, read_run
from tests.tinylm import build_tiny_lm
from toolbench.models.generation import cut_at_stop
from toolbench.models.hf import HFModel
from toolbench.prompts.builder import STOP_SEQUENCES
from toolbench.runner.chain import CHAIN_FIELD

pytestmark = pytest.mark.slow

LIMIT = 5
MAX_TOKENS = 160
#: A reply with no stop in it, far longer than MAX_TOKENS.
RUN_ON = 'API.set_location("Paris")\n' * 40


def home_search_samples() -> list[tuple[str, str]]:
    """(query, gold program) of the first LIMIT home_search samples: ``--limit`` takes these."""
    data = Path(home_search_package.__file__).parent / "data" / "v0" / "test.jsonl"
    lines = data.read_text().splitlines()[:LIMIT]
    return [(row["prompt"], row["completion"][0]) for row in map(json.loads, lines)]


def scripted_replies(mode: str) -> dict[str, str]:
    """The reply text of each sample's query, before generation ends it (eos follows)."""
    (q0, g0), (_, g1), _, _, (_, g4) = home_search_samples()
    if mode == "completion":
        texts = [
            g0
            + "\n------\nTask: Find a condo in Austin\nAction:\nAPI.search()",  # ------ mid-reply
            "\n".join(g1.splitlines()[:2]) + "\nTask: rent a flat\nAction:\n",  # Task: mid-reply
            "",  # eos right away
            RUN_ON,  # runs into max_tokens
            g4,  # ends with eos
        ]
    else:
        texts = [
            f"Task: {q0}\nAction:\n{g0}",  # a chat reply that begins with "Task:"
            f"```python\n{g1}\n```",
            "",
            RUN_ON,
            g4 + "\n------\nTask: more",  # no stops in chat mode: kept whole
        ]
    return {query: text for (query, _), text in zip(home_search_samples(), texts, strict=True)}


def query_of(prompt: str | None, messages: Sequence[Any] | None) -> str:
    """The sample's query, read back from the end of a completion prompt or chat request."""
    if messages:
        last = str(messages[-1]["content"])
        assert last.startswith("Task: ")
        return last[len("Task: ") :]
    assert prompt is not None and prompt.endswith("\nAction:\n")
    return prompt[: -len("\nAction:\n")].rsplit("Task: ", 1)[1]


class Recorded:
    """The recorded generations: what the model generates for a request, as token ids."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.eos = int(tokenizer.eos_token_id)
        self.replies = {mode: scripted_replies(mode) for mode in ("completion", "chat")}

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def generate(
        self,
        prompt: str | None,
        messages: Sequence[Any] | None,
        stops: Sequence[str],
        max_tokens: int,
    ) -> list[int]:
        """The ids an engine generates: one at a time until eos, the token that completes a
        stop sequence, or max_tokens."""
        text = self.replies["chat" if messages else "completion"][query_of(prompt, messages)]
        ids = [*self.tokenizer(text, add_special_tokens=False)["input_ids"], self.eos]
        out: list[int] = []
        for token in ids:
            out.append(token)
            if token == self.eos or len(out) == max_tokens:
                break
            if cut_at_stop(self.decode(out), stops)[1]:
                break
        return out

    def prompt_tokens(self, prompt: str | None, messages: Sequence[Any] | None) -> int:
        if messages:
            encoded = self.tokenizer.apply_chat_template(
                list(messages), add_generation_prompt=True, tokenize=True, return_dict=True
            )
            return len(encoded["input_ids"])
        return len(self.tokenizer(prompt)["input_ids"])


# ---- the OpenAI-compatible server ----


class ScriptedServer:
    """POST /v1/completions and /v1/chat/completions answering with the recorded generations,
    GET /v1/models; aiohttp on 127.0.0.1 in a thread of its own, stopped on exit."""

    def __init__(self, recorded: Recorded, convention: str) -> None:
        assert convention in ("openai", "serve")
        self.recorded = recorded
        self.convention = convention
        self.port = 0
        self.paths: list[str] = []
        self._stop: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, body: dict[str, Any], chat: bool) -> dict[str, Any]:
        prompt, messages = body.get("prompt"), body.get("messages")
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        ids = self.recorded.generate(prompt, messages, stops, int(body["max_tokens"]))
        text = self.recorded.decode(ids)
        text, stopped = cut_at_stop(text, stops) if self.convention == "openai" else (text, False)
        ended = ids[-1] == self.recorded.eos or stopped or cut_at_stop(text, stops)[1]
        prompt_tokens = self.recorded.prompt_tokens(prompt, messages)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(ids),
            "total_tokens": prompt_tokens + len(ids),
        }
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop" if ended else "length"}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice.update(text=text, logprobs=None)
        kind = "chat.completion" if chat else "text_completion"
        return {
            "id": "x",
            "object": kind,
            "model": body["model"],
            "choices": [choice],
            "usage": usage,
        }

    def _app(self) -> web.Application:
        async def completions(request: web.Request) -> web.Response:
            self.paths.append(request.path)
            return web.json_response(self.reply(await request.json(), chat=False))

        async def chat(request: web.Request) -> web.Response:
            self.paths.append(request.path)
            return web.json_response(self.reply(await request.json(), chat=True))

        async def models(_request: web.Request) -> web.Response:
            return web.json_response({"object": "list", "data": [{"id": "x", "object": "model"}]})

        app = web.Application()
        app.router.add_post("/v1/completions", completions)
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/v1/models", models)
        return app

    def __enter__(self) -> ScriptedServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        started = threading.Event()

        async def serve() -> None:
            runner = web.AppRunner(self._app(), access_log=None)
            await runner.setup()
            await web.SockSite(runner, sock).start()
            stop = asyncio.Event()
            self._stop = (asyncio.get_running_loop(), stop)
            started.set()
            try:
                await stop.wait()
            finally:
                await runner.cleanup()

        self._thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
        self._thread.start()
        assert started.wait(10), "the scripted server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            loop, stop = self._stop
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)


# ---- fixtures and helpers ----


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="module")
def recorded(tiny_model: Path) -> Recorded:
    from transformers import AutoTokenizer

    return Recorded(AutoTokenizer.from_pretrained(tiny_model))


@pytest.fixture
def scripted_hf(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """HFModel generates the recorded ids (padded like a batch); yields the batch sizes."""
    sizes: list[int] = []

    def generate_rows(
        self: HFModel, items: list[Any], temperature: float, seed: int | None
    ) -> list[list[int]]:
        assert temperature == 0.0
        rows = [
            recorded.generate(
                item.request.prompt,
                item.request.messages,
                item.request.stop,
                item.request.max_tokens,
            )
            for item in items
        ]
        sizes.append(len(rows))
        width = max(map(len, rows))
        return [row + [self.tokenizer.pad_token_id] * (width - len(row)) for row in rows]

    monkeypatch.setattr(HFModel, "_generate_rows", generate_rows)
    return sizes


def run(cli: Callable[..., CliResult], out: Path, mode: str, *model: str) -> Path:
    code, _, err = cli(
        "run",
        "home_search",
        *model,
        "--mode",
        mode,
        "--limit",
        str(LIMIT),
        "--max-tokens",
        str(MAX_TOKENS),
        "--no-cache",
        "--out",
        str(out),
    )
    assert code == 0, err
    return out


def without(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with the given keys removed from every dict inside it."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def record_texts(folder: Path, drop: Sequence[str] = ()) -> list[str]:
    """The run's records as JSON text, by sample id, with ``latency_s``, the log's ``chain``
    (see the module doc) and ``drop`` removed."""
    _, records = read_run(folder)
    assert all(list(record)[-1] == CHAIN_FIELD for record in records)
    records = [{k: v for k, v in record.items() if k != CHAIN_FIELD} for record in records]
    keys = frozenset({"latency_s", *drop})
    records.sort(key=lambda r: (r["task"], int(r["id"]), r["epoch"]))
    return [json.dumps(without(record, keys), ensure_ascii=False) for record in records]


def differences(left: Any, right: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, as ``path: left != right`` lines (for failure messages)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return [
            line
            for key in dict.fromkeys([*left, *right])
            for line in differences(
                left.get(key, "<absent>"), right.get(key, "<absent>"), f"{path}.{key}"
            )
        ]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [
            line
            for i, (a, b) in enumerate(zip(left, right, strict=True))
            for line in differences(a, b, f"{path}[{i}]")
        ]
    return [] if left == right else [f"{path}: {left!r} != {right!r}"[:400]]


def assert_same(left: list[str], right: list[str]) -> None:
    """The two runs' record texts are identical; else the differing fields, named."""
    if left != right:
        lines = differences([json.loads(x) for x in left], [json.loads(x) for x in right])
        pytest.fail("records differ:\n" + "\n".join(lines or ["(key order)"]))


def run_totals(folder: Path) -> dict[str, Any]:
    info, _ = read_run(folder)
    return {key: info[key] for key in ("counts", "metrics", "tokens")}


# ---- the tests ----


def test_recorded_generations_cover_the_cases(recorded: Recorded) -> None:
    """The scripts end the way the module doc says (so the comparisons below test them)."""
    ends: dict[str, list[tuple[str, int]]] = {"completion": [], "chat": []}
    for query, _ in home_search_samples():
        chat = [{"role": "user", "content": f"Task: {query}"}]
        for mode, prompt, messages, stops in (
            ("completion", f"Task: {query}\nAction:\n", None, STOP_SEQUENCES),
            ("chat", None, chat, ()),
        ):
            ids = recorded.generate(prompt, messages, stops, MAX_TOKENS)
            if ids[-1] == recorded.eos:
                ended_by = "eos"
            elif cut_at_stop(recorded.decode(ids), stops)[1]:
                ended_by = "stop"
            else:
                ended_by = "length"
            assert len(ids) < MAX_TOKENS or ended_by == "length"
            ends[mode].append((ended_by, len(ids)))
    assert [end for end, _ in ends["completion"]] == ["stop", "stop", "eos", "length", "eos"]
    assert [end for end, _ in ends["chat"]] == ["eos", "eos", "eos", "length", "eos"]
    assert ends["completion"][2] == ("eos", 1) == ends["chat"][2]


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_same_generations_same_records_on_every_backend(
    mode: str,
    tiny_model: Path,
    recorded: Recorded,
    scripted_hf: list[int],
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    hf = run(cli, tmp_path / "hf", mode, "--model", f"hf:{tiny_model}", "--hf-batch-size", "1")
    assert scripted_hf == [1] * LIMIT
    runs = {}
    for convention in ("openai", "serve"):
        with ScriptedServer(recorded, convention) as server:
            out = tmp_path / convention
            runs[convention] = run(
                cli, out, mode, "--model", "openai:x", "--base-url", server.base_url
            )
        path = "/v1/chat/completions" if mode == "chat" else "/v1/completions"
        assert server.paths == [path] * LIMIT

    hf_records = record_texts(hf)
    # transformers serve's convention: the same reply, the same cut, the same raw_text.
    assert_same(record_texts(runs["serve"]), hf_records)
    # The OpenAI convention: the server already cut; nothing else differs.
    assert_same(
        record_texts(runs["openai"], drop=["raw_text"]), record_texts(hf, drop=["raw_text"])
    )
    openai_calls = [c for r in read_run(runs["openai"])[1] for c in r["calls"]]
    assert all("raw_text" not in call for call in openai_calls)
    assert run_totals(runs["openai"]) == run_totals(hf) == run_totals(runs["serve"])

    # The records say what the recorded generations did (raw_text only where a stop cut).
    calls = {r["id"]: r["calls"][0] for r in read_run(hf)[1]}
    ended = {key: (call["finish_reason"], "raw_text" in call) for key, call in calls.items()}
    if mode == "completion":
        assert ended == {
            "0": ("stop", True),
            "1": ("stop", True),
            "2": ("stop", False),
            "3": ("length", False),
            "4": ("stop", False),
        }
        for key in ("0", "1"):
            raw, text = calls[key]["raw_text"], calls[key]["text"]
            assert raw.startswith(text) and raw[len(text) :].startswith(STOP_SEQUENCES)
    else:
        assert ended == {key: ("length" if key == "3" else "stop", False) for key in calls}
        assert calls["0"]["text"].startswith("Task: ")  # not cut to '' (issue 28, item 3)
        assert "------" in calls["4"]["text"]
    assert calls["2"]["text"] == "" and calls["2"]["completion_tokens"] == 1  # the eos
    assert calls["3"]["completion_tokens"] == MAX_TOKENS


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_batched_hf_rows_give_the_same_records(
    mode: str,
    tiny_model: Path,
    scripted_hf: list[int],
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    """Rows of several lengths padded into one ``generate`` call read the same as one by one;
    only ``batch_size`` (and the latency) says they shared a call."""
    one = run(cli, tmp_path / "one", mode, "--model", f"hf:{tiny_model}", "--hf-batch-size", "1")
    many = run(
        cli,
        tmp_path / "many",
        mode,
        "--model",
        f"hf:{tiny_model}",
        "--hf-batch-size",
        "8",
        "--concurrency",
        "8",
    )
    assert max(scripted_hf) > 1, scripted_hf
    assert_same(record_texts(many, drop=["batch_size"]), record_texts(one))
    _, records = read_run(many)
    assert any(call.get("batch_size", 1) > 1 for r in records for call in r["calls"])
