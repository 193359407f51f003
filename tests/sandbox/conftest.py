from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolbench.sandbox import Limits, SandboxPool

# Short limits keep the timeout tests fast; 256 MB is ample for a worker and quick to exhaust.
FAST_LIMITS = Limits(wall_s=0.5, cpu_s=0.5, memory_mb=256)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2, limits=FAST_LIMITS) as sandbox:
        yield sandbox
