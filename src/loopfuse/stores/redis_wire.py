"""The Redis store's round trips: each script run is one ``EVALSHA``, packed here and sent on a
connection taken straight from a pool, without redis-py's per-command layers (argument encoding,
reply callbacks, metrics), which cost about as much as a round trip on a local network.

The store's own pools (``Pool``, and ``AsyncPool`` per event loop) keep at most
``max_connections`` connections, most recently used first; a caller waits up to ``pool_timeout``
for a free one, then gets ``ConnectionError("No connection available.")`` as from redis-py's
blocking pool. A pool of a ``redis.Redis`` (or ``redis.asyncio.Redis``) a host passed serves as
well. A script Redis does not know (``NOSCRIPT``: a restart, a ``SCRIPT FLUSH``) is loaded on
that connection and sent again; a dropped connection is retried as its ``retry`` says.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

__all__ = ["AsyncPool", "Pool", "Script", "arun", "run", "run_command"]

_LIVE: weakref.WeakSet[Pool] = weakref.WeakSet()


class Script:
    """One Lua script: its source, its SHA1 and the start of its ``EVALSHA`` command."""

    __slots__ = ("_head", "sha", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode("utf-8")).hexdigest()
        self._head = b"$7\r\nEVALSHA\r\n$40\r\n" + self.sha.encode("ascii") + b"\r\n"

    def packed(self, keys: Sequence[bytes], args: Sequence[bytes | int]) -> bytes:
        """``EVALSHA <sha> <len(keys)> *keys *args`` in the Redis protocol."""
        count = b"%d" % len(keys)
        parts = [b"*%d\r\n%b$%d\r\n%b\r\n" % (3 + len(keys) + len(args), self._head, len(count), count)]
        for value in (*keys, *args):
            data = b"%d" % value if isinstance(value, int) else value
            parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
        return b"".join(parts)


def run(pool: Any, script: Script, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
    """Run ``script`` on a connection of ``pool`` (``get_connection``/``release``): its reply,
    or the error redis-py raises (``RedisError``, ``OSError``)."""
    packed = script.packed(keys, args)
    conn = pool.get_connection()
    try:
        conn.connect()
        return conn.retry.call_with_retry(
            lambda: _exchange(conn, script, packed), lambda _: conn.disconnect()
        )
    finally:
        pool.release(conn)


def _exchange(conn: Any, script: Script, packed: bytes) -> Any:
    """Send ``packed``, read its reply; a connection left with a reply unread is closed."""
    try:
        conn.send_packed_command([packed])
        try:
            return conn.read_response()
        except NoScriptError:
            conn.send_command("SCRIPT", "LOAD", script.source)
            conn.read_response()
            conn.send_packed_command([packed])
            return conn.read_response()
    except ResponseError:
        raise  # an error reply: the connection is fine
    except BaseException:
        conn.disconnect()
        raise


def run_command(pool: Any, *args: Any) -> Any:
    """One plain command (``DEL``, ``SCAN``) on a connection of ``pool``."""
    conn = pool.get_connection()
    try:
        conn.connect()
        return conn.retry.call_with_retry(lambda: _command(conn, args), lambda _: conn.disconnect())
    finally:
        pool.release(conn)


def _command(conn: Any, args: tuple[Any, ...]) -> Any:
    try:
        conn.send_command(*args)
        return conn.read_response()
    except ResponseError:
        raise
    except BaseException:
        conn.disconnect()
        raise


async def arun(pool: Any, script: Script, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
    """``run`` on an asyncio pool (``AsyncPool`` or a ``redis.asyncio`` client's)."""
    packed = script.packed(keys, args)
    conn = await pool.get_connection()
    try:
        await conn.connect()

        async def fail(_: BaseException) -> None:
            await conn.disconnect()

        return await conn.retry.call_with_retry(lambda: _aexchange(conn, script, packed), fail)
    finally:
        await pool.release(conn)


async def _aexchange(conn: Any, script: Script, packed: bytes) -> Any:
    try:
        await conn.send_packed_command([packed])
        try:
            return await conn.read_response()
        except NoScriptError:
            await conn.send_command("SCRIPT", "LOAD", script.source)
            await conn.read_response()
            await conn.send_packed_command([packed])
            return await conn.read_response()
    except ResponseError:
        raise
    except BaseException:
        await conn.disconnect(nowait=True)
        raise


class Pool:
    """The store's connections: at most ``size``, the most recently used first; a caller
    waits up to ``timeout`` seconds for a free one. ``make`` opens a connection (unconnected:
    it connects on first use)."""

    def __init__(self, make: Callable[[], Any], size: int, timeout: float) -> None:
        self._make, self._size, self._timeout = make, size, timeout
        self._reset()
        _LIVE.add(self)

    def _reset(self) -> None:
        self._free = threading.Condition(threading.Lock())
        self._idle: list[Any] = []
        self._count = 0
        self._closed = False

    def get_connection(self) -> Any:
        with self._free:
            if not self._idle and self._count >= self._size:
                self._wait()
            if self._idle:
                return self._idle.pop()
            self._count += 1
        return self._make()

    def _wait(self) -> None:
        """Wait (under the lock) for a connection to come back, ``timeout`` seconds at most."""
        deadline = time.monotonic() + self._timeout
        while not self._idle and self._count >= self._size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RedisConnectionError("No connection available.")
            self._free.wait(left)

    def release(self, conn: Any) -> None:
        with self._free:
            if self._closed:
                conn.disconnect()
            else:
                self._idle.append(conn)
            self._free.notify()

    def disconnect(self) -> None:
        """Close the idle connections, and those in use as they come back."""
        with self._free:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.disconnect()


class AsyncPool:
    """``Pool`` for one event loop: ``make`` opens a ``redis.asyncio`` connection. The
    connections close when the loop's async generators are shut down (``asyncio.run`` does it
    on its way out), or at ``aclose``."""

    def __init__(self, make: Callable[[], Any], size: int, timeout: float) -> None:
        self._make, self._size, self._timeout = make, size, timeout
        self._idle: list[Any] = []
        self._count = 0
        self._free = asyncio.Condition()
        self._closed = False
        self._watch: AsyncIterator[None] | None = None

    async def watch_loop(self) -> None:
        """Close the connections when the running loop shuts down its async generators."""
        self._watch = self._until_shutdown()
        await anext(self._watch)

    async def _until_shutdown(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.aclose()

    async def get_connection(self) -> Any:
        if not self._idle and self._count >= self._size:
            async with self._free:
                try:
                    await asyncio.wait_for(self._free.wait_for(self._available), self._timeout)
                except TimeoutError:
                    raise RedisConnectionError("No connection available.") from None
        if self._idle:
            return self._idle.pop()
        self._count += 1
        return self._make()

    def _available(self) -> bool:
        return bool(self._idle) or self._count < self._size

    async def release(self, conn: Any) -> None:
        if self._closed:
            await conn.disconnect()
            return
        self._idle.append(conn)
        async with self._free:
            self._free.notify()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.disconnect()


def _reset_in_child() -> None:
    """A forked child opens its own connections: its parent's stay the parent's."""
    for pool in list(_LIVE):
        pool._reset()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_reset_in_child)
