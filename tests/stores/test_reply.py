"""The Redis store writes a script's command to the socket itself and takes its usual reply
(``:0``, allowed) from it, leaving every other reply to redis-py's reader (``redis_reply``):
the values, errors and decisions are redis-py's, and the connection stays in step."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from loopfuse import Guard
from loopfuse.stores.redis_reply import reply, send
from tests.store_fixtures import RedisServer, unique_prefix


@pytest.fixture(params=[2, 3], ids=["RESP2", "RESP3"])
def conn(request: pytest.FixtureRequest, redis_server: RedisServer) -> Iterator[redis.Connection]:
    connection = redis.Connection(host="127.0.0.1", port=redis_server.port, protocol=request.param)
    connection.connect()
    yield connection
    connection.disconnect()


def sent(conn: redis.Connection, script: str) -> redis.Connection:
    conn.send_command("EVAL", script, 0)
    return conn


def test_the_allowed_reply_is_taken_and_the_connection_stays_in_step(conn: redis.Connection) -> None:
    for _ in range(3):
        assert reply(sent(conn, "return 0")) == 0
    conn.send_command("ECHO", "next")
    assert conn.read_response() == b"next"  # nothing of the replies before is left unread


@pytest.mark.parametrize(
    ("script", "value"),
    [
        ("return 1", 1),
        ("return 10", 10),
        ("return {'duplicate', 6, 6, 1, 1, 'window'}", [b"duplicate", 6, 6, 1, 1, b"window"]),
        ("return {0, 'cycle', 3, 3, ''}", [0, b"cycle", 3, 3, b""]),
        ("return ':0'", b":0"),
    ],
)
def test_every_other_reply_is_redis_pys(conn: redis.Connection, script: str, value: Any) -> None:
    assert reply(sent(conn, script)) == value
    assert reply(sent(conn, "return 0")) == 0


def test_an_error_reply_raises_what_redis_py_raises(conn: redis.Connection) -> None:
    with pytest.raises(NoScriptError):
        reply(sent(conn, "return redis.error_reply('NOSCRIPT No matching script')"))
    assert reply(sent(conn, "return 0")) == 0


def test_a_silent_server_times_out_as_redis_py_says(own_redis: RedisServer) -> None:
    connection = redis.Connection(host="127.0.0.1", port=own_redis.port, socket_timeout=0.1)
    connection.connect()
    own_redis.pause()
    try:
        started = time.monotonic()
        with pytest.raises(RedisTimeoutError, match="Timeout reading from socket"):
            reply(sent(connection, "return 0"))
        assert time.monotonic() - started < 1  # one timeout, not two
    finally:
        own_redis.resume()
        connection.disconnect()


def packed_eval(script: str) -> bytes:
    return b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%b\r\n$1\r\n0\r\n" % (len(script), script.encode())


def test_send_connects_a_new_connection_and_keeps_it_in_step(redis_server: RedisServer) -> None:
    connection = redis.Connection(host="127.0.0.1", port=redis_server.port)
    for _ in range(3):
        send(connection, packed_eval("return 0"))  # the first connects (by redis-py)
        assert reply(connection) == 0
    send(connection, packed_eval("return {1, 'two'}"))
    assert reply(connection) == [1, b"two"]
    connection.disconnect()


def test_send_leaves_health_checks_to_redis_py(own_redis: RedisServer) -> None:
    connection = redis.Connection(host="127.0.0.1", port=own_redis.port, health_check_interval=30)
    connection.connect()
    connection.next_health_check = 0  # one is due
    before = own_redis.sent("ping")
    send(connection, packed_eval("return 0"))
    assert reply(connection) == 0
    assert own_redis.sent("ping") == before + 1  # redis-py sent it first, and read its PONG
    connection.disconnect()


def test_a_failed_send_closes_the_connection_as_redis_py_does(redis_server: RedisServer) -> None:
    connection = redis.Connection(host="127.0.0.1", port=redis_server.port)
    connection.connect()
    assert connection._sock is not None
    connection._sock.shutdown(socket.SHUT_WR)
    with pytest.raises(RedisConnectionError, match="writing to socket"):
        send(connection, packed_eval("return 0"))
    assert connection._sock is None  # closed: the next command connects again
    send(connection, packed_eval("return 0"))
    assert reply(connection) == 0
    connection.disconnect()


class Peer:
    """A connection over one end of a socket pair, read by a plain line reader where redis-py's
    reader would read: what the fast path leaves on the socket is what it gets."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read_response(self) -> bytes:
        data = b""
        while not data.endswith(b"\r\n"):
            data += self._sock.recv(64)
        return data


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    yield ours, theirs
    ours.close()
    theirs.close()


@pytest.mark.parametrize(
    ("now", "later"), [(b":0", b"\r\n"), (b">1\r\n:0\r\n", b"")], ids=["still arriving", "push first"]
)
def test_what_the_fast_path_does_not_take_is_left_whole_to_the_reader(
    pair: tuple[socket.socket, socket.socket], now: bytes, later: bytes
) -> None:
    ours, theirs = pair
    theirs.sendall(now)
    rest = threading.Timer(0.05, lambda: theirs.sendall(later))
    rest.start()
    assert reply(Peer(ours)) == now + later  # read as it came, a push message first
    rest.join()


def test_a_connection_without_a_plain_socket_is_read_by_redis_py(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair

    class Wrapped(Peer):  # its socket is not a socket.socket (as a TLS connection's is not)
        def __init__(self, sock: socket.socket) -> None:
            super().__init__(sock)
            self._sock = type("TLSLike", (), {"recv": sock.recv})()

    theirs.sendall(b":0\r\n")
    assert reply(Wrapped(ours)) == b":0\r\n"


@pytest.mark.parametrize("protocol", [2, 3])
def test_decisions_are_the_same_over_resp2_and_resp3(redis_server: RedisServer, protocol: int) -> None:
    store = {"url": f"{redis_server.url}?protocol={protocol}", "prefix": unique_prefix()}
    on_redis, in_process = Guard.from_config({"store": store}), Guard.from_config({})

    def run(guard: Guard) -> list[tuple[bool, str | None, int | None, int | None]]:
        decisions = [guard.check("search", {"q": "x"}, "run") for _ in range(9)]
        return [(d.allowed, d.kind, d.count, d.limit) for d in decisions]

    seen = run(on_redis)
    on_redis.close()
    assert seen == run(in_process)
    assert [allowed for allowed, *_ in seen].count(False) == 3  # each denial an array reply
