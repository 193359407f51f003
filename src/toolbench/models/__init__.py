"""Model backends: the protocol (base), built-in models, OpenAI-compatible servers, local HF
models, and the retry and cache wrappers that ``spec.make_model`` puts around them."""
