"""Many concurrent callers on one Redis-backed guard: a busy pool waits, counts stay exact;
only a Redis that cannot be reached is an outage."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from loopfuse import ConfigError, Decision, Guard
from tests.store_fixtures import RedisServer, unique_prefix

LIMIT = 50
CONFIG: dict[str, Any] = {
    "circuit_breaker": {"duplicate_limit": LIMIT, "max_calls_per_agent": 0},
    "loop_brake": {"enabled": False},
    "guard": {"abort_after_denials": 0},
}
ARGS = {"path": "/tmp/report.txt"}
# A thousand checks share 20 connections: about 50 round trips queue up, which on a loaded
# 2-core machine can outlast the default 1 s wait for a connection, or a reply the default
# 0.25 s, or opening one of the 20 connections the default 1 s (the check then fails open).
# These tests are about exact counts, not about latency.
LOADED = {"pool_timeout": 10.0, "timeout": 10.0, "connect_timeout": 10.0}


def guard_for(url: str, policy: str, **store: Any) -> Guard:
    section = {"url": url, "prefix": unique_prefix(), "on_store_error": policy, **store}
    return Guard.from_config({**CONFIG, "store": section})


async def gather_checks(guard: Guard, n: int) -> list[Decision]:
    return await asyncio.gather(*(guard.acheck("read", ARGS, "a") for _ in range(n)))


def threaded_checks(guard: Guard, n: int) -> list[Decision]:
    decisions: list[Decision] = []
    start = threading.Barrier(n)

    def call() -> None:
        start.wait()
        decisions.append(guard.check("read", ARGS, "a"))

    threads = [threading.Thread(target=call) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return decisions


@pytest.mark.parametrize("policy", ["allow", "deny"])
async def test_a_thousand_concurrent_async_checks_are_exact(redis_server: RedisServer, policy: str) -> None:
    guard = guard_for(redis_server.url, policy, **LOADED)
    decisions = await gather_checks(guard, 1000)
    assert sum(d.allowed for d in decisions) == LIMIT
    assert {d.kind for d in decisions if not d.allowed} == {"duplicate"}
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()


@pytest.mark.parametrize("policy", ["allow", "deny"])
def test_two_hundred_threads_are_exact(redis_server: RedisServer, policy: str) -> None:
    guard = guard_for(redis_server.url, policy, **LOADED)
    decisions = threaded_checks(guard, 200)
    assert sum(d.allowed for d in decisions) == LIMIT
    assert {d.kind for d in decisions if not d.allowed} == {"duplicate"}
    assert guard.stats()["fail_open"] == {}
    guard.close()


async def test_the_default_limit_is_exact_under_load(redis_server: RedisServer) -> None:
    store = {"url": redis_server.url, "prefix": unique_prefix(), **LOADED}
    guard = Guard.from_config({"store": store})
    decisions = await gather_checks(guard, 1000)
    assert sum(d.allowed for d in decisions) == 6  # the default duplicate_limit
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()


def connected_clients(server: RedisServer) -> int:
    client = server.client()
    count = int(client.info("clients")["connected_clients"]) - 1  # not this one
    client.close()
    return count


async def test_the_url_sets_the_pool_size(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis.url + "?max_connections=2&pool_timeout=5", "deny")
    decisions = await gather_checks(guard, 300)
    assert sum(d.allowed for d in decisions) == LIMIT
    assert connected_clients(own_redis) <= 2
    await guard.aclose()


def test_the_store_section_sets_the_pool_size(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis.url, "deny", max_connections=3, pool_timeout=5)
    assert sum(d.allowed for d in threaded_checks(guard, 100)) == LIMIT
    assert connected_clients(own_redis) <= 3
    guard.close()


async def test_a_pool_wait_that_runs_out_fails_only_that_check(own_redis: RedisServer) -> None:
    url = own_redis.url + "?max_connections=1&pool_timeout=0.2"
    guard = guard_for(url, "deny", timeout=2)
    assert (await guard.acheck("read", ARGS, "a")).allowed
    own_redis.pause()
    holder = asyncio.create_task(guard.acheck("read", ARGS, "a"))  # holds the only connection
    await asyncio.sleep(0.02)
    assert (await guard.acheck("read", ARGS, "b")).kind == "store"  # waited 0.2 s in vain
    after = asyncio.create_task(guard.acheck("read", ARGS, "c"))  # not an outage: it waits too
    await asyncio.sleep(0.02)
    own_redis.resume()
    assert (await holder).allowed and (await after).allowed
    await guard.aclose()


@pytest.mark.parametrize("policy", ["allow", "deny"])
async def test_a_stopped_redis_is_still_an_outage(own_redis: RedisServer, policy: str) -> None:
    guard = guard_for(own_redis.url, policy)
    assert (await guard.acheck("read", ARGS, "a")).allowed
    own_redis.stop()
    started = time.monotonic()
    decisions = await gather_checks(guard, 1000)
    assert time.monotonic() - started < 10.0  # refused at once: waiting out 1 s timeouts would take 50 s
    assert all(d.allowed == (policy == "allow") for d in decisions)
    assert all(d.kind == "store" for d in decisions if not d.allowed)
    await guard.aclose()


@pytest.mark.parametrize("policy", ["allow", "deny"])
def test_an_unreachable_redis_is_an_outage_within_the_timeout(policy: str) -> None:
    guard = guard_for("redis://127.0.0.1:1/0", policy, timeout=0.2)
    started = time.monotonic()
    decisions = threaded_checks(guard, 200)
    assert time.monotonic() - started < 2.0
    assert all(d.allowed == (policy == "allow") for d in decisions)
    guard.close()


@pytest.mark.parametrize(
    ("store", "needle"),
    [
        ({"max_connections": 0}, "[store] max_connections = 0 is not allowed: expected an integer >= 1"),
        ({"max_connections": "many"}, "[store] max_connections = 'many' is not allowed"),
        (
            {"connect_timeout": 0},
            "[store] connect_timeout = 0 is not allowed: expected a number from 0.001 to 3600",
        ),
        (
            {"pool_timeout": -1},
            "[store] pool_timeout = -1 is not allowed: expected a number from 0.001 to 3600",
        ),
        (
            {"url": "redis://:pw@h/0?max_connections=x"},
            "max_connections = 'x' is not allowed: expected an integer",
        ),
        ({"url": "redis://h/0?socket_timeout=0"}, "socket_timeout = '0' is not allowed: expected a number"),
        ({"url": "redis://h/0?pool_timeout=nan"}, "pool_timeout = 'nan' is not allowed"),
        # a misspelt option (else every check would fail open and stats() raise later), a bad port
        ({"url": "redis://:pw@h/0?socket_timout=0.1"}, "redis-py has no connection option 'socket_timout'"),
        ({"url": "unix:///tmp/r.sock?bogus=1"}, "redis-py has no connection option 'bogus'"),
        (
            {"url": "redis://:pw@h:notaport/0"},
            "[store] url = 'redis://***@h:notaport/0' is not allowed: Port",
        ),
    ],
)
def test_pool_settings_are_checked_at_construction(store: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Guard.from_config({"store": {"url": "redis://127.0.0.1:1/0", **store}})
    assert needle in str(caught.value)
    assert "pw" not in str(caught.value)
