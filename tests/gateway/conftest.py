"""A fake upstream for the whole module and a gateway in front of it per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.gateway.fake import FakeUpstream, Script
from trialbook.gateway import Gateway

REAL_KEY = "sk-real-" + "K" * 40
"""The key the harness holds: it must reach the upstream and nothing else."""


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(Script()).start()
    yield fake
    fake.stop()


@pytest.fixture
def make_gateway(upstream: FakeUpstream) -> Iterator[Callable[..., Gateway]]:
    started: list[Gateway] = []

    def make(**options: Any) -> Gateway:
        gateway = Gateway(upstream.openai_base, upstream.url, REAL_KEY, **options).start()
        started.append(gateway)
        return gateway

    yield make
    for gateway in started:
        gateway.stop()
