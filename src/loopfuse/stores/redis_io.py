"""How the Redis store reaches Redis: its scripts and the few plain commands it sends.

``WireIO`` packs each ``EVALSHA`` itself and runs it on a connection of a pool (``redis_wire``):
the store's own pool for a URL, or the pool of the ``redis.Redis`` a host passed. Any other
client (``RedisCluster``, a single-connection client) gets ``ClientIO``: redis-py's scripts on
that client. ``AsyncWireIO`` and ``AsyncClientIO`` are the same for ``redis.asyncio``.
Keys are given as text and encoded as the client encodes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import redis
import redis.asyncio as aredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from ..checks import check_redis_database, redacted
from ..errors import ConfigError
from .redis_pool import pool_options
from .redis_pools import AsyncPool, Pool
from .redis_wire import Script, arun, arun_command, run, run_command

_KEYS_KEPT = 4096  # encoded agent keys kept by a WireIO (a check costs a dict lookup, not an encoding)

__all__ = [
    "AsyncClientIO",
    "AsyncWireIO",
    "ClientIO",
    "WireIO",
    "async_io_for",
    "io_for",
    "open_async_io",
    "open_io",
]


class _Wire:
    """What ``WireIO`` and ``AsyncWireIO`` share: the pool, whether the store owns it, and agent
    keys encoded as the client encodes them (those of the agents seen last kept)."""

    def __init__(self, pool: Any, encode: Callable[[str], bytes], own: bool) -> None:
        self._pool, self._encode, self._own = pool, encode, own
        self._encoded: dict[str, bytes] = {}

    def _encoded_keys(self, keys: Sequence[str]) -> list[bytes]:
        return [self._encoded.get(key) or self._encoded_key(key) for key in keys]

    def _encoded_key(self, key: str) -> bytes:
        if len(self._encoded) >= _KEYS_KEPT:
            self._encoded.clear()
        encoded = self._encoded[key] = self._encode(key)
        return encoded


class WireIO(_Wire):
    """Scripts as hand-packed ``EVALSHA`` on ``pool``'s connections; ``own``: the store opened
    the pool (and closes it)."""

    def script(self, script: Script, keys: Sequence[str], args: Sequence[bytes | int]) -> Any:
        return run(self._pool, script, self._encoded_keys(keys), args)

    def delete(self, keys: Sequence[str]) -> None:
        run_command(self._pool, "DEL", *keys)

    def count(self, pattern: str) -> int:
        """How many keys match ``pattern`` (one ``SCAN`` pass)."""
        total, cursor = 0, b"0"
        while True:
            cursor, found = run_command(self._pool, "SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
            total += len(found)
            if int(cursor) == 0:
                return total

    def close(self) -> None:
        if self._own:
            self._pool.disconnect()


class ClientIO:
    """Scripts as redis-py runs them on ``client`` (any client: a cluster too)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._scripts: dict[str, Any] = {}

    def script(self, script: Script, keys: Sequence[str], args: Sequence[bytes | int]) -> Any:
        return _registered(self._scripts, self._client, script)(keys=keys, args=args, client=self._client)

    def delete(self, keys: Sequence[str]) -> None:
        self._client.delete(*keys)

    def count(self, pattern: str) -> int:
        return sum(1 for _ in self._client.scan_iter(match=pattern, count=1000))

    def close(self) -> None:
        """The host's client stays open."""


class AsyncWireIO(_Wire):
    """``WireIO`` on an asyncio pool: the store's own for one loop, or a host's client's."""

    async def script(
        self,
        script: Script,
        keys: Sequence[str],
        args: Sequence[bytes | int],
        unsent: Callable[[], None] | None = None,
    ) -> Any:
        """The script's reply; ``unsent`` hears of a cancellation before it was sent."""
        return await arun(self._pool, script, self._encoded_keys(keys), args, unsent)

    async def delete(self, keys: Sequence[str]) -> None:
        await arun_command(self._pool, "DEL", *keys)

    async def aclose(self) -> None:
        if self._own:
            await self._pool.aclose()


class AsyncClientIO:
    """``ClientIO`` on a ``redis.asyncio`` client (a cluster too)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._scripts: dict[str, Any] = {}

    async def script(
        self,
        script: Script,
        keys: Sequence[str],
        args: Sequence[bytes | int],
        unsent: Callable[[], None] | None = None,
    ) -> Any:
        """The script's reply (``unsent`` is never called: redis-py does not say whether a
        cancelled command went out)."""
        return await _registered(self._scripts, self._client, script)(keys=keys, args=args)

    async def delete(self, keys: Sequence[str]) -> None:
        await self._client.delete(*keys)

    async def aclose(self) -> None:
        """The host's client stays open."""


def _registered(scripts: dict[str, Any], client: Any, script: Script) -> Any:
    """redis-py's ``Script`` object for ``script`` on ``client``, registered once."""
    found = scripts.get(script.sha)
    if found is None:
        found = scripts[script.sha] = client.register_script(script.source)
    return found


def io_for(client: Any) -> WireIO | ClientIO:
    """The way to a host's sync client: its pool when it is a plain ``redis.Redis``."""
    pool = getattr(client, "connection_pool", None)
    if type(client) is redis.Redis and client.connection is None and getattr(pool, "cache", None) is None:
        encoder = client.get_encoder()
        return WireIO(pool, encoder.encode, own=False)
    return ClientIO(client)


def async_io_for(client: Any) -> AsyncWireIO | AsyncClientIO:
    """The way to a host's asyncio client: its pool when it is a plain ``redis.asyncio.Redis``."""
    pool = getattr(client, "connection_pool", None)
    if type(client) is aredis.Redis and client.connection is None and getattr(pool, "cache", None) is None:
        encoder: Any = client.get_encoder()  # type: ignore[no-untyped-call]
        return AsyncWireIO(pool, encoder.encode, own=False)
    return AsyncClientIO(client)


def open_io(url: str, defaults: dict[str, Any], ready: Callable[[], None] = lambda: None) -> WireIO:
    """The store's own pool to ``url``: ``defaults`` (``[store]``) overridden by the URL's
    query (``redis_pool.pool_options``); one immediate retry on a dropped connection; ``ready``
    asked after a wait for a connection (``Pool``)."""
    base, size, timeout = _base_pool(redis.ConnectionPool, url, defaults)
    base.connection_kwargs["retry"] = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    pool = Pool(lambda: base.connection_class(**base.connection_kwargs), size, timeout, ready)
    return WireIO(pool, base.get_encoder().encode, own=True)


async def open_async_io(
    url: str, defaults: dict[str, Any], ready: Callable[[], None] = lambda: None
) -> AsyncWireIO:
    """``open_io`` for the running event loop; its connections close when the loop shuts
    down its async generators (``asyncio.run`` does) or at ``aclose``."""
    base, size, timeout = _base_pool(aredis.ConnectionPool, url, defaults)
    base.connection_kwargs["retry"] = AsyncRetry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    pool = AsyncPool(lambda: base.connection_class(**base.connection_kwargs), size, timeout, ready)
    await pool.watch_loop()
    return AsyncWireIO(pool, base.get_encoder().encode, own=True)


def _base_pool(kind: Any, url: str, defaults: dict[str, Any]) -> tuple[Any, int, float]:
    """A redis-py pool that only parses ``url`` and holds the connections' settings (it opens
    none), the pool size and how long a caller waits for a free connection."""
    url, options = pool_options(url, defaults)
    size, timeout = options.pop("max_connections"), options.pop("timeout")
    check_redis_database(url)
    try:
        base = kind.from_url(url, **options)
        base.connection_class(**base.connection_kwargs)  # makes no connection: checks the options
    except (TypeError, ValueError, redis.RedisError) as exc:  # an unknown query option, a bad port
        raise ConfigError(f"[store] url = {redacted(url)!r} is not allowed: {_problem(exc)}") from None
    return base, size, timeout


def _problem(exc: Exception) -> str:
    unknown = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
    return f"redis-py has no connection option {unknown[1]!r}" if unknown else str(exc)
