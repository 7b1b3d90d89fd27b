"""The guard's store lifecycle: ``forget``, ``flush`` and ``close``, and their async forms."""

from __future__ import annotations

from typing import Any

from ._agents import AgentIdentityError
from ._overrides import Overrides
from ._rounds import Rounds
from .incidents import logger
from .stores.base import Store, StoreUnavailableError

__all__ = ["StoreLifecycle"]


class StoreLifecycle:
    """The store methods of ``Guard`` (which provides what is declared here)."""

    _store: Store
    _rounds: Rounds
    _overrides: Overrides

    def forget(self, agent: Any) -> None:
        """Drop everything the guard keeps for ``agent``."""
        self._rounds.forget(agent)
        self._overrides.forget(agent)
        try:
            self._store.forget(agent)
        except AgentIdentityError:
            return  # an agent the store cannot key has no state there
        except StoreUnavailableError as exc:
            logger.warning("loopfuse: could not forget an agent: %s", exc)

    async def aforget(self, agent: Any) -> None:
        """``forget`` for async hosts (the Redis store never blocks the event loop). A store
        written before ``aforget`` existed is asked with its ``forget``."""
        self._rounds.forget(agent)
        self._overrides.forget(agent)
        aforget = getattr(self._store, "aforget", None)
        try:
            if aforget is None:
                self._store.forget(agent)
            else:
                await aforget(agent)
        except AgentIdentityError:
            return
        except StoreUnavailableError as exc:
            logger.warning("loopfuse: could not forget an agent: %s", exc)

    def flush(self) -> None:
        """Send the results the store holds back, now. A Redis store sends each reported result
        with the agent's next check (one round trip per tool call), or after ``[store]
        result_flush_delay`` seconds without one: flush before another process must see them.
        Nothing to do on ``memory://``. Never raises: a result the store cannot take is counted
        in ``stats()["fail_open"]["store"]``, as by ``record_result``."""
        flush = getattr(self._store, "flush", None)  # a store object written before flush existed
        if flush is not None:
            flush()

    async def aflush(self) -> None:
        """``flush`` from async code (on Redis, on the asyncio client)."""
        aflush = getattr(self._store, "aflush", None)
        if aflush is not None:
            await aflush()

    def close(self) -> None:
        """Send the held results (``flush``) and release the store's connections (a Redis
        store's pool); the guard is unusable after."""
        self._store.close()

    async def aclose(self) -> None:
        """``close`` from async code: also closes the asyncio connections ``acheck`` opened."""
        await self._store.aclose()
