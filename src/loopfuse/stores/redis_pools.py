"""The Redis store's own connection pools: ``Pool``, and ``AsyncPool`` per event loop.

Each keeps at most ``max_connections`` connections, most recently used first; a caller waits up
to ``pool_timeout`` for a free one, then gets ``ConnectionError("No connection available.")`` as
from redis-py's blocking pool. After such a wait the pool asks the store whether Redis was found
down meanwhile (``ready``), so that queued callers fail open at once instead of each making a
round trip of its own. A forked child opens its own connections.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["AsyncPool", "Pool"]

_LIVE: weakref.WeakSet[Pool] = weakref.WeakSet()


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
