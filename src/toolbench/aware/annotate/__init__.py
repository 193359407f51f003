"""The annotation tool: people deciding awareness instances one at a time, together.

One store (``store``: an append-only SQLite event log with work leases, undo events and
exclusive writes), one terminal key loop (``terminal``, reading ``keys``) and one web server
(``web`` on ``webkit`` and ``signin``), parameterised by what is decided. Its two uses are the
review of manipulated instances (``toolbench.aware.review``: accept, or reject with reasons)
and the human baseline (``toolbench.aware.evaluate.human*``: a person's Yes/No answer to the
explicit question).
"""
