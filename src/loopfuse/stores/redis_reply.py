"""Reading a script's reply straight from the connection's socket.

redis-py's reader (a buffer object, a parser object and their checks, in Python) costs about a
fifth of a Redis tool call's Python; a script's reply is small (``:0`` when the call is allowed)
and comes in one ``recv``. ``reply(conn)`` reads it so, and parses the few RESP types a script
returns (a RESP3 push message or attributes before it are skipped); it raises what redis-py's
reader raises for the same failures (``TimeoutError``,
``ConnectionError`` and the ``ResponseError`` subclasses of an error reply), so retries and
error handling stay the same. A connection redis-py does not give a plain socket (``_sock``)
is read by redis-py. Only the script round trips read here: every other command on the
connection is redis-py's, and the replies never interleave (one request, one reply).
"""

from __future__ import annotations

from typing import Any

from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["reply"]

_ALLOWED = b":0\r\n"  # decide.lua's reply for an allowed call: nearly every round trip
_CHUNK = 65536
_BEFORE_REPLY = {b">": 1, b"|": 2}  # RESP3 types that may come first: values per count


def reply(conn: Any) -> Any:
    """The reply to the command just sent on ``conn``: an int, bytes, None or a list of them;
    an error reply is raised as redis-py raises it."""
    sock = getattr(conn, "_sock", None)
    if sock is None:
        return conn.read_response()
    data = _received(sock)
    if data == _ALLOWED:
        return 0
    try:
        value = _Reader(sock, data).value()
    except ValueError as exc:  # a length or integer that is not one: not a Redis server's reply
        raise InvalidResponse(f"Protocol error: {exc}") from exc
    if isinstance(value, ResponseError):
        raise value
    return value


def _error(message: str) -> ResponseError:
    """The exception redis-py makes of an error reply (``NoScriptError`` for ``NOSCRIPT`` ...)."""
    error: ResponseError = BaseParser.parse_error(message)  # type: ignore[no-untyped-call]
    return error


def _received(sock: Any) -> bytes:
    try:
        data: bytes = sock.recv(_CHUNK)
    except TimeoutError:
        raise RedisTimeoutError("Timeout reading from socket") from None
    except OSError as exc:
        raise RedisConnectionError(f"Error while reading from socket: {exc.args}") from exc
    if not data:
        raise RedisConnectionError("Connection closed by server.")
    return data


class _Reader:
    """One RESP value from ``data`` and whatever more of it the socket sends."""

    __slots__ = ("_at", "_data", "_sock")

    def __init__(self, sock: Any, data: bytes) -> None:
        self._sock, self._data, self._at = sock, data, 0

    def value(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self._exact(size)
        if kind == b"*":
            count = int(rest)
            return None if count < 0 else [self.value() for _ in range(count)]
        if kind == b"+":
            return rest
        if kind == b"_":  # RESP3's null
            return None
        if kind == b"-":
            return _error(rest.decode("utf-8", "replace"))
        if kind in _BEFORE_REPLY:  # RESP3's push message or attributes: the reply follows
            for _ in range(int(rest) * _BEFORE_REPLY[kind]):
                self.value()
            return self.value()
        raise InvalidResponse(f"Protocol error, got {kind!r} as reply type byte")

    def _line(self) -> bytes:
        end = self._data.find(b"\r\n", self._at)
        while end < 0:
            self._data += _received(self._sock)
            end = self._data.find(b"\r\n", self._at)
        line, self._at = self._data[self._at : end], end + 2
        return line

    def _exact(self, size: int) -> bytes:
        while len(self._data) < self._at + size + 2:
            self._data += _received(self._sock)
        value, self._at = self._data[self._at : self._at + size], self._at + size + 2
        return value
