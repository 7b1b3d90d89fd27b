"""What every store answers: the outcome of one check, and the store protocol."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .._calls import CallKey
from .._state import ToolResult
from ..decision import Denial

if TYPE_CHECKING:
    from ..breakers import Breaker

__all__ = ["ALLOWED", "Outcome", "Store", "StoreSpec", "StoreUnavailableError"]


class StoreUnavailableError(Exception):
    """The store could not answer (unreachable, too slow, refused the command).

    The guard catches it and applies its ``on_store_error`` policy; it never reaches
    the host. The message names the store and the failure, never a call's arguments.
    """


@dataclass(frozen=True)
class StoreSpec:
    """What a store needs from the guard: its breakers in order and the bookkeeping limits.

    A store that sends results later than ``record_result`` (Redis: with the agent's next check,
    or after ``result_flush_delay`` seconds) calls ``on_result_lost(tool, agent, error)`` for each
    result it could not deliver, as the guard handles a failed ``record_result``."""

    breakers: tuple[Breaker, ...]
    window: int
    abort_after: int | None
    max_agents: int = 100_000
    idle_seconds: float = 86_400.0
    prefix: str = "loopfuse:"
    timeout: float = 0.25
    connect_timeout: float = 1.0
    max_connections: int = 20
    pool_timeout: float = 1.0
    clock: Callable[[], float] = field(default=time.monotonic)
    result_flush_delay: float = 0.5
    redis_functions: bool = True  # Redis: run the scripts as FCALL of a Function library
    on_result_lost: Callable[[str, Any, StoreUnavailableError], None] | None = None
    warners: tuple[Breaker, ...] = ()  # breakers' copies at their warn_at (breakers.build_warners)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A store's verdict: the denial (None when allowed), whether it is the agent's first
    denial of that kind (for the incident log), and whether the agent must be stopped.

    ``escalation_start`` is true on the denial that escalates the agent (its
    ``abort_after``-th in a row) and false on the later ones of the same run of denials, so
    that escalation is reported once per episode; None when the store does not tell (every
    escalated denial is then reported)."""

    denial: Denial | None
    first: bool = False
    escalate: bool = False
    escalation_start: bool | None = None
    warning: Denial | None = None  # an allowed call a warner would deny (``[...] warn_at``)


ALLOWED = Outcome(None)


class Store(Protocol):
    """Keeps agent state and evaluates every breaker for one call atomically.

    ``decide`` records the call only if every breaker allows it; it returns None when
    the agent identity cannot be keyed (the guard then fails open). ``record_result``
    lets the breakers observe what an allowed call returned; False when the agent cannot
    be keyed. Any method may raise ``StoreUnavailableError``; the async ones never block
    the event loop on the network.
    """

    url: str

    def decide(self, agent: Any, call: CallKey) -> Outcome | None: ...

    async def adecide(self, agent: Any, call: CallKey) -> Outcome | None: ...

    def note_invalid(self, agent: Any) -> int | None:
        """One more invalid turn: the agent's invalid turns since its last allowed call."""
        ...

    async def anote_invalid(self, agent: Any) -> int | None: ...

    def record_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool: ...

    async def arecord_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool: ...

    def forget(self, agent: Any) -> None: ...

    async def aforget(self, agent: Any) -> None: ...

    def agent_count(self) -> int: ...

    def flush(self) -> None:
        """Send the results held for a later round trip (nothing to do in process)."""

    async def aflush(self) -> None: ...

    def close(self) -> None: ...

    async def aclose(self) -> None: ...
