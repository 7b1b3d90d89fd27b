"""``Guard.arecord_result``: the same verdicts as ``record_result`` on every store, never
raising, and on Redis never blocking the event loop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from loopfuse import Guard
from loopfuse._calls import CallKey
from loopfuse.breakers.build import build_breakers
from loopfuse.config import GuardConfig
from loopfuse.stores import MemoryStore
from loopfuse.stores.base import Outcome
from loopfuse.stores.redis import RedisStore
from tests.store_fixtures import GuardFactory, LoopTicks, RedisServer, unique_prefix


async def arun(guard: Guard, tool: str, args: Any, result: Any, agent: str = "a") -> bool:
    """Check the call and, if allowed, report ``result``; whether it was allowed."""
    allowed = (await guard.acheck(tool, args, agent)).allowed
    if allowed:
        await guard.arecord_result(tool, args, result, agent, ok=True)
    return allowed


async def test_paging_with_new_output_passes_the_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard()  # defaults: duplicate_limit 6, progress_limit 8
    pages = [await arun(guard, "scroll_down", {}, f"lines {100 * i}-{100 * i + 99}") for i in range(8)]
    assert pages == [True] * 8
    denied = await guard.acheck("scroll_down", {}, "a")
    assert (denied.allowed, denied.kind, denied.count) == (False, "duplicate", 8)
    await guard.aclose()


async def test_same_result_in_a_row_is_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()  # same_result_limit 5
    assert [await arun(guard, "goto", {"line": 72}, "the same screen") for _ in range(5)] == [True] * 5
    assert (await guard.acheck("goto", {"line": 72}, "a")).kind == "duplicate"
    await guard.aclose()


async def test_errors_reported_async_trip_same_error(make_guard: GuardFactory) -> None:
    guard = make_guard({"same_error": {"limit": 2}})
    for i in range(2):
        assert (await guard.acheck("fetch", {"u": i}, "a")).allowed
        await guard.arecord_result("fetch", {"u": i}, agent="a", error=TimeoutError("timed out"))
    assert (await guard.acheck("fetch", {"u": 9}, "a")).kind == "same_error"
    await guard.aclose()


async def test_an_unreadable_result_is_ignored(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert (await guard.acheck("read", {"p": 1}, "a")).allowed
    await guard.arecord_result("read", {"p": 1}, object(), "a")
    assert guard.stats()["fail_open"] == {"result": 1}
    await guard.aclose()


async def test_a_stopped_redis_never_reaches_the_host(own_redis: RedisServer) -> None:
    guard = Guard.from_config({"store": {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.2}})
    assert await arun(guard, "read", {"p": 1}, "content")
    own_redis.stop()
    for _ in range(3):
        await guard.arecord_result("read", {"p": 1}, "content", "a")
    await guard.aflush()
    assert guard.stats()["fail_open"]["store"] == 4  # with the first result, held back too
    await guard.aclose()


async def test_a_paused_redis_does_not_block_the_event_loop(own_redis: RedisServer) -> None:
    guard = Guard.from_config({"store": {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.3}})
    assert await arun(guard, "read", {"p": 1}, "content")
    assert (await guard.acheck("read", {"p": 2}, "a")).allowed
    own_redis.pause()
    ticks = LoopTicks()
    await asyncio.sleep(0)
    started = time.monotonic()
    await guard.arecord_result("read", {"p": 2}, "other", "a")
    assert time.monotonic() - started < 0.1  # held back: no round trip (0.3 s here) of its own
    await guard.aflush()  # the round trip times out after 0.3 s
    ticks_while_reporting = ticks.stop()
    own_redis.resume()
    assert ticks_while_reporting >= 5  # a blocking round trip would freeze the loop for 0.3 s
    assert guard.stats()["fail_open"] == {"store": 1}  # the first went with the second check
    await guard.aclose()


async def test_a_sync_client_only_reports_from_a_thread(redis_server: RedisServer) -> None:
    store = RedisStore.from_client(redis_server.client(), prefix=unique_prefix())
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 2}}, store=store)
    assert [await arun(guard, "read", {"p": 1}, f"page {i}") for i in range(4)] == [True] * 4
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()


class OlderStore:
    """A host's store written before the protocol had record_result, arecord_result, aclose,
    aforget."""

    def __init__(self) -> None:
        self._inner = MemoryStore(
            build_breakers(GuardConfig()), window=200, max_agents=10, idle_seconds=60.0, abort_after=None
        )
        self.closed = False
        self.url = "older://"

    def decide(self, agent: Any, call: CallKey) -> Outcome | None:
        return self._inner.decide(agent, call)

    async def adecide(self, agent: Any, call: CallKey) -> Outcome | None:
        return self.decide(agent, call)

    def forget(self, agent: Any) -> None:
        self._inner.forget(agent)

    def agent_count(self) -> int:
        return self._inner.agent_count()

    def close(self) -> None:
        self.closed = True


async def test_a_store_without_the_result_methods_still_works() -> None:
    store = OlderStore()
    guard = Guard(store=store)
    assert [await arun(guard, "read", {"p": 1}, f"page {i}") for i in range(7)] == [True] * 6 + [False]
    guard.record_result("read", {"p": 2}, "x", "a")
    await guard.aclose()
    assert store.closed


async def test_aforget_asks_a_store_without_it_to_forget() -> None:
    guard = Guard(store=OlderStore())
    assert [await arun(guard, "read", {"p": 1}, f"page {i}") for i in range(7)] == [True] * 6 + [False]
    await guard.aforget("a")
    assert await arun(guard, "read", {"p": 1}, "page 7")
    await guard.aclose()
