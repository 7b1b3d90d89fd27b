"""Fixtures of the adapter tests (their stores come from tests/conftest.py: ``store_url``, ``store_prefix``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest


@pytest.fixture
def sync_run_loop() -> Iterator[None]:
    """Close the event loop a framework's synchronous run left as the thread's current loop.

    Pydantic AI's ``run_sync`` makes a loop, sets it as current and keeps it for the next run."""
    yield
    loop = asyncio.get_event_loop_policy().get_event_loop()
    loop.close()
    asyncio.set_event_loop(None)
