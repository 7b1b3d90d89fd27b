"""Where agent state lives: in process (``memory://``) or in Redis (``redis://``, ``rediss://``,
``unix://``). ``open_store`` picks one by URL; a store object built by the host (for example
``RedisStore.from_client(client)``) is bound to the guard's breakers instead."""

from __future__ import annotations

from typing import Any

from ..checks import STORE_SCHEMES, redacted
from ..errors import ConfigError
from .base import ALLOWED, Outcome, Store, StoreSpec, StoreUnavailableError
from .memory import MemoryStore

__all__ = ["ALLOWED", "MemoryStore", "Outcome", "Store", "StoreSpec", "StoreUnavailableError", "open_store"]


def open_store(target: str | Any, spec: StoreSpec) -> Store:
    """The store for ``target``: a URL, or an object with ``bind(spec)`` returning a store,
    or a ready ``Store`` used as it is."""
    if isinstance(target, str):
        return _from_url(target, spec)
    bind = getattr(target, "bind", None)
    if callable(bind):
        store: Store = bind(spec)
        return store
    if callable(getattr(target, "decide", None)):
        return target  # type: ignore[no-any-return]
    raise ConfigError(
        f"store = {type(target).__name__} object is not allowed: expected a URL "
        f"({', '.join(STORE_SCHEMES)}) or a store object such as RedisStore.from_client(client)"
    )


def _from_url(url: str, spec: StoreSpec) -> Store:
    if url == "memory://" or url == "memory":
        return MemoryStore(
            spec.breakers,
            window=spec.window,
            max_agents=spec.max_agents,
            idle_seconds=spec.idle_seconds,
            abort_after=spec.abort_after,
            clock=spec.clock,
        )
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisStore

        return RedisStore.from_url(url).bind(spec)
    allowed = ", ".join(STORE_SCHEMES)
    shown = redacted(url)
    raise ConfigError(f"[store] url = {shown!r} is not allowed: expected a URL starting with {allowed}")
