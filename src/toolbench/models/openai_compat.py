"""A model served over the OpenAI HTTP API: OpenAI itself or any compatible server.

vLLM, SGLang, TGI, Ollama and llama.cpp all speak this API, so one backend covers them through
``base_url``. The SDK's own retries are switched off: ``RetryingModel`` owns retrying so that
every backend gets the same policy, the same attempt accounting and the same ``InfraError``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from openai import AsyncOpenAI

from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.types import Generation, GenerationRequest, InfraError

#: The completions and chat APIs reject more than four stop sequences.
MAX_STOP_SEQUENCES = 4


def resolve_api_key(options: ModelOptions) -> str:
    """The key to send: explicit option, then the environment, then a dummy for local servers.

    Local OpenAI-compatible servers ignore the key but the SDK insists on one, so a base URL
    without a key gets ``"EMPTY"`` (the vLLM convention) instead of an error.
    """
    key = options.api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if options.base_url:
        return "EMPTY"
    raise UserError("set OPENAI_API_KEY or pass --api-key")


def _http_client() -> Any:
    """The SDK's aiohttp transport when installed, else its default (httpx).

    At --concurrency 32, httpx's connection pool costs ~4-5 ms of CPU per request on this
    class of machine, which alone caps a 2-core run well below the server's capacity; the
    aiohttp transport is several times cheaper.
    """
    try:
        from openai import DefaultAioHttpClient

        return DefaultAioHttpClient()
    except (ImportError, RuntimeError):
        return None


def _plain_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """One tool call as ``{"id", "type", "function": {"name", "arguments"}}``, plain JSON data.

    ``arguments`` stays the JSON string the API sends (it may be invalid JSON: judging it is
    the scorer's job). A few compatible servers send an object instead; it is serialised so
    that ``arguments`` is always a string.
    """
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(call.get("id") or ""),
        "type": str(call.get("type") or "function"),
        "function": {"name": str(function.get("name") or ""), "arguments": arguments},
    }


class OpenAIModel:
    """Chat or completion requests against one model name on one endpoint."""

    cacheable = True

    def __init__(self, model: str, options: ModelOptions) -> None:
        if not model:
            raise UserError("openai model needs a name, e.g. 'openai:gpt-4o-mini'")
        self.model = model
        self.name = f"openai:{model}"
        self._client = AsyncOpenAI(
            api_key=resolve_api_key(options),
            base_url=options.base_url,
            timeout=options.timeout_s,
            max_retries=0,
            http_client=_http_client(),
        )
        # Part of the cache key: the same model name on two servers may be two different models.
        # Taken from the client so that OPENAI_BASE_URL and the default endpoint count too.
        self.base_url: str | None = str(self._client.base_url).rstrip("/")

    def _common_args(self, request: GenerationRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            args["stop"] = list(request.stop[:MAX_STOP_SEQUENCES])
        if request.seed is not None:
            args["seed"] = request.seed
        return args

    async def generate(self, request: GenerationRequest) -> Generation:
        start = time.perf_counter()
        body = self._common_args(request)
        if request.messages is not None:
            path, body["messages"] = "/chat/completions", [dict(m) for m in request.messages]
            if request.tools:  # the API rejects an empty list: no tools means no field
                body["tools"], body["tool_choice"] = request.plain_tools(), "auto"
        elif request.tools is not None:
            raise ValueError("native tools need a chat request ('messages'), not a 'prompt'")
        elif request.prompt is not None:
            path, body["prompt"] = "/completions", request.prompt
        else:
            raise ValueError("GenerationRequest needs either 'prompt' or 'messages'")
        # The SDK's generic ``post`` rather than the typed ``create()``: same auth, URL,
        # timeout and error mapping (openai.APIStatusError etc.), but it skips the recursive
        # TypedDict transform of the parameters and the pydantic construction of the response,
        # which cost ~1 ms of CPU per request, the largest client overhead at high concurrency.
        data = await self._client.post(path, body=body, cast_to=object)
        return self._parse(data, time.perf_counter() - start)

    def _parse(self, data: object, latency_s: float) -> Generation:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not choices or not isinstance(choices[0], dict):
            shown = " ".join(str(data).split())[:200]
            raise InfraError(f"{self.name}: server returned no choices: {shown}")
        choice: dict[str, Any] = choices[0]
        message = choice.get("message")
        if isinstance(message, dict):  # chat
            text = message.get("content") or ""  # null when the model only calls tools
            calls = message.get("tool_calls") or []
            tool_calls = [_plain_tool_call(call) for call in calls if isinstance(call, dict)]
        else:  # completion
            text = choice.get("text") or ""
            tool_calls = []
        usage = data.get("usage") or {}
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency_s,
            finish_reason=choice.get("finish_reason"),
            tool_calls=tool_calls,
        )

    async def aclose(self) -> None:
        await self._client.close()
