"""One Redis round trip per tool call: a result travels with the agent's next check, and goes on
its own after ``result_flush_delay``, at ``flush``/``close``, or when too many are held.

Round trips are the commands a real redis-server receives from clients (``MONITOR``, which
tells them apart from those the scripts run)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from loopfuse import ConfigError, Guard
from loopfuse.stores.redis_held import OVERALL, PER_AGENT
from tests.store_fixtures import LoopTicks, RedisServer, unique_prefix

ONE_ERROR = {"same_error": {"limit": 1}}  # after one error, the next call of the tool is denied
RUN = "script"  # a round trip: FCALL of the store's function, or EVALSHA before Redis 7.0


class Sent:
    """The names of the commands clients send a server, as it reports them (``MONITOR``)."""

    def __init__(self, server: RedisServer) -> None:
        self._marks = server.client()
        self._marks.ping()  # connected before watching
        self._names: list[str] = []
        self._seen = threading.Event()
        self._monitor = redis.Redis(host="127.0.0.1", port=server.port).monitor()
        self._monitor.__enter__()  # from now on the server reports every command to it
        self._watcher = threading.Thread(target=self._watch)
        self._watcher.start()

    def _watch(self) -> None:
        for command in self._monitor.listen():
            text = command["command"]
            if text.startswith("ECHO loopfuse-test-"):
                self._seen.set()
                if text.endswith("-end"):
                    return
            elif command["client_type"] != "lua":  # not what a script runs
                name = text.split(" ", 1)[0]
                self._names.append(RUN if name in ("FCALL", "EVALSHA") else name)

    def names(self, end: bool = False) -> list[str]:
        """What came so far (every command sent before this call)."""
        self._seen.clear()
        self._marks.echo(f"loopfuse-test-{uuid.uuid4().hex}{'-end' if end else ''}")
        assert self._seen.wait(10)
        return list(self._names)


@contextmanager
def sent(server: RedisServer) -> Iterator[Sent]:
    seen = Sent(server)
    try:
        yield seen
    finally:
        seen.names(end=True)
        seen._watcher.join(10)
        seen._monitor.__exit__()


def guard_for(server: RedisServer, prefix: str, delay: float, mapping: dict[str, Any] | None = None) -> Guard:
    store = {"url": server.url, "prefix": prefix, "result_flush_delay": delay}
    return Guard.from_config({**(mapping or {}), "store": store})


def warm(guard: Guard) -> None:
    """Connect, load the scripts, report the agent's first result: what only happens once."""
    for i in range(3):
        tool_call(guard, i)
    guard.flush()


def tool_call(guard: Guard, i: int, agent: str = "a") -> None:
    args = {"path": f"/src/{i}"}
    assert guard.check("read", args, agent).allowed
    guard.record_result("read", args, f"contents {i}", agent, ok=True)


def failed_fetch(guard: Guard, agent: str = "a") -> None:
    assert guard.check("fetch", {"u": 1}, agent).allowed
    guard.record_result("fetch", {"u": 1}, agent=agent, error=TimeoutError("timed out"))


def fetch_kind(guard: Guard, agent: str = "a") -> str | None:
    return guard.check("fetch", {"u": 2}, agent).kind


# 5 s: no result of this test waits that long, so only checks and closing send them.
@pytest.mark.parametrize(("delay", "per_call"), [(5.0, 1), (0.0, 2)])
def test_a_tool_call_costs_one_round_trip(own_redis: RedisServer, delay: float, per_call: int) -> None:
    guard = guard_for(own_redis, unique_prefix(), delay)
    warm(guard)
    with sent(own_redis) as seen:
        for i in range(3, 23):
            tool_call(guard, i)
        assert seen.names() == [RUN] * 20 * per_call
        guard.close()
        assert seen.names() == [RUN] * (20 * per_call + (delay > 0))  # and the last result


async def test_an_async_tool_call_costs_one_round_trip(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis, unique_prefix(), 5.0)

    async def tool_call(i: int) -> None:
        args = {"path": f"/src/{i}"}
        assert (await guard.acheck("read", args, "a")).allowed
        await guard.arecord_result("read", args, f"contents {i}", "a", ok=True)

    for i in range(3):
        await tool_call(i)
    await guard.aflush()
    with sent(own_redis) as seen:
        for i in range(3, 23):
            await tool_call(i)
        assert seen.names() == [RUN] * 20
        await guard.aclose()
        assert seen.names() == [RUN] * 21


def test_a_held_result_goes_after_the_delay(own_redis: RedisServer) -> None:
    prefix = unique_prefix()
    guard, elsewhere = (
        guard_for(own_redis, prefix, 0.2, ONE_ERROR),
        guard_for(own_redis, prefix, 0.2, ONE_ERROR),
    )
    warm(guard)
    with sent(own_redis) as seen:
        failed_fetch(guard)
        time.sleep(0.1)
        assert seen.names() == [RUN]  # the check; the result is held
        time.sleep(0.4)
        assert seen.names() == [RUN] * 2  # sent, with no next call
    assert fetch_kind(elsewhere) == "same_error"  # another process sees the error
    guard.close()
    elsewhere.close()


@pytest.mark.parametrize("how", ["flush", "close"])
def test_flush_and_close_send_held_results(redis_server: RedisServer, how: str) -> None:
    prefix = unique_prefix()
    guard, elsewhere = (
        guard_for(redis_server, prefix, 60, ONE_ERROR),
        guard_for(redis_server, prefix, 60, ONE_ERROR),
    )
    failed_fetch(guard)
    getattr(guard, how)()
    assert fetch_kind(elsewhere) == "same_error"
    guard.close()
    elsewhere.close()


@pytest.mark.parametrize("how", ["aflush", "aclose"])
async def test_aflush_and_aclose_send_held_results(redis_server: RedisServer, how: str) -> None:
    prefix = unique_prefix()
    guard, elsewhere = (
        guard_for(redis_server, prefix, 60, ONE_ERROR),
        guard_for(redis_server, prefix, 60, ONE_ERROR),
    )
    assert (await guard.acheck("fetch", {"u": 1}, "a")).allowed
    await guard.arecord_result("fetch", {"u": 1}, agent="a", error=TimeoutError("timed out"))
    await getattr(guard, how)()
    assert (await elsewhere.acheck("fetch", {"u": 2}, "a")).kind == "same_error"
    await guard.aclose()
    await elsewhere.aclose()


EXITS_HOLDING = """
import sys
from loopfuse import Guard
store = {"url": sys.argv[1], "prefix": sys.argv[2], "result_flush_delay": 60}
guard = Guard.from_config({"same_error": {"limit": 1}, "store": store})
assert guard.check("fetch", {"u": 1}, "a").allowed
guard.record_result("fetch", {"u": 1}, agent="a", error=TimeoutError("timed out"))
"""  # and exits without close()


def test_held_results_are_sent_when_the_interpreter_exits(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-c", EXITS_HOLDING, redis_server.url, prefix]
    subprocess.run(argv, env=env, check=True, timeout=60)
    elsewhere = guard_for(redis_server, prefix, 60, ONE_ERROR)
    assert fetch_kind(elsewhere) == "same_error"
    elsewhere.close()


def test_memory_guards_flush_too() -> None:
    guard = Guard.from_config(ONE_ERROR)
    failed_fetch(guard)
    guard.flush()  # nothing held in process
    assert fetch_kind(guard) == "same_error"


def test_an_agent_holding_too_many_results_sends_them(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis, unique_prefix(), 60)
    warm(guard)
    tool_call(guard, 0)
    with sent(own_redis) as seen:
        for i in range(PER_AGENT):  # a host reporting results faster than it checks calls
            guard.record_result("read", {"path": "/src/0"}, f"again {i}", "a", ok=True)
        assert seen.names() == [RUN]  # the first and the next PER_AGENT, in one round trip
        guard.record_result("read", {"path": "/src/0"}, "once more", "a", ok=True)
        assert seen.names() == [RUN]
    guard.close()


def test_too_many_held_results_overall_are_sent(own_redis: RedisServer) -> None:
    guard = guard_for(own_redis, unique_prefix(), 60)
    warm(guard)
    with sent(own_redis) as seen:
        for i in range(OVERALL + 1):  # one result for each of many agents, each awaiting its next call
            tool_call(guard, i, f"agent-{i}")
        deadline = time.monotonic() + 20
        while len(seen.names()) < 2 * (OVERALL + 1) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert seen.names() == [RUN] * 2 * (OVERALL + 1)  # every check, then every result
    guard.close()


def test_forget_drops_held_results(own_redis: RedisServer) -> None:
    prefix = unique_prefix()
    guard = guard_for(own_redis, prefix, 60, ONE_ERROR)
    failed_fetch(guard)
    guard.forget("a")
    guard.close()  # nothing left to send: the agent's state stays deleted
    assert own_redis.client().keys(prefix + "*") == []


async def test_aforget_drops_held_results(own_redis: RedisServer) -> None:
    prefix = unique_prefix()
    guard = guard_for(own_redis, prefix, 60, ONE_ERROR)
    failed_fetch(guard)
    await guard.aforget("a")
    await guard.aclose()  # nothing left to send: the agent's state stays deleted
    assert own_redis.client().keys(prefix + "*") == []


async def test_aforget_on_a_stalled_redis_does_not_block_the_event_loop(own_redis: RedisServer) -> None:
    """An async host's run ends (``aforget``) while Redis stalls: other tasks keep running
    until the store's timeout, which is logged, not raised (a blocking ``forget`` stops them)."""
    guard = Guard.from_config({"store": {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.5}})
    assert (await guard.acheck("read", {"p": 1}, "a")).allowed  # the asyncio pool is open
    ticks = LoopTicks()
    own_redis.pause()
    try:
        await guard.aforget("a")
    finally:
        own_redis.resume()
    assert ticks.stop() >= 10
    await guard.aclose()


def test_checks_waiting_for_an_agents_results_go_as_soon_as_they_land(own_redis: RedisServer) -> None:
    """Checks of one agent wait while another round trip carries its results (so that Redis
    applies them in order), and go the moment it lands, not after the wait's 5 s cap."""
    store = {"url": own_redis.url, "prefix": unique_prefix(), "result_flush_delay": 60, "timeout": 10}
    guard = Guard.from_config({"store": store})
    tool_call(guard, 0)  # its result is held for the agent's next round trip
    own_redis.pause()  # the first check below carries it, and stays in flight until resumed
    decisions: list[bool] = []
    checks = [
        threading.Thread(target=lambda i=i: decisions.append(guard.check("read", {"n": i}, "a").allowed))
        for i in range(4)
    ]
    for check in checks:
        check.start()
    time.sleep(0.3)
    own_redis.resume()
    landed = time.monotonic()
    for check in checks:
        check.join(10)
    assert time.monotonic() - landed < 2.5
    assert decisions == [True] * 4
    guard.close()


def test_results_lost_at_a_timed_flush_are_counted_once(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    guard = guard_for(own_redis, unique_prefix(), 0.1)
    tool_call(guard, 0)
    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        time.sleep(0.5)
        assert guard.stats()["fail_open"] == {"store": 1}
        tool_call(guard, 1)  # the check fails open; its result is lost at the next flush
        time.sleep(0.5)
    assert guard.stats()["fail_open"] == {"store": 3}
    warnings = [r.getMessage() for r in caplog.records if "store failed" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].endswith("results are ignored until it answers")
    guard.close()


def test_an_agent_name_no_key_can_hold_fails_open(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    guard, elsewhere = (
        guard_for(redis_server, prefix, 0.1, ONE_ERROR),
        guard_for(redis_server, prefix, 0.1, ONE_ERROR),
    )
    lone = "\ud800 lone surrogate"  # not valid UTF-8
    assert guard.check("fetch", {"u": 1}, lone).allowed
    guard.record_result("fetch", {"u": 1}, agent=lone, error=TimeoutError("timed out"))
    assert guard.stats()["fail_open"] == {"agent_identity": 1, "result": 1}
    failed_fetch(guard)  # another agent's result still goes after the delay
    time.sleep(0.4)
    assert fetch_kind(elsewhere) == "same_error"
    guard.close()
    elsewhere.close()


@pytest.mark.parametrize("value", [-0.1, 61, "soon", True, float("nan")])
def test_result_flush_delay_is_checked(value: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        Guard.from_config({"store": {"result_flush_delay": value}})
    expected = (
        f"[store] result_flush_delay = {value!r} is not allowed: expected a number of seconds from 0 to 60"
    )
    assert expected in str(caught.value)
