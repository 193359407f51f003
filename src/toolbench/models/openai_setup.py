"""The ``openai:`` backend's own options, kept apart from the backend so that the registry
can show and check them without importing the OpenAI SDK.

What every server backend reads (the endpoints, the key, the timeout, the retries) stays in
``ModelOptions``: plugins read it too. What only this backend reads is here.
"""

from __future__ import annotations

from toolbench.models.args import BackendArgs, operational

#: A chat reply is a few KB, so 16 MiB is room for any real one and little memory for a
#: hostile one.
MAX_RESPONSE_BYTES = 16 << 20


class OpenAIArgs(BackendArgs):
    """``--model-arg KEY=VALUE`` for ``openai:`` (``--max-response-bytes`` is an alias)."""

    max_response_bytes: int = operational(
        MAX_RESPONSE_BYTES,
        "bytes of one server reply read at most, after decompression; a longer reply is "
        "that sample's infra error",
        gt=0,
    )
