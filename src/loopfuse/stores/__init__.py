"""Where agent state lives: in process (``memory://``) or in Redis (``redis://``, ``rediss://``,
``unix://``). ``open_store`` picks one by URL; a store object built by the host (for example
``RedisStore.from_client(client)``) is bound to the guard's breakers instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from .._calls import CallKey
from .._state import ToolResult
from ..checks import STORE_SCHEMES, redacted
from ..errors import ConfigError
from .base import ALLOWED, Outcome, Store, StoreSpec, StoreUnavailableError
from .memory import MemoryStore

if TYPE_CHECKING:
    from ..breakers import Breaker
    from ..config import GuardConfig

__all__ = [
    "ALLOWED",
    "MemoryStore",
    "Outcome",
    "Store",
    "StoreSpec",
    "StoreUnavailableError",
    "open_store",
    "store_spec",
]


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
        return _complete(target)
    raise ConfigError(
        f"store = {type(target).__name__} object is not allowed: expected a URL "
        f"({', '.join(STORE_SCHEMES)}) or a store object such as RedisStore.from_client(client)"
    )


_LATER_METHODS = ("record_result", "arecord_result", "aclose")


def _complete(store: Any) -> Store:
    """``store`` itself, or, for a store written before the protocol had ``record_result``,
    ``arecord_result`` and ``aclose``, a view that supplies them (results are ignored)."""
    if all(callable(getattr(store, name, None)) for name in _LATER_METHODS):
        return store  # type: ignore[no-any-return]
    return cast(Store, _Completed(store))


class _Completed:
    """A store without the later methods, completed: results ignored, ``aclose`` is ``close``."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.url: str = store.url

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def record_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        observe = getattr(self._store, "record_result", None)
        return observe is None or observe(agent, call, result) is not False

    async def arecord_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        return self.record_result(agent, call, result)

    async def aclose(self) -> None:
        aclose = getattr(self._store, "aclose", None)
        await aclose() if aclose is not None else self._store.close()


def _from_url(url: str, spec: StoreSpec) -> Store:
    if url == "memory://" or url == "memory":
        return MemoryStore(
            spec.breakers,
            window=spec.window,
            max_agents=spec.max_agents,
            idle_seconds=spec.idle_seconds,
            abort_after=spec.abort_after,
            clock=spec.clock,
            warners=spec.warners,
        )
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisStore

        return RedisStore.from_url(url).bind(spec)
    allowed = ", ".join(STORE_SCHEMES[1:])
    shown = redacted(url)
    raise ConfigError(
        f"[store] url = {shown!r} is not allowed: expected memory:// (nothing after it), or a URL "
        f"starting with {allowed}"
    )


def store_spec(
    config: GuardConfig,
    breakers: tuple[Breaker, ...],
    clock: Callable[[], float],
    lost: Callable[[str, Any, StoreUnavailableError], None],
    warners: tuple[Breaker, ...] = (),
) -> StoreSpec:
    """What a store needs from a guard's configuration; ``lost`` hears of results it dropped."""
    settings, store = config.guard, config.store
    return StoreSpec(
        breakers,
        window=config.circuit_breaker.window,
        abort_after=settings.abort_after_denials,
        max_agents=settings.max_agents,
        idle_seconds=store.idle_expiry or settings.agent_idle_seconds,
        prefix=store.prefix,
        timeout=store.timeout,
        connect_timeout=store.connect_timeout,
        max_connections=store.max_connections,
        pool_timeout=store.pool_timeout,
        clock=clock,
        result_flush_delay=store.result_flush_delay,
        redis_functions=store.redis_functions,
        warners=warners,
        on_result_lost=lost,
    )
