"""A model served over the OpenAI HTTP API: OpenAI itself or any compatible server.

vLLM, SGLang, TGI, Ollama and llama.cpp all speak this API, so one backend covers them through
``base_url``. The SDK's own retries are switched off: ``RetryingModel`` owns retrying so that
every backend gets the same policy, the same attempt accounting and the same ``InfraError``.
"""

from __future__ import annotations

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


class OpenAIModel:
    """Chat or completion requests against one model name on one endpoint."""

    cacheable = True

    def __init__(self, model: str, options: ModelOptions) -> None:
        if not model:
            raise UserError("openai model needs a name, e.g. 'openai:gpt-4o-mini'")
        self.model = model
        self.name = f"openai:{model}"
        # Part of the cache key: the same model name on two servers may be two different models.
        self.base_url = options.base_url
        self._client = AsyncOpenAI(
            api_key=resolve_api_key(options),
            base_url=options.base_url,
            timeout=options.timeout_s,
            max_retries=0,
        )

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
        args = self._common_args(request)
        if request.messages is not None:
            return await self._chat(request, args, start)
        if request.prompt is not None:
            return await self._complete(request, args, start)
        raise ValueError("GenerationRequest needs either 'prompt' or 'messages'")

    async def _chat(
        self, request: GenerationRequest, args: dict[str, Any], start: float
    ) -> Generation:
        messages = [dict(m) for m in request.messages or ()]
        response = await self._client.chat.completions.create(messages=messages, **args)  # type: ignore[arg-type]
        if not response.choices:
            raise InfraError(f"{self.name}: server returned no choices")
        choice = response.choices[0]
        tool_calls = [call.model_dump() for call in choice.message.tool_calls or ()]
        return Generation(
            text=choice.message.content or "",
            prompt_tokens=response.usage.prompt_tokens if response.usage else 0,
            completion_tokens=response.usage.completion_tokens if response.usage else 0,
            latency_s=time.perf_counter() - start,
            finish_reason=choice.finish_reason,
            tool_calls=tool_calls,
        )

    async def _complete(
        self, request: GenerationRequest, args: dict[str, Any], start: float
    ) -> Generation:
        response = await self._client.completions.create(prompt=request.prompt, **args)
        if not response.choices:
            raise InfraError(f"{self.name}: server returned no choices")
        choice = response.choices[0]
        return Generation(
            text=choice.text or "",
            prompt_tokens=response.usage.prompt_tokens if response.usage else 0,
            completion_tokens=response.usage.completion_tokens if response.usage else 0,
            latency_s=time.perf_counter() - start,
            finish_reason=choice.finish_reason,
        )

    async def aclose(self) -> None:
        await self._client.close()
