"""virtual_home's metrics and how they aggregate, with the original's denominators.

Per sample, ``Outcome.metrics`` holds the value of each metric that is defined for it; a
metric absent from a scored sample is *undefined* there and left out of that metric's mean
(never counted as 0, never a string):

- ``executability_rate`` 1/0: every kept line passed grounding. Denominator: all samples.
- ``lcs_score``: best LCS over labels. Denominator: all samples (non-executable ones keep
  their LCS; only a model error counts 0), as the original.
- ``lcs_score_if_executable``: the LCS of executable samples only; the mean is over those,
  and the metric is missing from the aggregate when no sample is executable (the original
  wrote the string "n/a").
- ``executable_in_world`` 1/0 and ``goal_success`` 1/0 (ours): the plan ran in the symbolic
  household without a precondition failure / every goal predicate held at the end. Undefined
  for a sample whose scene could not run its own gold (only possible for scenes derived from
  an original-layout folder); the mean is over samples where they are defined.

A model error (the model raised, the reply could not be used) counts 0 in every metric but
``lcs_score_if_executable``, which it does not enter. Infra errors are excluded everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from toolbench.types import Outcome, Status

ORIGINAL_METRICS = ("executability_rate", "lcs_score", "lcs_score_if_executable")
WORLD_METRICS = ("executable_in_world", "goal_success")
METRICS = ORIGINAL_METRICS + WORLD_METRICS
# Metrics a model error does not enter (its denominator is the executable samples).
_CONDITIONAL = frozenset({"lcs_score_if_executable"})


def aggregate(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Mean of each metric over the samples where it is defined (see the module doc)."""
    result: dict[str, float] = {}
    for name in METRICS:
        values: list[float] = []
        for outcome in outcomes:
            if outcome.status is Status.INFRA_ERROR:
                continue
            if name in outcome.metrics:
                values.append(float(outcome.metrics[name]))
            elif outcome.status is Status.MODEL_ERROR and name not in _CONDITIONAL:
                values.append(0.0)
        if values:
            result[name] = math.fsum(values) / len(values)
    return result


def model_error_metrics() -> dict[str, float]:
    """What a sample whose reply could not be scored records: 0 wherever 0 is meaningful."""
    return {name: 0.0 for name in METRICS if name not in _CONDITIONAL}
