"""The reusable task kinds: what a task is built from, with no task of its own in it.

A built-in task (``toolbench.tasks.<name>``) or an installed one picks a kind and supplies its
API, docs, data and simulator: ``single_turn`` (one model call per sample), ``program_task``
(the model writes a program run in a sandboxed world; ``tool_calling`` is its ``--mode tools``,
native tool calls turned into program lines, and the agent world over the same API),
``curl_task`` (the model writes one curl request sent to a simulated HTTP ``service`` through
``http_exec``; ``curl_agent`` is its agent world), ``folder`` (reading a data folder),
``scoring`` (state comparison) and ``pools`` (the seeded generators' value pools and phrasing).
Nothing here holds gold or imports a task, so agents may import it (``agents.contain`` hides
``tasks`` and ``aware`` only); the registry that names tasks is ``toolbench.tasks.registry``.
"""
