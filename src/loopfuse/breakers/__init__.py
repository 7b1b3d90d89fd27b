"""Breakers: pure decisions over one agent's state, no I/O.

Each breaker answers ``check(state, call)`` with a ``Denial`` or ``None`` without
changing anything, ``record(state, call)`` once the guard has allowed the call, and
``refused(state, call)`` when it was the breaker that denied it. The guard evaluates
them in order; the first denial wins and then no breaker records the call.
"""

from __future__ import annotations

from typing import Protocol

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState
from .cap import CallCap
from .duplicate import WindowBreaker
from .repeat import RepeatBreaker

__all__ = ["Breaker", "CallCap", "RepeatBreaker", "WindowBreaker"]


class Breaker(Protocol):
    kind: Kind

    def check(self, state: AgentState, call: CallKey) -> Denial | None: ...

    def record(self, state: AgentState, call: CallKey) -> None: ...

    def refused(self, state: AgentState, call: CallKey) -> None: ...
