"""The Redis store's round trips: each script run is one ``FCALL`` of a function the store loaded
(``EVALSHA`` where the server takes no functions), packed here and sent on a connection taken
straight from a pool, without redis-py's per-command layers (argument encoding, reply
callbacks, metrics), which cost about as much as a round trip on a local network.

The pools are the store's own (``redis_pools``) or, a host's ``redis.Redis`` (or
``redis.asyncio.Redis``), redis-py's. A function or script Redis does not know (a restart, a ``FUNCTION FLUSH``) is loaded on
that connection and sent again; a server that refuses functions (Redis before 7.0, an ACL
without ``FUNCTION``, a read-only replica) gets the script as ``EVALSHA`` from then on (a refusal
that may pass, such as ``OOM``, fails that round trip only). A dropped connection is retried as
its ``retry`` says.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from redis.exceptions import NoPermissionError, NoScriptError, OutOfMemoryError, ResponseError, TryAgainError

from .redis_pools import AsyncPool, Pool  # where they were defined before: kept importable
from .redis_reply import asend, reply, send

__all__ = ["AsyncPool", "Pool", "Script", "arun", "arun_command", "run", "run_command"]

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
