"""The Redis store runs its scripts as one Function library (``FCALL``), loads it again when the
server lost it, and falls back to ``EVALSHA`` on a server that takes no functions, deciding the
same every way. Each test runs a real redis-server of its own (``INFO commandstats`` tells
which commands the clients sent)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Decision, Guard
from tests.store_fixtures import RedisServer, unique_prefix

SEARCH = ("search", {"q": "the same"})


def guard_on(server: RedisServer, **store: Any) -> Guard:
    return Guard.from_config({"store": {"url": server.url, "prefix": unique_prefix(), **store}})


def first_denied(guard: Guard, between: Any = None, calls: int = 12) -> int:
    """The index of the first denied call of a loop of one search, each result reported
    (``between(i)`` runs before call i)."""
    for i in range(calls):
        if between is not None:
            between(i)
        decision = guard.check(*SEARCH, "a")
        if not decision.allowed:
            return i
        guard.record_result(*SEARCH, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


def libraries(server: RedisServer) -> list[str]:
    entries = [dict(zip(entry[::2], entry[1::2], strict=True)) for entry in server.client().function_list()]
    return [entry[b"library_name"].decode() for entry in entries]


def require_functions(server: RedisServer) -> None:
    """Skip on a redis-server before 7.0 (no functions: the rest of the suite runs the fallback)."""
    version = str(server.client().info("server")["redis_version"])
    if int(version.split(".")[0]) < 7:
        pytest.skip(f"redis-server {version} has no functions")


@pytest.fixture
def expected(own_redis: RedisServer) -> int:
    """Where the loop is denied on ``memory://``."""
    require_functions(own_redis)
    return first_denied(Guard.from_config({}))


def test_the_scripts_run_as_one_library(own_redis: RedisServer, expected: int) -> None:
    guard = guard_on(own_redis)
    assert first_denied(guard) == expected
    guard.close()
    [name] = libraries(own_redis)
    assert name.startswith("loopfuse_")
    assert own_redis.sent("fcall") >= expected and own_redis.sent("evalsha") == 0
    assert guard.stats()["fail_open"] == {}


def test_guards_of_other_settings_load_libraries_of_their_own(own_redis: RedisServer) -> None:
    require_functions(own_redis)
    other = {"cap": {"limit": 9}, "store": {"url": own_redis.url, "prefix": unique_prefix()}}
    guards = [guard_on(own_redis), guard_on(own_redis), Guard.from_config(other)]
    for guard in guards:
        assert guard.check(*SEARCH, "a").allowed
        guard.close()
    assert len(libraries(own_redis)) == 2


def test_redis_functions_false_leaves_no_library(own_redis: RedisServer, expected: int) -> None:
    guard = guard_on(own_redis, redis_functions=False)
    assert first_denied(guard) == expected
    guard.close()
    assert libraries(own_redis) == []
    assert own_redis.sent("fcall") == 0 and own_redis.sent("evalsha") >= expected


def test_a_lost_library_is_loaded_again(own_redis: RedisServer, expected: int) -> None:
    guard = guard_on(own_redis)

    def flush_functions(i: int) -> None:
        if i in (2, 4):
            own_redis.client().function_flush()

    assert first_denied(guard, flush_functions) == expected
    guard.close()
    assert guard.stats()["fail_open"] == {}
    assert own_redis.sent("evalsha") == 0
    assert len(libraries(own_redis)) == 1  # loaded again after each flush


REFUSING = {
    "no FUNCTION (an ACL)": ((), "-function"),
    "no FCALL (an ACL)": ((), "-fcall"),
    "no FCALL command (as before Redis 7.0)": (("--rename-command", "FCALL", '""'), ""),
}


class Refusing:
    """A server that takes no functions from the guard's user (``url``)."""

    def __init__(self, server: RedisServer, acl: str) -> None:
        self.server, self.url = server, server.url
        if acl:
            commands = ["+@all", acl]
            server.client().acl_setuser(
                "guard", enabled=True, passwords=["+pw"], keys=["*"], commands=commands
            )
            self.url = f"redis://guard:pw@127.0.0.1:{server.port}/0"

    def guard(self) -> Guard:
        """A guard whose round trips wait as long as a busy machine takes (50 at once, on a CI
        runner, passed the 0.25 s default and failed open): these tests are about the fallback."""
        store = {"url": self.url, "prefix": unique_prefix(), "timeout": 10.0, "pool_timeout": 10.0}
        return Guard.from_config({"store": store})


@pytest.fixture(params=list(REFUSING))
def refusing(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    extra, acl = REFUSING[request.param]
    server = RedisServer(tmp_path, extra)
    server.start()
    try:
        require_functions(server)
        yield Refusing(server, acl)
    finally:
        server.stop()


def test_a_server_that_refuses_functions_gets_scripts(refusing: Refusing) -> None:
    expected = first_denied(Guard.from_config({}))
    guard = refusing.guard()
    assert first_denied(guard) == expected
    guard.close()
    assert guard.stats()["fail_open"] == {}
    assert refusing.server.sent("evalsha") >= expected
    assert libraries(refusing.server) == []


def test_an_async_guard_loads_and_falls_back_alike(refusing: Refusing) -> None:
    expected = first_denied(Guard.from_config({}))

    async def loop() -> int:
        guard = refusing.guard()
        for i in range(12):
            if not (await guard.acheck(*SEARCH, "a")).allowed:
                await guard.aclose()
                assert guard.stats()["fail_open"] == {}
                return i
            await guard.arecord_result(*SEARCH, "no results", "a", ok=True)
        raise AssertionError("the loop was never denied")

    assert asyncio.run(loop()) == expected
    assert refusing.server.sent("evalsha") >= expected


def test_concurrent_first_checks_fall_back_alike(refusing: Refusing) -> None:
    """Round trips sent as FCALL before the first refusal came back are each sent again as
    EVALSHA (not failed open because another one switched the script meanwhile)."""
    in_process = Guard.from_config({})
    allowed = sum(in_process.check(*SEARCH, "a").allowed for _ in range(CONCURRENT))

    async def gathered(guard: Guard) -> list[Decision]:
        decisions = await asyncio.gather(*(guard.acheck(*SEARCH, "a") for _ in range(CONCURRENT)))
        await guard.aclose()
        return decisions

    for guard, decisions in (
        (async_guard := refusing.guard(), asyncio.run(gathered(async_guard))),
        (threads_guard := refusing.guard(), in_threads(threads_guard)),
    ):
        assert sum(d.allowed for d in decisions) == allowed
        assert guard.stats()["fail_open"] == {}
    assert libraries(refusing.server) == []


CONCURRENT = 50


def in_threads(guard: Guard) -> list[Decision]:
    """``CONCURRENT`` checks of one search, each from a thread of its own, started together."""
    start = threading.Barrier(CONCURRENT)

    def check() -> Decision:
        start.wait()
        return guard.check(*SEARCH, "a")

    with ThreadPoolExecutor(CONCURRENT) as pool:
        decisions = list(pool.map(lambda _: check(), range(CONCURRENT)))
    guard.close()
    return decisions


@contextmanager
def out_of_memory(server: RedisServer) -> Iterator[None]:
    """A context in which the server refuses every write (``maxmemory`` of 1 byte), its library lost."""
    client = server.client()
    client.function_flush()
    client.config_set("maxmemory", 1)
    try:
        yield
    finally:
        client.config_set("maxmemory", 0)
        time.sleep(0.6)  # the store's retry_interval: checks fail at once until it passes


def test_a_library_refused_for_memory_is_loaded_again_later(own_redis: RedisServer, expected: int) -> None:
    guard = guard_on(own_redis)
    assert guard.check(*SEARCH, "b").allowed
    with out_of_memory(own_redis):
        assert guard.check(*SEARCH, "b").allowed  # failed open: FUNCTION LOAD refused (OOM)
    assert guard.stats()["fail_open"] == {"store": 1}
    assert first_denied(guard) == expected
    guard.close()
    assert own_redis.sent("evalsha") == 0 and len(libraries(own_redis)) == 1  # not given up for scripts


async def test_an_async_guard_loads_it_again_alike(own_redis: RedisServer, expected: int) -> None:
    guard = guard_on(own_redis)
    assert (await guard.acheck(*SEARCH, "b")).allowed
    with out_of_memory(own_redis):
        assert (await guard.acheck(*SEARCH, "b")).allowed
    assert guard.stats()["fail_open"] == {"store": 1}
    denied = [i for i in range(12) if not await acall(guard)]
    await guard.aclose()
    assert denied[0] == expected
    assert own_redis.sent("evalsha") == 0 and len(libraries(own_redis)) == 1


async def acall(guard: Guard) -> bool:
    """One call of the loop ``first_denied`` runs, from an event loop: whether it was allowed."""
    if not (await guard.acheck(*SEARCH, "a")).allowed:
        return False
    await guard.arecord_result(*SEARCH, "no results", "a", ok=True)
    return True
