"""Fixtures for the model backends: a live fake OpenAI server and a sleep that does not sleep."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeserver import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


class FakeSleep:
    """Records the delays a RetryingModel asks for, so retry tests take no wall time."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
def fake_sleep() -> FakeSleep:
    return FakeSleep()
