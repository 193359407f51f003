"""Reference models: models that are not an LLM.

A reference model answers from the gold, from a file or from a fixed policy, never from
weights or a service. Such models set the floors and ceilings a real model is read against
(the oracle must score full marks, the baseline is what a cheap deterministic policy already
gets), and they let a harness check or a scoring run go without a model server.

- ``oracle``: answers every step with its gold (the ceiling; the harness's own check).
- ``replay``: answers from a JSON-lines file of predictions made elsewhere (``replay:FILE``).
- ``baseline``: the non-LLM baseline: the nearest demonstration, its values re-filled from the
  query (the floor between "always wrong" and the oracle).
- ``learner``: what the baseline learns from a prompt's demonstrations and API docs.
- ``entities``: numbers, dates and place names in free text, for the baseline's re-filling.
- ``programs``: demonstration programs read as templates (literals, blocks, rendering).
- ``plans``: the baseline for tasks whose programs are plans of object calls.

The package imports none of them, so building the oracle does not load the baseline; the
model registry (``models/registry.py``) imports each one when its model is asked for.
"""
