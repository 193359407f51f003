"""Message tags shared by the pool (parent) and its workers; see ``_worker.py`` for the protocol.

Kept apart so the parent does not import the worker's code (and RestrictedPython) to speak it.
"""

READY = b"r"  # the worker is set up and waiting for programs
LOADING = b"l"  # importing a factory's module: the parent allows extra time
IMPORTED = b"i"  # import done: the program's wall clock starts now
FAILED = b"E"  # startup failure; the rest of the message says why
