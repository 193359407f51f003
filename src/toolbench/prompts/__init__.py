"""Text to and from a model: the ToolBench prompt, and the program taken out of a reply.

The builder assembles API docs and demonstrations retrieved for a query (completion or chat
shape); extraction reads the action out of a reply. Text only: retrieval itself is
``toolbench.retrieval``, nothing here calls a model (``toolbench.models``), and nothing here
runs what a model wrote (``toolbench.sandbox``).
"""
