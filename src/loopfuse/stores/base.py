"""What every store answers: the outcome of one check, and the store protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..calls import CallKey
from ..decision import Denial

__all__ = ["ALLOWED", "Outcome", "Store"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """A store's verdict: the denial (None when allowed), whether it is the agent's first
    denial of that kind (for the incident log), and whether the agent must be stopped."""

    denial: Denial | None
    first: bool = False
    escalate: bool = False


ALLOWED = Outcome(None)


class Store(Protocol):
    """Keeps agent state and evaluates every breaker for one call atomically.

    ``decide`` records the call only if every breaker allows it; it returns None when
    the agent identity cannot be keyed (the guard then fails open).
    """

    url: str

    def decide(self, agent: Any, call: CallKey) -> Outcome | None: ...

    async def adecide(self, agent: Any, call: CallKey) -> Outcome | None: ...

    def forget(self, agent: Any) -> None: ...

    def agent_count(self) -> int: ...

    def close(self) -> None: ...
