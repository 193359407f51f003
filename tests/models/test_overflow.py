"""overflow_from_error: servers' context-length errors, recognised with their numbers; other
errors and arbitrary text are not overflows, and nothing makes it raise."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.overflow_server import vllm_refusal
from toolbench.models.overflow import MAX_BODY_CHARS, overflow_from_error


def _error(message: str, **extra: object) -> str:
    return json.dumps({"error": {"message": message, **extra}})


# (status, body, prompt_tokens, max_tokens, context_length): bodies as the servers send them.
RECORDED = [
    pytest.param(
        400, json.dumps(vllm_refusal("old", 2048, 2605, 256)), 2605, 256, 2048, id="vllm-0.9"
    ),
    pytest.param(
        400,
        json.dumps(
            {
                "object": "error",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
                "message": "This model's maximum context length is 4096 tokens. However, you "
                "requested 5000 tokens in the messages, Please reduce the length of the messages.",
            }
        ),
        5000,
        None,
        4096,
        id="vllm-0.9-no-max-tokens",
    ),
    pytest.param(
        400, json.dumps(vllm_refusal("v10", 4096, 2778, 8000)), 2778, 8000, 4096, id="vllm-0.10"
    ),
    pytest.param(
        400,
        _error(
            "This model's maximum context length is 1536 tokens. However, your request has "
            "4176 input tokens. Please reduce the length of the input messages.",
            type="BadRequestError",
            param=None,
            code=400,
        ),
        4176,
        None,
        1536,
        id="vllm-0.10-prompt-alone",
    ),
    pytest.param(
        400, json.dumps(vllm_refusal("v18", 2048, 3139, 512)), 3139, 512, 2048, id="vllm-0.18"
    ),
    pytest.param(
        400,
        _error(
            "This model's maximum context length is 262144 tokens. However, you requested 0 "
            "output tokens and your prompt contains at least 262145 input tokens, for a total "
            "of at least 262145 tokens. Please reduce the length of the input prompt or the "
            "number of requested output tokens. (parameter=input_tokens, value=262145)",
            type="BadRequestError",
            param="input_tokens",
            code=400,
        ),
        262145,
        0,
        262144,
        id="vllm-0.18-at-least",
    ),
    pytest.param(
        400,
        _error(
            "max_tokens=9000 cannot be greater than max_model_len=max_total_tokens=8192. "
            "Please request fewer output tokens. (parameter=max_tokens, value=9000)"
        ),
        None,
        9000,
        8192,
        id="vllm-0.18-max-tokens-alone",
    ),
    pytest.param(
        400,
        _error(
            "You passed 3000 input tokens and requested 256 output tokens. However, the "
            "model's context length is only 2048 tokens, resulting in a maximum input length "
            "of 1792 tokens. Please reduce the length of the input prompt."
        ),
        3000,
        256,
        2048,
        id="vllm-renderer",
    ),
    pytest.param(
        400,
        _error(
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens. Please reduce the length of the messages.",
            type="invalid_request_error",
            param="messages",
            code="context_length_exceeded",
        ),
        9000,
        None,
        8192,
        id="openai",
    ),
    pytest.param(
        400,
        _error(
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again.",
            type="invalid_request_error",
            param="input",
            code="context_length_exceeded",
        ),
        None,
        None,
        None,
        id="openai-new",
    ),
    pytest.param(
        400,
        json.dumps(
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 13392,
                    "n_ctx": 8192,
                    "message": "request (13392 tokens) exceeds the available "
                    "context size (8192 tokens), try increasing it",
                }
            }
        ),
        13392,
        None,
        8192,
        id="llama.cpp",
    ),
    pytest.param(
        400,
        json.dumps(
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 5000,
                    "n_ctx": 4096,
                    "message": "the request exceeds the available context size, try increasing it",
                }
            }
        ),
        5000,
        None,
        4096,
        id="llama.cpp-old",
    ),
    pytest.param(
        422,
        json.dumps(
            {
                "error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
                "4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`",
                "error_type": "validation",
            }
        ),
        4000,
        200,
        4096,
        id="tgi",
    ),
    pytest.param(
        422,
        json.dumps(
            {
                "error": "Input validation error: `inputs` must have less than 4095 tokens. "
                "Given: 5000",
                "error_type": "validation",
            }
        ),
        5000,
        None,
        None,
        id="tgi-input-length",
    ),
    pytest.param(
        400,
        json.dumps(
            {
                "object": "error",
                "type": "BadRequest",
                "param": None,
                "code": 400,
                "message": "Requested token count exceeds the model's maximum context length of "
                "64000 tokens. You requested a total of 71897 tokens: 7897 tokens from the input "
                "messages and 64000 tokens for the completion. Please reduce the number of tokens "
                "in the input messages or the completion to fit within the limit.",
            }
        ),
        7897,
        64000,
        64000,
        id="sglang",
    ),
    pytest.param(
        400,
        json.dumps(
            {
                "object": "error",
                "type": "BadRequest",
                "param": None,
                "code": 400,
                "message": "The input (10009 tokens) is longer than the model's context length "
                "(128 tokens).",
            }
        ),
        10009,
        None,
        128,
        id="sglang-input",
    ),
    pytest.param(
        413,
        "This model's maximum context length is 8192 tokens. However, you requested 9224 "
        "tokens (1224 in the messages, 8000 in the completion). Please reduce the length of "
        "the messages or completion.",
        1224,
        8000,
        8192,
        id="plain-text-413",
    ),
]


@pytest.mark.parametrize(("status", "body", "prompt", "asked", "context"), RECORDED)
def test_recorded_messages_are_overflows_with_their_numbers(
    status: int, body: str, prompt: int | None, asked: int | None, context: int | None
) -> None:
    overflow = overflow_from_error(status, body)
    assert overflow is not None
    assert (overflow.prompt_tokens, overflow.max_tokens, overflow.context_length) == (
        prompt,
        asked,
        context,
    )
    if context is not None:
        assert f"context window of {context} tokens" in str(overflow)
    if prompt is not None:
        assert f"prompt {prompt} tokens" in str(overflow)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, _error("Invalid value for 'temperature': must be <= 2", code=None)),
        (400, _error("The model `gpt-5` does not exist.", type="NotFoundError")),
        (422, json.dumps({"error": "`max_new_tokens` must be strictly positive"})),
        (401, _error("Incorrect API key provided", code="invalid_api_key")),
        # The right words under a status a server never uses for them: not an overflow.
        (500, json.dumps(vllm_refusal("v18", 2048, 3000, 10))),
        (429, _error("Rate limit reached", code="rate_limit_exceeded")),
        (400, ""),
        (400, "<html><body>Bad Request</body></html>"),
    ],
)
def test_other_errors_are_not_overflows(status: int, body: str) -> None:
    assert overflow_from_error(status, body) is None


def test_a_message_past_the_read_limit_is_not_read() -> None:
    padding = json.dumps({"error": {"detail": "x" * (MAX_BODY_CHARS + 10)}})
    body = padding + json.dumps(vllm_refusal("v18", 2048, 3000, 10))
    assert overflow_from_error(400, body) is None


def test_huge_numbers_and_huge_bodies_stay_bounded() -> None:
    digits = "9" * 5000
    body = f"This model's maximum context length is {digits} tokens. " * 200
    overflow = overflow_from_error(400, body)
    # A 5000-digit "number" is not read as one: the phrase alone makes it an overflow.
    assert overflow is not None and overflow.context_length is None


@given(st.integers(), st.text(max_size=3000))
def test_arbitrary_text_never_raises(status: int, body: str) -> None:
    overflow = overflow_from_error(status, body)
    assert overflow is None or isinstance(str(overflow), str)


@given(
    st.sampled_from(["v18", "v10", "old"]),
    st.integers(1, 10**9),
    st.integers(0, 10**9),
    st.integers(0, 10**6),
)
def test_every_vllm_refusal_gives_back_its_numbers(
    style: str, context: int, prompt: int, asked: int
) -> None:
    body = json.dumps(vllm_refusal(style, context, prompt, asked))
    overflow = overflow_from_error(400, body)
    assert overflow is not None
    assert (overflow.prompt_tokens, overflow.max_tokens, overflow.context_length) == (
        prompt,
        asked,
        context,
    )


@given(st.text(alphabet=st.sampled_from("0123456789 .()'`=:,maxtokensinputcontext"), max_size=4000))
def test_near_miss_texts_never_raise(body: str) -> None:
    overflow_from_error(400, body)
