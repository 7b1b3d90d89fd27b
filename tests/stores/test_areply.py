"""On a ``redis.asyncio`` connection the store writes a script's command to the transport itself
(``redis_reply.asend``) and leaves connecting, health checks and a write the socket cannot take
at once to redis-py's ways; every reply is read by redis-py, so values, errors and decisions
are redis-py's and the connection stays in step."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest
import redis
import redis.asyncio as aredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from loopfuse import Guard
from loopfuse.stores.redis_reply import asend
from tests.store_fixtures import RedisServer, unique_prefix
from tests.stores.test_reply import packed_eval


def kill(server: RedisServer, **only: Any) -> None:
    """Close the server's connections to the clients ``only`` names (redis-py's filters)."""
    with redis.Redis(port=server.port) as client:
        client.client_kill_filter(**only)


@pytest.fixture(params=[2, 3], ids=["RESP2", "RESP3"])
async def conn(request: pytest.FixtureRequest, redis_server: RedisServer) -> AsyncIterator[aredis.Connection]:
    connection = aredis.Connection(host="127.0.0.1", port=redis_server.port, protocol=request.param)
    await connection.connect()
    yield connection
    await connection.disconnect()


@pytest.mark.parametrize(
    ("script", "value"),
    [("return 0", 0), ("return 10", 10), ("return {1, 'two'}", [1, b"two"]), ("return ':0'", b":0")],
)
async def test_a_command_written_to_the_transport_gets_its_reply(
    conn: aredis.Connection, script: str, value: Any
) -> None:
    for _ in range(2):
        await asend(conn, packed_eval(script))
        assert await conn.read_response() == value
    await conn.send_command("ECHO", "next")
    assert await conn.read_response() == b"next"  # nothing of the replies before is left unread


async def test_asend_connects_a_new_connection(redis_server: RedisServer) -> None:
    connection = aredis.Connection(host="127.0.0.1", port=redis_server.port)
    for _ in range(3):
        await asend(connection, packed_eval("return 0"))  # the first connects (by redis-py)
        assert await connection.read_response() == 0
    await connection.disconnect()


async def test_asend_leaves_health_checks_to_redis_py(own_redis: RedisServer) -> None:
    connection = aredis.Connection(host="127.0.0.1", port=own_redis.port, health_check_interval=30)
    await connection.connect()
    connection.next_health_check = 0  # one is due
    before = own_redis.sent("ping")
    await asend(connection, packed_eval("return 0"))
    assert await connection.read_response() == 0
    assert own_redis.sent("ping") == before + 1  # redis-py sent it first
    await connection.disconnect()


async def test_a_write_the_socket_cannot_take_times_out_and_closes_the_connection(
    own_redis: RedisServer,
) -> None:
    connection = aredis.Connection(host="127.0.0.1", port=own_redis.port, socket_timeout=0.5)
    await connection.connect()
    own_redis.pause()  # reads nothing: the socket's buffers fill
    try:
        with pytest.raises(RedisTimeoutError, match="Timeout writing to socket"):
            await asend(
                connection, packed_eval("redis.call('SET', 'ran', 1) return '" + "x" * 32_000_000 + "'")
            )
        assert not connection.is_connected  # half a command sent: the connection is useless
    finally:
        own_redis.resume()
        await connection.disconnect()
    await asyncio.sleep(0.5)
    with redis.Redis(port=own_redis.port) as client:
        assert not client.exists("ran")  # the rest was dropped, not sent late: the command never ran


async def test_a_connection_the_server_closed_fails_on_its_reply(redis_server: RedisServer) -> None:
    connection = aredis.Connection(host="127.0.0.1", port=redis_server.port)
    await connection.connect()
    await connection.send_command("CLIENT", "ID")
    own_id = await connection.read_response()
    kill(redis_server, _id=own_id)
    with pytest.raises(RedisConnectionError):
        await asend(connection, packed_eval("return 0"))
        await connection.read_response()
    await connection.disconnect()


async def test_acheck_decides_the_same_after_the_server_dropped_its_connections(
    redis_server: RedisServer,
) -> None:
    on_redis = Guard.from_config({"store": {"url": redis_server.url, "prefix": unique_prefix()}})
    in_process = Guard.from_config({})
    seen, expected = [], []
    for i in range(9):
        if i == 4:  # every client but the killer's (the store's connection among them)
            kill(redis_server, _type="normal", skipme=True)
        seen.append((await on_redis.acheck("search", {"q": "x"}, "run")).allowed)
        expected.append((await in_process.acheck("search", {"q": "x"}, "run")).allowed)
    await on_redis.aclose()
    assert seen == expected and expected.count(False) == 3  # retried on a new connection


async def test_an_acheck_cancelled_in_flight_leaves_the_store_in_step(own_redis: RedisServer) -> None:
    on_redis = Guard.from_config({"store": {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 5}})
    assert await checks_after_one_cancelled(on_redis, own_redis) == IN_STEP
    assert on_redis.stats()["fail_open"] == {}
    await on_redis.aclose()


IN_STEP = [True] * 6 + [False] * 2  # each check read its own reply, not the one left unread


async def checks_after_one_cancelled(guard: Guard, server: RedisServer) -> list[bool]:
    """A check of agent a's, then one cancelled while ``server`` is paused (its reply left
    unread), then 8 checks of another call: whether each of those was allowed."""
    assert (await guard.acheck("read", {"p": 1}, "a")).allowed
    server.pause()  # the next reply does not come
    try:
        await cancelled_after(guard.acheck("read", {"p": 2}, "a"), 0.2)
    finally:
        server.resume()
    return [(await guard.acheck("search", {"q": "x"}, "a")).allowed for _ in range(8)]


async def cancelled_after(work: Coroutine[Any, Any, Any], seconds: float) -> None:
    """Run ``work`` as a task, cancel it after ``seconds``, and see it end cancelled."""
    task = asyncio.create_task(work)
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def _one_connection(server: RedisServer) -> dict[str, Any]:
    """A store's settings on ``server`` with one connection, which a paused server keeps busy."""
    return {
        "url": server.url,
        "prefix": unique_prefix(),
        "timeout": 5,
        "max_connections": 1,
        "pool_timeout": 5,
    }


async def _cancel_carrying(
    guard: Guard,
    server: RedisServer,
    hold_the_pool: bool,
    carry: Callable[[], Coroutine[Any, Any, Any]] | None = None,
) -> None:
    """Report an error for agent a, then cancel the round trip carrying it (``carry``: a check of
    a's by default) while Redis is paused (after its command went out, or, ``hold_the_pool``,
    while it waits for the one connection)."""
    assert (await guard.acheck("fetch", {"u": 1}, "a")).allowed
    await guard.arecord_result("fetch", {"u": 1}, agent="a", error=TimeoutError("timed out"))
    server.pause()
    try:
        other = asyncio.create_task(guard.acheck("read", {"p": 1}, "b")) if hold_the_pool else None
        await asyncio.sleep(0.1)
        await cancelled_after(carry() if carry else guard.acheck("fetch", {"u": 2}, "a"), 0.2)
    finally:
        server.resume()
    if other is not None:
        assert (await other).allowed
    await asyncio.sleep(0.2)  # Redis runs what it was sent before the next check


@pytest.mark.parametrize("hold_the_pool", [False, True], ids=["sent", "unsent"])
async def test_a_cancelled_acheck_applies_the_results_it_sent_and_holds_unsent_ones_again(
    own_redis: RedisServer, hold_the_pool: bool
) -> None:
    """As docs/redis.md says: a result whose command left the process counts at once; one whose
    check was cancelled while waiting for a connection is held again and counts, once, with the
    agent's next check."""
    store = {**_one_connection(own_redis), "result_flush_delay": 30}  # no flusher thread meanwhile
    guard = Guard.from_config({"same_error": {"limit": 1}, "store": store})
    await _cancel_carrying(guard, own_redis, hold_the_pool)
    state = f"{store['prefix']}{{a}}:s"
    with redis.Redis(port=own_redis.port) as client:
        assert client.hget(state, "puts") == (None if hold_the_pool else b"1")
        after = await guard.acheck("fetch", {"u": 3}, "a")
        assert after.kind == "same_error"
        assert client.hget(state, "puts") == b"1"
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()


async def test_an_acheck_cancelled_while_connecting_holds_its_results_again(own_redis: RedisServer) -> None:
    """A check cancelled while its new connection waits for Redis's handshake wrote nothing:
    its results are held again and count with the agent's next check, as when it waited for a
    connection (the pool's one connection is busy with b's check, so a's opens a second)."""
    store = {**_one_connection(own_redis), "max_connections": 2, "result_flush_delay": 30}
    guard = Guard.from_config({"same_error": {"limit": 1}, "store": store})
    await _cancel_carrying(guard, own_redis, True)
    with redis.Redis(port=own_redis.port) as client:
        assert client.hget(f"{store['prefix']}{{a}}:s", "puts") is None
    assert (await guard.acheck("fetch", {"u": 3}, "a")).kind == "same_error"
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()


async def test_a_cancelled_aflush_holds_its_results_again(own_redis: RedisServer) -> None:
    """An ``aflush`` cancelled while it waits for a connection sends nothing and loses nothing:
    the next flush delivers the results, once."""
    store = {**_one_connection(own_redis), "result_flush_delay": 30}
    guard = Guard.from_config({"same_error": {"limit": 1}, "store": store})
    await _cancel_carrying(guard, own_redis, True, guard.aflush)
    state = f"{store['prefix']}{{a}}:s"
    with redis.Redis(port=own_redis.port) as client:
        assert client.hget(state, "puts") is None
        await guard.aflush()
        assert client.hget(state, "puts") == b"1"
    assert (await guard.acheck("fetch", {"u": 2}, "a")).kind == "same_error"
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()
