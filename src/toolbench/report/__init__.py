"""Reading run folders back: ``toolbench report`` and ``show``, the HTML page and the exports.

Metrics with bootstrap intervals and paired differences, audits, the sample explorer, plots
and the awareness tables. It reads run folders and never writes one, and it calls no model:
what a record does not keep (query, gold, prompt text) is rebuilt from the task data the run
names, gold programs included.
"""
