"""Redis failing under a running guard: stopped, restarted, paused."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis

from loopfuse import Guard
from tests.store_fixtures import RedisServer, unique_prefix

LIMIT_2 = {"circuit_breaker": {"duplicate_limit": 2, "max_calls_per_agent": 0}}
SECRET = {"path": "/home/alice/secret-token-123"}


def guard_for(server: RedisServer, policy: str, timeout: float = 0.25) -> Guard:
    store = {"url": server.url, "prefix": unique_prefix(), "on_store_error": policy, "timeout": timeout}
    return Guard.from_config({**LIMIT_2, "store": store})


def allowed(guard: Guard, n: int, args: Any = SECRET) -> list[bool]:
    return [guard.check("read", args, "a").allowed for _ in range(n)]


def wait_for_retry() -> None:
    time.sleep(0.6)  # past RedisStore.retry_interval (0.5 s)


def store_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "store" in r.getMessage()]


def test_allow_fails_open_and_resumes(own_redis: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    guard = guard_for(own_redis, "allow")
    assert allowed(guard, 3) == [True, True, False]
    own_redis.stop()
    assert allowed(guard, 6) == [True] * 6
    assert guard.stats()["fail_open"] == {"store": 6}
    failed = store_warnings(caplog)
    assert len(failed) == 1 and "allowing" in failed[0] and "secret" not in failed[0]
    own_redis.start()  # an empty Redis: no persistence
    wait_for_retry()
    assert allowed(guard, 3) == [True, True, False]
    assert len(store_warnings(caplog)) == 2 and "answers again" in store_warnings(caplog)[1]
    own_redis.stop()
    assert allowed(guard, 2) == [True, True]
    assert len(store_warnings(caplog)) == 3  # a new outage, a new warning


def test_deny_refuses_and_resumes(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis, "deny")
    assert allowed(guard, 1) == [True]
    own_redis.stop()
    decisions = [guard.check("read", SECRET, "a") for _ in range(3)]
    assert [(d.allowed, d.kind) for d in decisions] == [(False, "store")] * 3
    message = decisions[0].message or ""
    assert "store cannot be reached" in message and "secret" not in message
    assert guard.stats()["denials"] == {"store": 3} and guard.stats()["fail_open"] == {}
    own_redis.start()
    wait_for_retry()
    assert allowed(guard, 3) == [True, True, False]


async def test_async_checks_follow_the_policy(own_redis: RedisServer) -> None:
    deny, allow = guard_for(own_redis, "deny"), guard_for(own_redis, "allow")
    assert (await deny.acheck("read", SECRET, "a")).allowed
    own_redis.stop()
    assert (await deny.acheck("read", SECRET, "a")).kind == "store"
    assert (await allow.acheck("read", SECRET, "a")).allowed
    own_redis.start()
    wait_for_retry()
    assert [(await deny.acheck("read", SECRET, "b")).allowed for _ in range(3)] == [True, True, False]
    await deny.aclose()
    await allow.aclose()


@pytest.mark.parametrize("policy", ["allow", "deny"])
def test_paused_server_costs_at_most_the_timeout(own_redis: RedisServer, policy: str) -> None:
    guard = guard_for(own_redis, policy, timeout=0.2)
    assert allowed(guard, 1) == [True]
    own_redis.pause()
    try:
        started = time.monotonic()
        first = guard.check("read", SECRET, "a")
        stalled = time.monotonic() - started
        started = time.monotonic()
        rest = [guard.check("read", SECRET, "a") for _ in range(20)]
        following = time.monotonic() - started
    finally:
        own_redis.resume()
    assert 0.15 < stalled < 0.6  # one socket timeout, no retries
    assert following < 0.2  # within the retry interval no call waits on the network
    assert {d.allowed for d in [first, *rest]} == {policy == "allow"}
    wait_for_retry()
    assert allowed(guard, 2, {"path": "other"}) == [True, True]
    assert allowed(guard, 1, {"path": "other"}) == [False]


@pytest.mark.parametrize("policy", ["allow", "deny"])
def test_one_agents_key_of_another_type_is_that_agents_trouble_only(
    own_redis: RedisServer, policy: str
) -> None:
    store = {"url": own_redis.url, "prefix": unique_prefix(), "on_store_error": policy}
    guard = Guard.from_config({**LIMIT_2, "store": store})
    assert allowed(guard, 2) == [True, True]
    redis.Redis.from_url(own_redis.url).set(f"{store['prefix']}{{broken}}:s", "not a hash")
    broken = guard.check("read", SECRET, "broken")
    assert (broken.allowed, broken.kind) == ((True, None) if policy == "allow" else (False, "store"))
    after = [guard.check("read", SECRET, "a") for _ in range(2)]
    assert [(d.allowed, d.kind) for d in after] == [(False, "duplicate")] * 2  # "a" is judged as before


def test_shadow_mode_denies_nothing_when_the_store_fails(own_redis: RedisServer) -> None:
    store = {"url": own_redis.url, "prefix": unique_prefix(), "on_store_error": "deny", "timeout": 0.25}
    guard = Guard.from_config({**LIMIT_2, "mode": "shadow", "store": store})
    own_redis.stop()
    decision = guard.check("read", SECRET, "a")
    assert (decision.allowed, decision.kind, decision.shadow) == (True, "store", True)


def _crowded_guard(server: RedisServer) -> Guard:
    """A guard whose callers queue for its 2 connections (timeouts 0.2 s, the queue 3 s)."""
    store = {"url": server.url, "prefix": unique_prefix(), "timeout": 0.2, "pool_timeout": 3.0}
    return Guard.from_config({**LIMIT_2, "store": {**store, "max_connections": 2}})


def _timed(check: Any) -> float:
    started = time.monotonic()
    check()
    return time.monotonic() - started


def test_callers_queued_for_a_connection_go_without_a_round_trip_once_redis_is_found_down(
    own_redis: RedisServer,
) -> None:
    """Each caller that got a connection after the first two timed out went to the network
    anyway: 8 callers on 2 connections waited up to 4 timeouts (0.8 s) for one check."""
    guard = _crowded_guard(own_redis)
    assert allowed(guard, 1) == [True]
    own_redis.pause()
    try:
        with ThreadPoolExecutor(8) as pool:
            took = list(pool.map(lambda n: _timed(lambda: guard.check("read", {"n": n}, f"a{n}")), range(8)))
    finally:
        own_redis.resume()
    assert max(took) < 0.45, took
    assert guard.stats()["fail_open"] == {"store": 8}


async def test_async_callers_queued_for_a_connection_go_without_a_round_trip_too(
    own_redis: RedisServer,
) -> None:
    guard = _crowded_guard(own_redis)
    assert (await guard.acheck("read", SECRET, "a")).allowed
    own_redis.pause()

    async def timed(n: int) -> float:
        started = time.monotonic()
        await guard.acheck("read", {"n": n}, f"a{n}")
        return time.monotonic() - started

    try:
        took = await asyncio.gather(*(timed(n) for n in range(8)))
    finally:
        own_redis.resume()
    assert max(took) < 0.45, took
    await guard.aclose()


def test_stats_queued_for_a_connection_while_redis_is_found_down_do_not_raise(own_redis: RedisServer) -> None:
    store = {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.2, "pool_timeout": 3.0}
    guard = Guard.from_config({**LIMIT_2, "store": {**store, "max_connections": 1}})
    assert allowed(guard, 1) == [True]
    own_redis.pause()
    try:
        with ThreadPoolExecutor(1) as pool:
            checking = pool.submit(guard.check, "read", SECRET, "a")  # holds the one connection
            time.sleep(0.05)
            stats = guard.stats()  # its count of agents waits for that connection
            assert checking.result().allowed
    finally:
        own_redis.resume()
    assert stats["agents"] == 0  # Redis could not say; no StoreUnavailableError escaped


def test_results_held_for_queued_checks_are_kept_when_redis_is_found_down(own_redis: RedisServer) -> None:
    """A check refused for want of Redis before it sent anything keeps the agent's results for
    its next round trip; only those of the checks that reached Redis are lost."""
    store = {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.2, "pool_timeout": 3.0}
    store |= {"max_connections": 2, "result_flush_delay": 60}
    guard = Guard.from_config({**LIMIT_2, "store": store})
    for n in range(8):
        assert guard.check("read", {"n": n}, f"a{n}").allowed
        guard.record_result("read", {"n": n}, "the same", f"a{n}")
    own_redis.pause()
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: guard.check("read", {"n": n}, f"a{n}"), range(8)))
    finally:
        own_redis.resume()
    lost = guard.stats()["fail_open"]["store"] - 8  # 8 checks, then one per result lost
    assert lost <= 4, lost  # the 2 sent (with room for a waiter woken before the failure is known)
    guard.close()
