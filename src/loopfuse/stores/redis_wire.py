"""The Redis store's round trips: each script run is one ``FCALL`` of a function the store loaded
(``EVALSHA`` where the server takes no functions), packed here and sent on a connection taken
straight from a pool, without redis-py's per-command layers (argument encoding, reply
callbacks, metrics), which cost about as much as a round trip on a local network.

The store's own pools (``Pool``, and ``AsyncPool`` per event loop) keep at most
``max_connections`` connections, most recently used first; a caller waits up to ``pool_timeout``
for a free one, then gets ``ConnectionError("No connection available.")`` as from redis-py's
blocking pool. A pool of a ``redis.Redis`` (or ``redis.asyncio.Redis``) a host passed serves as
well. A function or script Redis does not know (a restart, a ``FUNCTION FLUSH``) is loaded on
that connection and sent again; a server that refuses functions (Redis before 7.0, an ACL
without ``FUNCTION``, a read-only replica) gets the script as ``EVALSHA`` from then on (a refusal
that may pass, such as ``OOM``, fails that round trip only). A dropped connection is retried as
its ``retry`` says.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError, NoScriptError, OutOfMemoryError, ResponseError, TryAgainError

from .redis_reply import asend, reply, send

__all__ = ["AsyncPool", "Pool", "Script", "arun", "arun_command", "run", "run_command"]

_LIVE: weakref.WeakSet[Pool] = weakref.WeakSet()
# The end of one part of a command and the length line of the next, for the usual lengths
# (formatting them on every call cost as much as the rest of the packing).
_BULK = [b"\r\n$%d\r\n" % size for size in range(256)]


class Script:
    """One Lua script: its source, its SHA1 and the start of its ``EVALSHA`` command; given the
    Function ``library`` that holds it as ``function``, it runs as ``FCALL`` of that function
    (none of the script's definitions re-run per call) until the server refuses functions."""

    __slots__ = ("_eval_head", "_head", "library", "sha", "source")

    def __init__(self, source: str, library: str = "", function: str = "") -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode("utf-8")).hexdigest()
        self._eval_head = b"$7\r\nEVALSHA\r\n$40\r\n" + self.sha.encode("ascii") + b"\r\n"
        self.library = library if function else ""
        name = function.encode("ascii")
        self._head = b"$5\r\nFCALL\r\n$%d\r\n%b\r\n" % (len(name), name) if self.library else self._eval_head

    @property
    def as_function(self) -> bool:
        """Whether the script is sent as ``FCALL`` (else ``EVALSHA``)."""
        return self._head is not self._eval_head

    def scripts_only(self) -> None:
        """Send the script as ``EVALSHA`` from now on: the server has no functions (Redis before
        7.0) or refuses to load them (an ACL, a read-only replica)."""
        self._head = self._eval_head

    def packed(self, keys: Sequence[bytes], args: Sequence[bytes | int]) -> bytes:
        """``EVALSHA <sha>`` (or ``FCALL <function>``) ``<len(keys)> *keys *args`` in the Redis protocol."""
        count = len(keys)
        parts = [b"*%d\r\n%b$%d\r\n%d" % (3 + count + len(args), self._head, len(b"%d" % count), count)]
        for value in (*keys, *args):
            if isinstance(value, int):
                value = b"%d" % value
            size = len(value)
            parts += (_BULK[size] if size < 256 else b"\r\n$%d\r\n" % size), value
        parts.append(b"\r\n")
        return b"".join(parts)


def run(pool: Any, script: Script, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
    """Run ``script`` on a connection of ``pool`` (``get_connection``/``release``): its reply,
    or the error redis-py raises (``RedisError``, ``OSError``)."""
    conn = pool.get_connection()
    try:  # (the connection connects on its first send, a failure there retried as any other)
        return conn.retry.call_with_retry(
            lambda: _exchange(conn, script, keys, args), lambda _: conn.disconnect()
        )
    finally:
        pool.release(conn)


def _exchange(conn: Any, script: Script, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
    """Send the script, read its reply (loading it first if the server lacks it); a connection
    left with a reply unread is closed."""
    try:
        as_function = script.as_function  # as this command goes: another thread may switch it
        send(conn, script.packed(keys, args))
        try:
            return reply(conn)
        except ResponseError as exc:
            if not _mendable(script, exc, as_function):
                raise
            _load(conn, script)
            send(conn, script.packed(keys, args))
            return reply(conn)
    except ResponseError:
        raise  # an error reply: the connection is fine
    except BaseException:
        conn.disconnect()
        raise


def _mendable(script: Script, exc: ResponseError, as_function: bool) -> bool:
    """Whether loading ``script`` and sending it again mends the error reply ``exc`` to a command
    sent as ``FCALL`` (``as_function``) or ``EVALSHA``: the server lacks it, or takes no ``FCALL``
    (then the script goes as ``EVALSHA`` from now on). Judged by how the command went, not by
    ``script`` now: concurrent round trips may have switched it since."""
    if as_function and _refused(exc):
        script.scripts_only()
        return True
    return _missing(exc, as_function)


def _missing(exc: ResponseError, as_function: bool) -> bool:
    """Whether ``exc`` says the server lacks the script as it was sent (no such script or
    function: a restart, a flush), which loading it mends."""
    return isinstance(exc, NoScriptError) or (as_function and "Function not found" in str(exc))


def _refused(exc: ResponseError) -> bool:
    """Whether ``exc`` says the server takes no ``FCALL`` (Redis before 7.0, an ACL without it)."""
    return isinstance(exc, NoPermissionError) or str(exc).startswith("unknown command")


def _load(conn: Any, script: Script) -> None:
    """Load ``script`` on ``conn``'s server: its library, or the script alone when the server
    takes no library (the script is sent as ``EVALSHA`` from then on). An error that may pass
    (``_passing``) fails this round trip only: the next loads the library again."""
    if script.as_function:
        conn.send_command("FUNCTION", "LOAD", "REPLACE", script.library)
        try:
            conn.read_response()
            return
        except ResponseError as exc:
            if _passing(exc):
                raise
            script.scripts_only()
    conn.send_command("SCRIPT", "LOAD", script.source)
    conn.read_response()


def _passing(exc: ResponseError) -> bool:
    """Whether ``exc``, the server's reply to ``FUNCTION LOAD``, says nothing of functions: out of
    memory, busy with a script, a failover under way."""
    return isinstance(exc, OutOfMemoryError | TryAgainError) or str(exc).startswith(("BUSY", "MASTERDOWN"))


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


async def arun_command(pool: Any, *args: Any) -> Any:
    """``run_command`` on an asyncio pool."""
    return await _aon_connection(pool, lambda conn: _acommand(conn, args))


async def _aon_connection(
    pool: Any, exchange: Callable[[Any], Awaitable[Any]], unsent: Callable[[], None] | None = None
) -> Any:
    """``exchange`` on a connection of ``pool``, retried as the connection's ``retry`` says (as in
    ``run``: the connection connects on its first send). ``unsent`` hears of a cancellation
    while waiting for the connection or for Redis's handshake on it, before anything was written."""
    try:
        conn = await pool.get_connection()
    except asyncio.CancelledError:
        if unsent is not None:
            unsent()
        raise
    try:
        if unsent is not None and not conn.is_connected:
            await _connected(conn, unsent)

        async def fail(_: BaseException) -> None:
            await conn.disconnect()

        return await conn.retry.call_with_retry(lambda: _answered(conn, exchange(conn)), fail)
    finally:
        await pool.release(conn)


async def _connected(conn: Any, unsent: Callable[[], None]) -> None:
    """Connect ``conn`` before anything is written on it, so that ``unsent`` hears of a
    cancellation meanwhile (a failure to connect raises, retried as redis-py's ``connect`` is)."""
    try:
        await conn.connect()
    except asyncio.CancelledError:
        unsent()
        raise


async def _acommand(conn: Any, args: tuple[Any, ...]) -> Any:
    await conn.send_command(*args)
    return await conn.read_response()


async def _answered(conn: Any, exchange: Awaitable[Any]) -> Any:
    """``exchange``'s reply; a connection the exchange failed on (for anything but an error
    reply from Redis, such as a timeout or a cancellation mid-reply) is dropped, out of step."""
    try:
        return await exchange
    except ResponseError:
        raise
    except BaseException:
        await conn.disconnect(nowait=True)
        raise


async def arun(
    pool: Any,
    script: Script,
    keys: Sequence[bytes],
    args: Sequence[bytes | int],
    unsent: Callable[[], None] | None = None,
) -> Any:
    """``run`` on an asyncio pool (``AsyncPool`` or a ``redis.asyncio`` client's); ``unsent``
    hears of a cancellation before the script was sent (``_aon_connection``)."""
    return await _aon_connection(pool, lambda conn: _aexchange(conn, script, keys, args), unsent)


async def _aexchange(conn: Any, script: Script, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
    as_function = script.as_function  # as this command goes (see _mendable)
    await asend(conn, script.packed(keys, args))
    try:
        return await conn.read_response()
    except ResponseError as exc:
        if not _mendable(script, exc, as_function):
            raise
        await _aload(conn, script)
        await asend(conn, script.packed(keys, args))
        return await conn.read_response()


async def _aload(conn: Any, script: Script) -> None:
    """``_load`` on an asyncio connection."""
    if script.as_function:
        await conn.send_command("FUNCTION", "LOAD", "REPLACE", script.library)
        try:
            await conn.read_response()
            return
        except ResponseError as exc:
            if _passing(exc):
                raise
            script.scripts_only()
    await conn.send_command("SCRIPT", "LOAD", script.source)
    await conn.read_response()


class Pool:
    """The store's connections: at most ``size``, the most recently used first; a caller
    waits up to ``timeout`` seconds for a free one. ``make`` opens a connection (unconnected:
    it connects on first use). ``ready``, asked after such a wait, raises when the store found
    Redis down meanwhile: the waiter goes without a round trip (of ``timeout`` more)."""

    def __init__(
        self, make: Callable[[], Any], size: int, timeout: float, ready: Callable[[], None] = lambda: None
    ) -> None:
        self._make, self._size, self._timeout, self._ready = make, size, timeout, ready
        self._reset()
        _LIVE.add(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()  # taken directly: a Condition's own ``with`` is Python code
        self._free = threading.Condition(self._lock)
        self._idle: list[Any] = []
        self._count = 0
        self._waiting = 0  # callers waiting for a connection (a notify costs ~1 us even for none)
        self._closed = False

    def get_connection(self) -> Any:
        with self._lock:
            if self._closed:  # at once: a closed guard's calls must not wait for a connection
                raise RedisConnectionError("the store is closed")
            if not self._idle and self._count >= self._size:
                self._wait()
                self._still_up()
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
            self._waiting += 1
            try:
                self._free.wait(left)
            finally:
                self._waiting -= 1

    def _still_up(self) -> None:
        """After a wait (under the lock): ``ready``, its refusal passing the free connection on."""
        try:
            self._ready()
        except BaseException:
            if self._waiting:
                self._free.notify()
            raise

    def release(self, conn: Any) -> None:
        with self._lock:
            if self._closed:
                self._count -= 1
                conn.disconnect()
            else:
                self._idle.append(conn)
            if self._waiting:
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

    def __init__(
        self, make: Callable[[], Any], size: int, timeout: float, ready: Callable[[], None] = lambda: None
    ) -> None:
        self._make, self._size, self._timeout, self._ready = make, size, timeout, ready
        self._idle: list[Any] = []
        self._count = 0
        self._free = asyncio.Condition()
        self._waiting = 0  # callers waiting for a connection (as ``Pool``: no notify for none)
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
        loop, deadline = asyncio.get_running_loop(), 0.0
        while not self._idle and self._count >= self._size:  # again after each wait: a wait
            deadline = deadline or loop.time() + self._timeout  # cancelled late may return early
            await self._wait(deadline - loop.time())
        if deadline:
            await self._still_up()
        if self._idle:
            return self._idle.pop()
        self._count += 1
        return self._make()

    async def _wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a connection to be released."""
        self._waiting += 1
        try:
            if timeout <= 0:
                raise TimeoutError
            async with self._free:
                await asyncio.wait_for(self._free.wait_for(self._available), timeout)
        except TimeoutError:
            raise RedisConnectionError("No connection available.") from None
        finally:
            self._waiting -= 1

    async def _still_up(self) -> None:
        """``Pool._still_up`` for the loop."""
        try:
            self._ready()
        except BaseException:
            if self._waiting:
                async with self._free:
                    self._free.notify()
            raise

    def _available(self) -> bool:
        return bool(self._idle) or self._count < self._size

    async def release(self, conn: Any) -> None:
        if self._closed:
            await conn.disconnect()
            return
        self._idle.append(conn)
        if self._waiting:
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
