"""The default aggregate of a task's outcomes: each metric's mean over the samples that count.

A task's ``aggregate`` usually is this (``TaskBase`` makes it the default); a task with a
metric that is not a per-sample mean (virtual_home's LCS over executable plans) writes its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from toolbench.types import Outcome, Status


def mean_metrics(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, float]:
    """Average each metric over outcomes that count (scored and model errors, not infra errors).

    A model error counts as a failure with every metric 0 except ``crash_rate``.
    """
    counted = [o for o in outcomes if o.status is not Status.INFRA_ERROR]
    if not counted:
        return {}
    result: dict[str, float] = {}
    for name in names:
        if name == "success_rate":
            values = [1.0 if o.success else 0.0 for o in counted]
        elif name == "crash_rate":
            values = [1.0 if o.status is Status.MODEL_ERROR else 0.0 for o in counted]
        else:
            values = [float(o.metrics.get(name, 0.0)) for o in counted]
        # fsum is exactly rounded, so the result does not depend on completion order.
        result[name] = math.fsum(values) / len(values)
    return result
