"""The Redis store reads a script's reply from the socket itself (``redis_reply``): the same
values and errors as redis-py's reader, whether the reply comes in one piece or many, and the
same decisions over RESP2 and RESP3 connections to a real redis-server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, NoPermissionError, NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from loopfuse import Guard
from loopfuse.stores.redis_reply import reply
from tests.store_fixtures import RedisServer, unique_prefix

REPLIES: list[tuple[bytes, Any]] = [
    (b":0\r\n", 0),
    (b":1\r\n", 1),
    (b":-12\r\n", -12),
    (b"$5\r\nhello\r\n", b"hello"),
    (b"$0\r\n\r\n", b""),
    (b"$-1\r\n", None),
    (b"_\r\n", None),
    (b"+OK\r\n", b"OK"),
    (b"*-1\r\n", None),
    (b"*0\r\n", []),
    (
        b"*6\r\n$9\r\nduplicate\r\n:7\r\n:6\r\n:1\r\n:2\r\n$6\r\nresult\r\n",
        [b"duplicate", 7, 6, 1, 2, b"result"],
    ),
    (b"*5\r\n:0\r\n$5\r\ncycle\r\n:3\r\n:3\r\n$0\r\n\r\n", [0, b"cycle", 3, 3, b""]),
    (b"*2\r\n*1\r\n$2\r\nab\r\n:4\r\n", [[b"ab"], 4]),
    (b"$7\r\na\r\nb\r\nc\r\n", b"a\r\nb\r\nc"),  # CRLF inside a bulk string is data
]


class Conn:
    """What ``reply`` reads from: a connection holding its socket as ``_sock``, as redis-py's do."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, server = socket.socketpair()
    ours.settimeout(5)
    yield ours, server
    ours.close()
    server.close()


def sent_in_two(server: socket.socket, data: bytes, at: int) -> threading.Thread:
    """``data`` in two writes: the first now, the rest a moment later (two ``recv`` for the reader)."""
    server.sendall(data[:at])

    def rest() -> None:
        time.sleep(0.002)
        server.sendall(data[at:])

    later = threading.Thread(target=rest)
    later.start()
    return later


@pytest.mark.parametrize(("data", "value"), REPLIES)
def test_each_reply_type_in_one_piece(
    pair: tuple[socket.socket, socket.socket], data: bytes, value: Any
) -> None:
    ours, server = pair
    server.sendall(data)
    assert reply(Conn(ours)) == value


@pytest.mark.parametrize(("data", "value"), REPLIES[:1] + REPLIES[3:4] + REPLIES[10:11] + REPLIES[13:])
def test_a_reply_split_anywhere_reads_the_same(
    pair: tuple[socket.socket, socket.socket], data: bytes, value: Any
) -> None:
    ours, server = pair
    for at in range(1, len(data)):
        later = sent_in_two(server, data, at)
        assert reply(Conn(ours)) == value, at
        later.join()


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"-NOSCRIPT No matching script. Please use EVAL.\r\n", NoScriptError),
        (b"-NOPERM User guard has no permissions to run the 'fcall' command\r\n", NoPermissionError),
        (b"-ERR Function not found\r\n", ResponseError),
    ],
)
def test_an_error_reply_raises_what_redis_py_raises(
    pair: tuple[socket.socket, socket.socket], line: bytes, error: type[Exception]
) -> None:
    ours, server = pair
    server.sendall(line)
    with pytest.raises(error) as raised:
        reply(Conn(ours))
    assert type(raised.value) is error


def test_a_closed_connection_and_a_silent_one_raise_redis_errors(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, server = pair
    ours.settimeout(0.05)
    with pytest.raises(RedisTimeoutError):
        reply(Conn(ours))
    server.sendall(b"$10\r\nabc")  # cut short
    server.close()
    with pytest.raises(RedisConnectionError, match="closed"):
        reply(Conn(ours))


def test_an_unknown_reply_type_is_a_protocol_error(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, server = pair
    server.sendall(b"?2\r\n")
    with pytest.raises(InvalidResponse):
        reply(Conn(ours))
    server.sendall(b"$x1\r\n")
    with pytest.raises(InvalidResponse):
        reply(Conn(ours))


def test_a_push_message_or_attributes_before_the_reply_are_skipped(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, server = pair
    server.sendall(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n:0\r\n")
    assert reply(Conn(ours)) == 0
    server.sendall(b"|1\r\n+ttl\r\n:3\r\n*1\r\n:7\r\n")
    assert reply(Conn(ours)) == [7]


def test_a_connection_without_a_socket_of_its_own_is_read_by_redis_py(redis_server: RedisServer) -> None:
    class Unsocketed:  # a connection class that keeps its socket elsewhere
        def __init__(self) -> None:
            self._conn = redis.Connection(host="127.0.0.1", port=redis_server.port)

        def read_response(self) -> Any:
            return self._conn.read_response()

    conn = Unsocketed()
    conn._conn.send_command("ECHO", "through redis-py")
    assert reply(conn) == b"through redis-py"
    conn._conn.disconnect()


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
