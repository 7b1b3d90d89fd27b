"""A script's round trip on a redis-py connection: the command written to the socket, and the
usual reply taken from it; any other reply read by redis-py.

redis-py's reader (a buffer object, a parser object and their checks, in Python) costs about a
fifth of a Redis tool call's Python, and nearly every round trip's reply is decide.lua's
``:0`` (the call is allowed). ``reply(conn)`` looks at what the socket holds without taking it
(``MSG_PEEK``): when that is exactly ``:0``, it takes those four bytes and returns 0; anything
else (a denial, an error, a reply still arriving, a RESP3 push message before it) is left where
it is for redis-py's reader, which handles it as it handles every reply. A connection without a
plain socket (TLS, or a class redis-py does not ship) is read by redis-py alone.

On a ``redis.asyncio`` connection, ``asend`` writes the command to the connection's transport
(redis-py wraps each write in ``asyncio.wait_for``: a task and two turns of the event loop more
per round trip); replies are read by redis-py.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, NoReturn

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["asend", "reply", "send"]

_ALLOWED = b":0\r\n"  # decide.lua's reply for an allowed call
_PEEK = len(_ALLOWED) + 1  # one byte more: ":0" followed by anything is not the usual reply


def send(conn: Any, data: bytes) -> None:
    """Send a packed command on ``conn``: straight to its plain socket once it is connected and
    has no health checks to make, else by redis-py (which connects first, and checks)."""
    sock, checked = getattr(conn, "_sock", None), getattr(conn, "health_check_interval", 1)
    if type(sock) is not socket.socket or checked:
        conn.send_packed_command([data])
        return
    try:
        sock.sendall(data)
    except BaseException as exc:  # as redis-py: a command half sent leaves the connection useless
        conn.disconnect()
        _raise_as_redis_py(exc)


def reply(conn: Any) -> Any:
    """The reply to the command just sent on ``conn``, as redis-py's ``read_response`` gives
    it (and raising what it raises)."""
    sock = getattr(conn, "_sock", None)
    if type(sock) is socket.socket:  # a TLS socket cannot be peeked at
        try:
            waiting = sock.recv(_PEEK, socket.MSG_PEEK)
        except TimeoutError:  # as redis-py reports it (waiting again there would double the timeout)
            raise RedisTimeoutError("Timeout reading from socket") from None
        except OSError as exc:
            raise RedisConnectionError(f"Error while reading from socket: {exc.args}") from exc
        if waiting == _ALLOWED:
            sock.recv(len(_ALLOWED))
            return 0
    return conn.read_response()


async def asend(conn: Any, data: bytes) -> None:
    """``send`` on a ``redis.asyncio`` connection: written to its transport once it is connected,
    has nothing left to write and no health checks to make, else by redis-py (which connects
    first, and checks). What the socket does not take at once is waited for as redis-py waits
    (``socket_timeout``). A write the socket refuses closes the transport; the reply's read
    then raises redis-py's ``ConnectionError``."""
    writer = getattr(conn, "_writer", None)
    transport: Any = getattr(writer, "transport", None)
    if writer is None or not _idle(conn, transport):
        await conn.send_packed_command([data])
        return
    writer.write(data)
    if transport.get_write_buffer_size():  # the socket took part of it
        await _drained(conn, writer)


def _idle(conn: Any, transport: Any) -> bool:
    """Whether a command may go straight to ``transport``: open, nothing waiting to be written
    before it, no health check due (redis-py makes those)."""
    checked: Any = getattr(conn, "health_check_interval", 1)
    if transport is None or checked:
        return False
    return not transport.is_closing() and not transport.get_write_buffer_size()


async def _drained(conn: Any, writer: asyncio.StreamWriter) -> None:
    """Wait for ``writer`` to send what it holds, as redis-py's ``send_packed_command`` waits."""
    try:
        await asyncio.wait_for(writer.drain(), conn.socket_timeout)
    except BaseException as exc:  # as redis-py: a command half sent leaves the connection useless
        writer.transport.abort()  # (not redis-py's close, which would send the rest first)
        await conn.disconnect(nowait=True)
        _raise_as_redis_py(exc)


def _raise_as_redis_py(exc: BaseException) -> NoReturn:
    """Raise what redis-py raises when writing a command raised ``exc``."""
    if isinstance(exc, TimeoutError):
        raise RedisTimeoutError("Timeout writing to socket") from None
    if isinstance(exc, OSError):
        raise RedisConnectionError(f"Error while writing to socket. {exc}.") from exc
    raise exc
