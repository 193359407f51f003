"""Making incomplete twins of complete awareness instances, one module per manipulation.

API replacement (with its pre-verification checks and optional judge model), utterance removal
by a rewriting model (with its automatic rejections), and slot and tool removal for our own
tasks. Only the making of twins: loading sources is ``toolbench.aware.sources``, reviewing them
``toolbench.aware.review``, and the record itself ``toolbench.aware.schema``.
"""
