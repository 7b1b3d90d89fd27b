"""The Redis store's connections at the edges: after ``close``, under cancelled async checks,
and with the default executor busy (found by a concurrency audit; each test failed on the code
before its fix)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from concurrent.futures import ThreadPoolExecutor

from loopfuse import Guard
from tests.store_fixtures import RedisServer, unique_prefix


def redis_guard(url: str, **store: object) -> Guard:
    section = {"url": url, "prefix": unique_prefix(), **store}
    return Guard.from_config({"guard": {"abort_after_denials": 0}, "cap": {"limit": 10**6}, "store": section})


def test_a_check_after_close_fails_open_at_once(redis_server: RedisServer) -> None:
    guard = redis_guard(redis_server.url, max_connections=1)
    assert guard.check("read", {"path": "a"}, "a").allowed
    guard.close()
    started = time.monotonic()
    assert guard.check("read", {"path": "b"}, "a").allowed  # the store is gone: fail open
    assert time.monotonic() - started < 0.5  # not the 1 s pool wait for a connection
    assert guard.stats()["fail_open"] == {"store": 1}


async def test_cancelled_async_checks_never_open_more_than_max_connections(redis_server: RedisServer) -> None:
    guard = redis_guard(redis_server.url, max_connections=5)

    async def agent(n: int) -> None:
        for call in range(30):
            check = guard.acheck("read", {"page": call}, f"agent-{n}")
            with contextlib.suppress(TimeoutError):  # some cancelled mid-way
                await asyncio.wait_for(check, random.choice([1e-4, 5e-4, 2e-3]) if call % 3 == 0 else None)

    await asyncio.gather(*(agent(n) for n in range(100)))
    pool = guard._store._async[asyncio.get_running_loop()]._pool  # type: ignore[attr-defined]
    assert pool._count <= 5
    await guard.aclose()


async def test_async_checks_waiting_for_an_agents_results_need_no_executor_thread(
    redis_server: RedisServer,
) -> None:
    guard = redis_guard(redis_server.url, max_connections=30)
    await asyncio.gather(*(guard.acheck("read", {"warm": n}, "a") for n in range(30)))  # connections open
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    busy = loop.run_in_executor(None, time.sleep, 3)  # the only executor thread, taken

    async def tool_call(n: int) -> None:
        if (await guard.acheck("read", {"page": n}, "a")).allowed:
            await guard.arecord_result("read", {"page": n}, f"page {n}", "a")

    started = time.monotonic()
    for _ in range(5):
        await asyncio.gather(*(tool_call(n) for n in range(20)))  # one agent: round trips wait on each other
    assert time.monotonic() - started < 2.5
    await busy
    await guard.aclose()
