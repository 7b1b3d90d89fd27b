"""The Redis store's asyncio path on uvloop, the event loop uvicorn and many async hosts run.
The store writes a script's command to the loop's transport itself (``redis_reply.asend``), so
it is run here on uvloop's own transports as on asyncio's."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any

import pytest

from loopfuse import Guard
from tests.store_fixtures import RedisServer, unique_prefix
from tests.stores.test_areply import IN_STEP, checks_after_one_cancelled

try:
    import uvloop
except ImportError:  # not on Windows; the dev extra brings it elsewhere
    if os.environ.get("CI"):
        raise
    pytest.skip("uvloop is not installed", allow_module_level=True)

SEARCH = ("search", {"q": "the same"})


def on_uvloop(main: Coroutine[Any, Any, Any]) -> Any:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert "uvloop" in type(runner.get_loop()).__module__
        return runner.run(main)


def guard_on(server: RedisServer) -> Guard:
    return Guard.from_config({"store": {"url": server.url, "prefix": unique_prefix(), "timeout": 5}})


async def first_denied(guard: Guard) -> tuple[int, str | None]:
    """The index and kind of the first denied call of a loop of one search, each result reported."""
    for i in range(12):
        decision = await guard.acheck(*SEARCH, "a")
        if not decision.allowed:
            return i, decision.kind
        await guard.arecord_result(*SEARCH, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


def test_an_async_guard_on_uvloop_decides_as_in_process(redis_server: RedisServer) -> None:
    expected = asyncio.run(first_denied(Guard()))
    guard = guard_on(redis_server)

    async def loop() -> tuple[int, str | None]:
        denied = await first_denied(guard)
        await guard.aclose()
        return denied

    assert on_uvloop(loop()) == expected
    assert guard.stats()["fail_open"] == {}


def test_an_acheck_cancelled_in_flight_on_uvloop_leaves_the_store_in_step(own_redis: RedisServer) -> None:
    guard = guard_on(own_redis)

    async def cancelled_then_more() -> list[bool]:
        seen = await checks_after_one_cancelled(guard, own_redis)
        await guard.aclose()
        return seen

    assert on_uvloop(cancelled_then_more()) == IN_STEP
    assert guard.stats()["fail_open"] == {}
