"""Model backends: the protocol (base), OpenAI-compatible servers, local HF models, and the
retry and cache wrappers that ``spec.make_model`` puts around them. The models that are not an
LLM (oracle, replay, baseline) live in ``reference``."""
